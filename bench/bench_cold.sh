#!/bin/sh
# A guarded call with cold caches (docs/benchmarks.md, "Cold caches"): bench/bench_cold.c walks 1 MiB before
# each call, and callgrind's cache simulation (32 KiB L1, 512 KiB last level, as cachegrind's defaults here:
# deterministic) counts the misses of the calls alone. Prints, per kind of call and setting, the data lines
# missed in the last level (LL) and in L1 (D1) and the instructions (Ir) per call, direct, and what the layer
# adds. Figures only, never a verdict.
# Usage: bench/bench_cold.sh [BUILD_DIR] [CALLS]   (default: build, 2000 calls a kind and side)
#   PYTHON=python3.12 ...   the interpreter of the ctypes row (default /usr/bin/python3)
#   TIME=1 ...              also times each call after a real walk (ns, medians; noisy)
#   ANNOTATE=DIR ...        keeps callgrind's files in DIR, one per SETTING-SIDE_KIND (callgrind_annotate
#                           --auto=yes DIR/counted-guarded_info: the lines that miss; build with -g)
set -eu
build=${1:-build}
calls=${2:-2000}
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$build" && pwd)
command -v valgrind >/dev/null 2>&1 || { echo "bench_cold.sh: needs valgrind (callgrind)" >&2; exit 77; }
cl=$build/lib/libcallguard_cl.so
nccl=$build/lib/libcallguard_nccl.so
standin=$build/tests/nccl/standin
[ -f "$cl" ] || { echo "bench_cold.sh: $cl not built" >&2; exit 1; }
py=$(${PYTHON:-/usr/bin/python3} -c 'import sys; print(sys.executable)')
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
export POCL_CACHE_DIR="$dir/pocl" POCL_MAX_PTHREAD_COUNT=1
for v in $(env | sed -n 's/^\(CALLGUARD_[A-Z0-9_]*\)=.*/\1/p'); do unset "$v"; done

${CC:-cc} -O2 -g -std=gnu11 -Wall -Wextra -Werror "$here/bench_cold.c" -ldl -o "$dir/bench_cold"
${CC:-cc} -O2 -g -std=gnu11 -Wall -Wextra -Werror -shared -fPIC -DBENCH_COLD_LIB "$here/bench_cold.c" \
  -o "$dir/libbench_cold.so"
# The state kind's code, and the serialized kind's lock (bench_cold.c).
cat >"$dir/policy.ini" <<'EOF'
[clGetPlatformInfo]
states = CL_INVALID_VALUE

[clGetContextInfo]
serialize = bench
EOF
mkdir "$dir/stats"

model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
echo "CPU: $model; $(valgrind --version); $("$py" -V); bench at $(git -C "$here" log -1 --format=%h 2>/dev/null || echo '?')"
echo "cache simulation: I1, D1 32 KiB 8-way, LL 512 KiB 8-way, 64-byte lines; a 1 MiB walk before each call"

# The settings: idle (no statistics), counted (statistics on, the default), and with the timeline on
# (--trace, into the statistics directory as `callguard run` writes it): trace without the calls'
# arguments (CALLGUARD_TRACE_ARGS=off: as before they were kept), trace+args with them.
settings=${SETTINGS:-idle counted trace trace+args}
setting_env() {
  case $1 in
  counted) echo "CALLGUARD_STATS_DIR=$dir/stats" ;;
  trace) echo "CALLGUARD_STATS_DIR=$dir/stats CALLGUARD_TRACE=$dir/t.json CALLGUARD_TRACE_ARGS=off" ;;
  trace+args) echo "CALLGUARD_STATS_DIR=$dir/stats CALLGUARD_TRACE=$dir/t.json" ;;
  esac
}

# count SETTING ROW LAYER PROGRAM...: appends "ROW_KIND SETTING SIDE Ir D1 LL" per dump to $dir/m.txt.
count() {
  s=$1 row=$2 layer=$3
  shift 3
  env=$(setting_env "$s")
  rm -f "$dir"/cg.out*
  # shellcheck disable=SC2086 # the setting's words are separate variables
  env CALLGUARD_POLICY="$dir/policy.ini" $env LD_PRELOAD="$layer" LD_LIBRARY_PATH="$standin" \
    valgrind --tool=callgrind --cache-sim=yes --I1=32768,8,64 --D1=32768,8,64 --LL=524288,8,64 \
    --collect-atstart=no --callgrind-out-file="$dir/cg.out" "$@" >"$dir/valgrind.log" 2>&1 ||
    { cat "$dir/valgrind.log" >&2; exit 1; }
  for f in "$dir"/cg.out.*; do
    if [ -n "${ANNOTATE:-}" ]; then # named SETTING-SIDE_KIND
      mkdir -p "$ANNOTATE" && cp "$f" "$ANNOTATE/$s-$(sed -n 's/^desc: Trigger: Client Request: //p' "$f")"
    fi
    awk -v calls="$calls" -v s="$s" -v row="$row" '
      /^desc: Trigger: Client Request: / { name = $5 }
      /^events: / { for (i = 2; i <= NF; i++) ev[$i] = i }
      /^(totals|summary): / { for (i = 2; i <= NF; i++) v[i] = $i }
      END {
        if (name == "") exit
        split(name, w, "_")
        printf "%s_%s %s %s %.2f %.2f %.2f\n", row, w[2], s, w[1], v[ev["Ir"]] / calls,
               (v[ev["D1mr"]] + v[ev["D1mw"]]) / calls, (v[ev["DLmr"]] + v[ev["DLmw"]]) / calls
      }' "$f"
  done >>"$dir/m.txt"
}

kinds=info,state,finish,serial
[ -f "$nccl" ] && [ -f "$standin/libnccl.so.2" ] && nk=allreduce || nk=
for s in $settings; do
  count "$s" c "$cl" "$dir/bench_cold" "$kinds" "$calls"
  [ -n "$nk" ] && count "$s" c "$nccl" "$dir/bench_cold" "$nk" "$calls"
  count "$s" c "$cl" "$py" "$here/bench_cold_py.py" "$dir/libbench_cold.so" "$calls"
done

# The table: per kind, the direct call's figures, then what each setting adds.
awk '
  { key = $1 SUBSEP $2 SUBSEP $3; ir[key] = $4; d1[key] = $5; ll[key] = $6; seen[$1] = 1 }
  END {
    split("c_info c_state c_finish c_serial c_allreduce c_py", rows, " ")
    split("counted call (clGetDeviceInfo)|a state (site first state)|blocking site (clFinish)|" \
          "serialized (a domain lock)|NCCL collective, its row (ncclAllReduce)|from CPython (ctypes.CDLL)", what, "|")
    ns = split(settings, set, " ")
    printf "\n%-42s %21s", "per call: LL data misses, D1, Ir", "direct"
    for (j = 1; j <= ns; j++) printf " | %-21s", set[j] ": + over direct"
    printf "\n%-42s %6s %6s %7s", "", "LL", "D1", "Ir"
    for (j = 1; j <= ns; j++) printf " | %6s %6s %7s", "LL", "D1", "Ir"
    printf "\n"
    for (r = 1; r <= 6; r++) {
      k = rows[r]
      if (!(k in seen)) continue
      b = k SUBSEP set[1] SUBSEP "direct"
      printf "%-42s %6.2f %6.2f %7.1f", what[r], ll[b], d1[b], ir[b]
      for (j = 1; j <= ns; j++) {
        s = set[j]
        g = k SUBSEP s SUBSEP "guarded"; d = k SUBSEP s SUBSEP "direct"
        printf " | %+6.2f %+6.2f %+7.1f", ll[g] - ll[d], d1[g] - d1[d], ir[g] - ir[d]
      }
      printf "\n"
    }
    printf "idle: the layer preloaded, no statistics; counted: statistics on (CALLGUARD_STATS_DIR, the default\n"
    printf "hang recording); trace: --trace (CALLGUARD_TRACE_ARGS=off, the events as before arguments were\n"
    printf "kept); trace+args: --trace, each event with its arguments and result.\n"
    printf "Each + is guarded minus direct of the same process (LL, D1: data lines missed).\n"
  }' settings="$settings" "$dir/m.txt"

if [ "${TIME:-0}" = 1 ]; then
  for s in idle counted; do
    env=
    [ "$s" = counted ] && env="CALLGUARD_STATS_DIR=$dir/stats"
    echo
    echo "time, $s (a real 1 MiB walk before each call; the machine's caches, not the simulation's):"
    # shellcheck disable=SC2086
    env CALLGUARD_POLICY="$dir/policy.ini" $env LD_PRELOAD="$cl" "$dir/bench_cold" --time "$kinds" 20001
    # shellcheck disable=SC2086
    [ -n "$nk" ] && env CALLGUARD_POLICY="$dir/policy.ini" $env LD_PRELOAD="$nccl" LD_LIBRARY_PATH="$standin" \
      "$dir/bench_cold" --time "$nk" 20001
  done
fi
