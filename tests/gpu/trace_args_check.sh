#!/bin/bash
# tests/gpu/trace_args_check.sh OUTDIR [BUILD]: issue 54 on the GPU machine. PyTorch's matrix loop
# (torch_job.py) and a Triton kernel (triton_job.py) under `callguard run --api cuda --trace`, then the traces
# read whole by Python's json: every call the report counted is an event (nothing dropped), each event of a
# guarded CUDA call carries its result by name, cuLaunchKernel's events name their arguments as cuda.h does
# (f, gridDimX, ..., hStream), and the program's output is the same as without callguard. Writes
# OUTDIR/trace-args.txt; exit 0 when every check passed.
set -u
[ $# -ge 1 ] || { echo "usage: tests/gpu/trace_args_check.sh OUTDIR [BUILD]" >&2; exit 2; }
mkdir -p "$1" || exit 2
OUT=$(cd "$1" && pwd)
cd "$(dirname "$0")/../.." || exit 2
. tests/gpu/gpu_env.sh
S=$OUT/trace-args.txt
export TRITON_CACHE_DIR=$OUT/triton-cache
: >"$S"
fail=0
for job in torch_job triton_job; do
    plain=$("$PY" "$SRC/tests/gpu/$job.py" 2>&1 | tail -1)
    t0=$(date +%s.%N)
    guarded=$("$CG" run --api cuda --report "$OUT/$job.json" --trace "$OUT/$job.trace.json" -- "$PY" \
        "$SRC/tests/gpu/$job.py" 2>"$OUT/$job.err" | tail -1)
    rc=$?
    t1=$(date +%s.%N)
    echo "== $job: exit $rc, $(echo "$t1 - $t0" | bc) s; plain '$plain', traced '$guarded'" >>"$S"
    [ "$plain" = "$guarded" ] || { echo "FAIL: $job's output differs under --trace" >>"$S"; fail=1; }
    "$PY" - "$OUT/$job.trace.json" "$OUT/$job.json" >>"$S" 2>&1 <<'PYEOF' || fail=1
import collections, json, sys
trace = json.load(open(sys.argv[1]))
report = json.load(open(sys.argv[2]))
events = [e for e in trace["traceEvents"] if e.get("ph") == "X" and e.get("cat", "").startswith("call")]
by_name = collections.Counter(e["name"] for e in events)
counted = collections.Counter()
for p in report["processes"]:
    for s in p["sites"]:
        counted[s["name"]] += s["calls"]
dropped = trace.get("otherData", {}).get("dropped", 0)
missing = {n: (counted[n], by_name[n]) for n in counted if by_name[n] < counted[n]}
no_result = [e for e in events if "result" not in e["args"]]
launch = [e for e in events if e["name"] == "cuLaunchKernel"]
want = {"f", "gridDimX", "gridDimY", "gridDimZ", "blockDimX", "blockDimY", "blockDimZ", "sharedMemBytes", "hStream"}
named = [e for e in launch if want <= set(e["args"])]
print("events %d, dropped %s, entry points %d; cuLaunchKernel %d (%d with its arguments named); results %s"
      % (len(events), dropped, len(by_name), len(launch), len(named),
         dict(collections.Counter(e["args"].get("result") for e in events).most_common(4))))
if launch: print("an event:", json.dumps(launch[len(launch) // 2])[:400])
ok = not dropped and not missing and not no_result and (not launch or len(named) == len(launch))
if missing: print("FAIL: fewer events than counted calls:", dict(list(missing.items())[:8]))
if no_result: print("FAIL: %d events without a result, as" % len(no_result), json.dumps(no_result[0])[:300])
if launch and len(named) != len(launch): print("FAIL: cuLaunchKernel events without their arguments named")
print("PASS" if ok else "FAIL")
sys.exit(0 if ok else 1)
PYEOF
done
cat "$S"
exit $fail
