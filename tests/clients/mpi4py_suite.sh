#!/bin/bash
# mpi4py 4.1.2's own test suite (its test/ folder, from PyPI's sdist) with its own runner, two ranks under
# PyPI MPICH 5's Hydra mpiexec, plainly and under `callguard run --api mpi` inside mpiexec: the same verdict.
# Not part of the test suite: each run takes about 4 minutes here (2,127 tests a rank).
#
#   sh scripts/setup-venv.sh                      (build-venv-mpich: mpich 5.0.2 and mpi4py 4.1.2)
#   tests/clients/mpi4py_suite.sh [BUILD_DIR [VENV]]   (defaults: build, build-venv-mpich)
#
# The sdist is fetched with `pip download --no-binary mpi4py` into BUILD_DIR/mpi4py-suite/ once. Prints each
# rank's "Ran N tests" and verdict line for both runs, the names of the tests that failed, and the MPI calls
# the guarded run's reports counted. Exit status: 0 when both runs' verdicts and failed tests are the same,
# 1 when they differ, 2 when something is missing.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../../build}" && pwd) || exit 2
venv=$(cd "${2:-$here/../../build-venv-mpich}" && pwd) || exit 2
cg=$build/bin/callguard
work=$build/mpi4py-suite
[ -x "$cg" ] || { echo "mpi4py_suite: no $cg (build callguard)" >&2; exit 2; }
"$venv/bin/python" -c 'import mpi4py; assert mpi4py.__version__ == "4.1.2"' 2>/dev/null ||
  { echo "mpi4py_suite: no mpi4py 4.1.2 in $venv (scripts/setup-venv.sh)" >&2; exit 2; }
mkdir -p "$work"
if [ ! -f "$work/mpi4py-4.1.2/test/runtests.py" ]; then
  "$venv/bin/python" -m pip download --disable-pip-version-check -q --no-deps --no-binary mpi4py \
    mpi4py==4.1.2 -d "$work" && tar -xzf "$work/mpi4py-4.1.2.tar.gz" -C "$work" ||
    { echo "mpi4py_suite: could not fetch mpi4py 4.1.2's sdist" >&2; exit 2; }
fi

# run NAME [CALLGUARD...]: the suite, two ranks, its output in $work/NAME.out, ended after 15 minutes.
run() {
  local name=$1
  shift
  rm -rf "$work/$name-reports"
  (cd "$work/mpi4py-4.1.2/test" && PATH="$venv/bin:$PATH" timeout -k 10 900 \
    "$venv/bin/mpiexec" -n 2 "$@" "$venv/bin/python" runtests.py --no-builddir >"$work/$name.out" 2>&1)
  echo "$name: exit status $?"
  grep -E '^(Ran [0-9]+ tests|OK|FAILED)' "$work/$name.out" | sed 's/ in [0-9.]*s$//' | sort | uniq -c
}
run plain
run guarded "$cg" run --api mpi --report "$work/guarded-reports/" --
verdict() { grep -E '^(Ran [0-9]+ tests|OK|FAILED|FAIL:|ERROR:)' "$work/$1.out" | sed 's/ in [0-9.]*s$//' | sort; }
echo "failed tests (both ranks):"
grep -E '^(FAIL|ERROR):' "$work/plain.out" | sort | uniq -c
"$venv/bin/python" - "$work/guarded-reports" <<'EOF'
import glob, json, sys
for path in sorted(glob.glob(sys.argv[1] + "/*.json")):
    proc = json.load(open(path))["processes"][0]
    calls = {s["name"]: s["calls"] for s in proc["sites"] if s["calls"]}
    print("guarded rank %s: %d MPI calls counted, of %d functions" % (proc.get("rank"), sum(calls.values()), len(calls)))
EOF
if [ "$(verdict plain)" = "$(verdict guarded)" ]; then
  echo "PASS: the same verdict plainly and under callguard run"
  exit 0
fi
echo "FAIL: the verdicts differ:"
diff <(verdict plain) <(verdict guarded)
exit 1
