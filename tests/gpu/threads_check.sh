#!/bin/bash
# tests/gpu/threads_check.sh OUTDIR [BUILD]: CUDA's graph thread rules on a real GPU (issue 13). Runs
# tests/gpu/graph_job.py (two threads, each with its own CUDA graph) plain, then under
# `callguard run --check-threads --report`: the same checksums, the graph calls counted, no violation.
# Then the same with --serialize-handles; then both threads replaying one graph (--shared), which must be
# reported (CALLGUARD_CHECK_HOLD_US holds each checked call open so the overlap shows). Prints PASS/FAIL
# lines; exits 1 on a failure.
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
got=$(CALLGUARD_CHECK_HOLD_US=200 timeout 120 "$B/bin/callguard" run --check-threads --report "$OUT/graph-shared.json" -- \
    "$PY" tests/gpu/graph_job.py --shared 2>"$OUT/graph-shared.err")
rc=$?
"$B/bin/callguard" report "$OUT/graph-shared.json" >"$OUT/graph-shared.txt" 2>&1
n=$("$PY" -c 'import json,sys; r=json.load(open(sys.argv[1])); print(sum(v.get("count",1) for p in r["processes"] for v in p.get("thread_violations",[])))' "$OUT/graph-shared.json" 2>/dev/null)
if [ $rc -eq 0 ] && [ "${n:-0}" -gt 0 ]; then
    echo "PASS: one graph replayed by two threads: $n violations reported; $(grep -m2 -i cuGraphLaunch "$OUT/graph-shared.txt" | tr -s ' ' | head -c 300)"
else
    echo "FAIL: one graph replayed by two threads: rc $rc, violations ${n:-none}; $(tail -3 "$OUT/graph-shared.err")"; fail=1
fi
exit $fail
