#!/bin/sh
# How soon a stuck job is named and ended (issue 49): RUNS times `callguard run --report DIR/ --stuck 4s
# --on-stuck abort -- mpirun -n 3 python3 JOB` with rank 2 in an MPI_Recv nobody matches and ranks 0-1 in
# MPI_Barrier; per run the report's own figures: said_late_ms (from the oldest call passing AFTER to the view
# said: the look every 250 ms, then the files read) and ended_ms (from SIGTERM to the whole tree's end), and
# the wall time of the run. Not a test: prints the figures (docs/benchmarks.md, "A stuck job").
# Needs Debian's Open MPI and python3-mpi4py. Usage: bench/bench_stuck.sh [BUILD_DIR] [RUNS]
set -eu
build=${1:-build}
runs=${2:-5}
cli=$(cd "$build" && pwd)/bin/callguard
tmp=$(mktemp -d /tmp/cgstuck-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/job.py" <<'PY'
from mpi4py import MPI
comm = MPI.COMM_WORLD
if comm.Get_rank() == 2:
    comm.Recv(bytearray(8), source=0, tag=7)  # nobody sends
comm.Barrier()
PY
i=1
while [ "$i" -le "$runs" ]; do
    start=$(date +%s%N)
    rc=0
    timeout 60 "$cli" run --api mpi --report "$tmp/r$i/" --stuck 4s --on-stuck abort -- \
        mpirun --allow-run-as-root --oversubscribe -n 3 /usr/bin/python3 "$tmp/job.py" >/dev/null 2>&1 || rc=$?
    end=$(date +%s%N)
    python3 - "$tmp/r$i" "$rc" "$start" "$end" <<'PY'
import glob, json, sys
folder, rc, start, end = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
s = json.load(open(glob.glob(folder + "/*.json")[0]))["stuck"]
print("exit %s  wall %.2f s  said_late_ms %d  ended_ms %d" % (rc, (end - start) / 1e9, s["said_late_ms"],
                                                              s["ended_ms"]))
PY
    i=$((i + 1))
done
