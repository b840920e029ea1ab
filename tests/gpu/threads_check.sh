#!/bin/bash
# tests/gpu/threads_check.sh OUTDIR [BUILD]: CUDA's graph thread rules on a real GPU (issue 13). Runs
# tests/gpu/graph_job.py (two threads, each with its own CUDA graph) plain, then under
# `callguard run --check-threads --report`: the same checksums, the graph calls counted, no violation.
# Then the same with --serialize-handles. Prints PASS/FAIL lines; exits 1 on a failure.
set -u
OUT=$1; mkdir -p "$OUT" || exit 2
cd "$(dirname "$0")/../.."
B=$(cd "${2:-build}" && pwd) || exit 2
PY=${PYTHON:-/opt/torch/.venv/bin/python3}
REAL=${CUDA_REAL:-/usr/local/nvidia/lib64/libcuda.so.1}
export LD_LIBRARY_PATH="$(dirname "$REAL")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}:$B/lib"
fail=0
plain=$(timeout 120 "$PY" tests/gpu/graph_job.py 2>"$OUT/graph-plain.err") || { echo "FAIL: plain run: $(tail -3 "$OUT/graph-plain.err")"; exit 1; }
echo "plain: $plain"
for mode in --check-threads "--check-threads --serialize-handles"; do
    tag=$(echo "$mode" | tr -d ' -')
    got=$(timeout 120 "$B/bin/callguard" run $mode --report "$OUT/graph-$tag.json" -- "$PY" tests/gpu/graph_job.py 2>"$OUT/graph-$tag.err")
    rc=$?
    "$B/bin/callguard" report "$OUT/graph-$tag.json" >"$OUT/graph-$tag.txt" 2>&1
    summary=$("$PY" - "$OUT/graph-$tag.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
procs = r.get("processes", [])
v = sum(len(p.get("thread_violations", [])) for p in procs)
calls = {}
for p in procs:
    for s in p.get("sites", []):
        if s.get("name", "").startswith("cuGraph") or s.get("name", "").startswith("cuStreamBeginCapture"):
            calls[s["name"]] = calls.get(s["name"], 0) + s.get("calls", 0)
print("violations=%d %s" % (v, " ".join("%s=%d" % kv for kv in sorted(calls.items()))))
PY
)
    if [ $rc -eq 0 ] && [ "$got" = "$plain" ] && echo "$summary" | grep -q "violations=0 " && echo "$summary" | grep -q cuGraphLaunch; then
        echo "PASS: $mode: same output; $summary"
    else
        echo "FAIL: $mode: rc $rc, '$got' vs '$plain'; $summary; $(tail -3 "$OUT/graph-$tag.err")"; fail=1
    fi
done
exit $fail
