#!/bin/sh
# The OpenCL layer's cost on each kind of call (docs/benchmarks.md, "The
# OpenCL layer"): builds bench/bench_cl.c against ocl-icd, as a program and
# as a library for bench/bench_cl_py.py, then counts each kind under
# callgrind with the layer preloaded in five settings, from C and from
# CPython holding the GIL. Prints one table: Ir per call, direct and over it.
# Usage: bench/bench_cl.sh [BUILD_DIR]   (default: build; the layer must be built)
#   PYTHON=python3.12 ...   the interpreter of the Python rows (default /usr/bin/python3)
#   TIME=1 ...              also times each kind in each setting (ns, noisy)
set -eu
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
layer=$build/lib/libcallguard_cl.so
[ -f "$layer" ] || layer=$build/src/layers/cl/libcallguard_cl.so
[ -f "$layer" ] || { echo "bench_cl.sh: $layer not built" >&2; exit 1; }
layer=$(cd "$(dirname "$layer")" && pwd)/$(basename "$layer")
command -v valgrind >/dev/null 2>&1 || { echo "bench_cl.sh: needs valgrind (callgrind)" >&2; exit 1; }
py=$(${PYTHON:-/usr/bin/python3} -c 'import sys; print(sys.executable)')
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
export POCL_CACHE_DIR="$dir/pocl" POCL_MAX_PTHREAD_COUNT=1
for v in $(env | sed -n 's/^\(CALLGUARD_[A-Z0-9_]*\)=.*/\1/p'); do unset "$v"; done

${CC:-cc} -O2 -std=gnu11 -Wall -Wextra -Werror "$here/bench_cl.c" -lOpenCL -ldl -o "$dir/bench_cl"
${CC:-cc} -O2 -std=gnu11 -Wall -Wextra -Werror -shared -fPIC -DBENCH_CL_LIB "$here/bench_cl.c" -lOpenCL -ldl \
  -o "$dir/libbench_cl.so"
# The state kind's code, and the serialized kind's lock (bench_cl.c).
cat >"$dir/policy.ini" <<'EOF'
[clGetPlatformInfo]
states = CL_INVALID_VALUE

[clGetContextInfo]
serialize = bench
EOF
mkdir "$dir/stats"

model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
echo "CPU: $model ($(nproc) cores); $(valgrind --version); $("$py" -V) ($py)"
echo "layer: $layer (preloaded; $(git -C "$here" log -1 --format='bench at %h' 2>/dev/null || echo 'bench'))"

# The settings, as `callguard run` would set the environment up.
settings="off hangoff default hangms"
setting_env() { # setting: the variables it sets (besides the policy file)
  case $1 in
  off) echo ;;
  hangoff) echo "CALLGUARD_STATS_DIR=$dir/stats CALLGUARD_HANG_MS=off" ;;
  default) echo "CALLGUARD_STATS_DIR=$dir/stats" ;;
  hangms) echo "CALLGUARD_STATS_DIR=$dir/stats CALLGUARD_HANG_MS=1000" ;;
  esac
}

# count SETTING ROW PROGRAM...: appends "ROW_KIND SETTING DIRECT GUARDED" per kind to $dir/ir.txt.
count() {
  s=$1 row=$2
  shift 2
  rm -f "$dir"/cg.out*
  # shellcheck disable=SC2046 # the setting's words are separate variables
  env CALLGUARD_POLICY="$dir/policy.ini" $(setting_env "$s") LD_PRELOAD="$layer" \
    valgrind --tool=callgrind --collect-atstart=no --callgrind-out-file="$dir/cg.out" "$@" \
    >"$dir/valgrind.log" 2>&1 || { cat "$dir/valgrind.log" >&2; exit 1; }
  for f in "$dir"/cg.out.*; do
    awk '/^desc: Trigger: Client Request: / { name = $5 }
         /^(totals|summary): / { ir = $2 }
         END { if (name != "") print name, ir }' "$f"
  done | awk -v s="$s" -v row="$row" '{ split($1, w, "_"); ir[w[1], w[2]] = $2; kinds[w[2]] = 1 }
    END { for (k in kinds) print row "_" k, s, ir["direct", k] / 100000, ir["guarded", k] / 100000 }' \
    >>"$dir/ir.txt"
}

for s in $settings; do
  count "$s" c "$dir/bench_cl" --count
  count "$s" py "$py" "$here/bench_cl_py.py" "$dir/libbench_cl.so" --count info,finish
done

# The table: one row per kind, the direct call's Ir, then what each setting adds.
awk -v settings="$settings" '
  { direct[$1] = $3; add[$1, $2] = $4 - $3 }
  END {
    n = split(settings, s, " ")
    split("c_info c_state c_error c_finish c_serial py_info py_finish", rows, " ")
    split("counted call from C|a state (site first state) from C|an error from C|" \
          "blocking site (clFinish, empty queue)|serialized (a domain lock)|" \
          "counted call from Python, GIL held|blocking site from Python, GIL held", what, "|")
    printf "\n%-38s %7s | %9s %10s %10s %10s\n", "Ir per call (+ over direct)", "direct", "stats off",
           "hang off", "default", "--hang-ms"
    for (r = 1; r <= 7; r++) {
      printf "%-38s %7.2f |", what[r], direct[rows[r]]
      for (i = 1; i <= n; i++) printf " %+9.2f ", add[rows[r], s[i]]
      printf "\n"
    }
    printf "stats off: the layer preloaded, no statistics; hang off: statistics on, CALLGUARD_HANG_MS=off;\n"
    printf "default: statistics on (hang recording at 1 s); --hang-ms: CALLGUARD_HANG_MS=1000\n"
  }' "$dir/ir.txt"

if [ "${TIME:-0}" = 1 ]; then
  for s in $settings; do
    echo
    echo "time, $s:"
    # shellcheck disable=SC2046
    env CALLGUARD_POLICY="$dir/policy.ini" $(setting_env "$s") LD_PRELOAD="$layer" "$dir/bench_cl" | sed 1,2d
  done
fi
