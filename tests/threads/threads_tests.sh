#!/bin/bash
# threads_tests.sh CASE (or --list): thread rules (docs/threads.md) under `callguard run`
# on PoCL and on the Level Zero simulator. Paths come from the environment
# tests/threads/CMakeLists.txt sets: CG (the CLI), CLPROG (threads_cl.c),
# ZEPROG (threads_ze.c), ZE_ENABLE_ALT_DRIVERS (the simulator).
# CALLGUARD_CHECK_HOLD_US holds each checked call open for 3 ms, so two
# threads on a 2-core machine shared with others overlap every time.
set -euo pipefail
source "$(dirname "$0")/../cgtest.sh"
cgtest_list '^threads_' "$@"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export POCL_CACHE_DIR=$WORK/pocl-cache POCL_MAX_PTHREAD_COUNT=1
unset CALLGUARD_REPORT CALLGUARD_SERIALIZE CALLGUARD_CHECK CALLGUARD_SERIALIZE_HANDLES CALLGUARD_CHECK_HOLD_US
HOLD=3000

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

# guard NAME API [FLAGS...] -- PROG MODE: the program under callguard run, its
# output in $WORK/NAME.out, its report in $WORK/NAME.json
guard() {
    local name=$1 api=$2
    shift 2
    set +e
    CALLGUARD_CHECK_HOLD_US=$HOLD "$CG" run --api "$api" --report "$WORK/$name.json" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err"
    local rc=$?
    set -e
    cat "$WORK/$name.err" >&2
    [ "$rc" -eq 0 ] || fail "$name: exit status $rc: $*"
}

# plain NAME PROG MODE: the program alone
plain() {
    local name=$1
    shift
    "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" || fail "$name: the program alone failed: $(cat "$WORK/$name.err")"
}

# same_output A B: the lines that do not name threads are the same (the program runs unchanged)
same_output() {
    diff -u <(grep -v '^thread ' "$WORK/$1.out") <(grep -v '^thread ' "$WORK/$2.out") ||
        fail "$2 printed something else than $1"
}

# violations NAME CHECK: python CHECK over `v` (the process's thread_violations),
# `tids` (the program's two threads) and `proc`
violations() {
    /usr/bin/python3 - "$WORK/$1.json" "$WORK/$1.out" "$2" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
tids = [int(l.split()[2]) for l in open(sys.argv[2]) if l.startswith("thread ")]
procs = [p for p in report["processes"] if "thread_violations" in p]
assert len(procs) == 1, "one process with a violations list: %r" % report
proc = procs[0]
v = proc["thread_violations"]
ok = eval(sys.argv[3])
if not ok:
    print("check failed: %s\nthreads %r\nviolations %s" % (sys.argv[3], tids, json.dumps(v, indent=1)), file=sys.stderr)
    sys.exit(1)
PY
}

# A violation naming both threads of the program, each side once.
BOTH='set((x["tid"], x["other_tid"])) == {tuple(tids), tuple(reversed(tids))}.pop() or {x["tid"], x["other_tid"]} == set(tids)'

threads_cl_set_arg_on_one_kernel_reported_with_both_threads() {
    plain alone "$CLPROG" overlap
    guard checked cl --check-threads -- "$CLPROG" overlap
    same_output alone checked
    violations checked "any(x['rule'] == 'overlap' and x['entry_point'] == 'clSetKernelArg' and x['other_entry_point'] == 'clSetKernelArg' and x['access'] == 'writes' and x['other_access'] == 'writes' and x['param'] == 'kernel' and x['count'] >= 1 and x['handle'] != '0x0' and {x['tid'], x['other_tid']} == set(tids) and len(set(tids)) == 2 for x in v) and all(x['rule'] == 'overlap' for x in v)"
}

threads_cl_set_arg_on_distinct_kernels_not_reported() {
    guard checked cl --check-threads -- "$CLPROG" distinct
    violations checked "v == [] and proc['thread_violations_dropped'] == 0 and any(s['name'] == 'clSetKernelArg' and s['calls'] >= 24 for s in proc['sites'])"
}

threads_cl_set_then_launch_sequence_reported() {
    # Per-handle locks make each call exclusive, so only the sequence is left to report.
    guard checked cl --check-threads --serialize-handles -- "$CLPROG" sequence
    violations checked "any(x['rule'] == 'sequence' and x['entry_point'] == 'clEnqueueNDRangeKernel' and x['access'] == 'launches' and x['other_entry_point'] == 'clSetKernelArg' and x['other_access'] == 'sets' and x['set_entry_point'] == 'clSetKernelArg' and {x['tid'], x['other_tid']} == set(tids) for x in v) and not any(x['rule'] == 'overlap' for x in v)"
}

threads_cl_handoff_and_kept_arguments_not_reported() {
    guard checked cl --check-threads -- "$CLPROG" handoff
    violations checked "v == []"
}

threads_cl_serialize_handles_removes_set_arg_overlap() {
    plain alone "$CLPROG" overlap
    guard serialized cl --check-threads --serialize-handles -- "$CLPROG" overlap
    same_output alone serialized
    violations serialized "v == [] and any(s['name'] == 'clSetKernelArg' and s['calls'] >= 24 and s['lock_wait_ns'] > 0 for s in proc['sites'])"
}

threads_cl_handle_hold_removes_sequence_violation() {
    guard held cl --check-threads --serialize-handles -- "$CLPROG" held
    violations held "v == []"
    # Without the per-handle locks the holds alone exclude each other's sequences.
    guard held_only cl --check-threads -- "$CLPROG" held
    violations held_only "v == []"
}

threads_cl_report_text_shows_violations_first_and_report_reads_them_back() {
    guard checked cl --check-threads -- "$CLPROG" overlap
    # Each line whole (COLUMNS): the overlap line is longer than the default 100 columns.
    COLUMNS=1000 "$CG" report "$WORK/checked.json" >"$WORK/table.out" 2>&1 || fail "callguard report: $(cat "$WORK/table.out")"
    cat "$WORK/table.out" >&2
    # The violations come right after the process's line, before the table of entry points.
    first=$(grep -n 'thread-rule violation' "$WORK/table.out" | head -1 | cut -d: -f1)
    table=$(grep -n 'entry point' "$WORK/table.out" | head -1 | cut -d: -f1)
    [ -n "$first" ] && [ -n "$table" ] && [ "$first" -lt "$table" ] || fail "violations not shown before the table"
    grep -q 'overlap: cl clSetKernelArg writes kernel (thread [0-9]*) while clSetKernelArg writes kernel (thread [0-9]*) was inside' "$WORK/table.out" ||
        fail "the overlap line names both entry points and threads"
    # Merging two saved reports keeps both processes' violations.
    "$CG" report "$WORK/checked.json" "$WORK/checked.json" >"$WORK/merged.out" 2>&1 || fail "callguard report A B"
    [ "$(grep -c 'thread-rule violations:' "$WORK/merged.out")" -eq 2 ] || fail "merged report: $(cat "$WORK/merged.out")"
    # And `callguard list` shows each entry point's rules.
    "$CG" list cl >"$WORK/list.out"
    grep -q '^clSetKernelArg .* writes=kernel sets=kernel ' "$WORK/list.out" || fail "list: $(grep clSetKernelArg "$WORK/list.out")"
}

threads_ze_append_to_one_command_list_reported() {
    guard checked ze --check-threads -- "$ZEPROG" append
    violations checked "any(x['rule'] == 'overlap' and x['entry_point'] == 'zeCommandListAppendLaunchKernel' and x['other_entry_point'] == 'zeCommandListAppendLaunchKernel' and x['param'] == 'hCommandList' and x['access'] == 'writes' and {x['tid'], x['other_tid']} == set(tids) and len(set(tids)) == 2 for x in v)"
}

threads_ze_violations_survive_an_abort() {
    # The process dies right after: its violations are in its statistics file as they happen.
    ulimit -c 0
    set +e
    CALLGUARD_CHECK_HOLD_US=$HOLD "$CG" run --api ze --check-threads --report "$WORK/died.json" -- "$ZEPROG" append-abort \
        >"$WORK/died.out" 2>"$WORK/died.err"
    rc=$?
    set -e
    [ "$rc" -eq 134 ] || fail "expected the program's SIGABRT (134), got $rc: $(cat "$WORK/died.err")"
    violations died "proc['exit']['state'] == 'signaled' and any(x['rule'] == 'overlap' and x['entry_point'] == 'zeCommandListAppendLaunchKernel' and {x['tid'], x['other_tid']} == set(tids) for x in v)"
}

threads_ze_append_to_own_command_lists_not_reported() {
    guard checked ze --check-threads -- "$ZEPROG" own
    violations checked "v == [] and any(s['name'] == 'zeCommandListAppendLaunchKernel' and s['calls'] >= 12 for s in proc['sites'])"
}

threads_ze_set_then_launch_sequence_reported() {
    guard checked ze --check-threads --serialize-handles -- "$ZEPROG" sequence
    violations checked "any(x['rule'] == 'sequence' and x['entry_point'] == 'zeCommandListAppendLaunchKernel' and x['param'] == 'hKernel' and x['other_entry_point'] == 'zeKernelSetArgumentValue' and {x['tid'], x['other_tid']} == set(tids) for x in v) and not any(x['rule'] == 'overlap' for x in v)"
}

threads_ze_kernel_handle_reused_after_destroy_not_reported() {
    # AddressSanitizer keeps freed memory out of use for a while (its quarantine): none, so the value comes back.
    export ASAN_OPTIONS="${ASAN_OPTIONS:-}:quarantine_size_mb=0:thread_local_quarantine_size_kb=0"
    guard checked ze --check-threads -- "$ZEPROG" reuse
    grep -q '^reused 1$' "$WORK/checked.out" || fail "the simulator gave the new kernel another handle value: the case tests nothing ($(cat "$WORK/checked.out"))"
    violations checked "v == []"
}

threads_ze_serialize_handles_removes_append_overlap() {
    guard serialized ze --check-threads --serialize-handles -- "$ZEPROG" append
    violations serialized "v == [] and any(s['name'] == 'zeCommandListAppendLaunchKernel' and s['calls'] >= 12 for s in proc['sites'])"
}

threads_ze_serialize_handles_wait_in_driver_never_holds_up_another_list() {
    # Two lists that shared a lock stripe before; the wait on the first needs the signal appended to the second.
    guard serialized ze --serialize-handles -- "$ZEPROG" wait-signal
    grep -q '^collided after [0-9]* lists$' "$WORK/serialized.out" || fail "no colliding pair: $(cat "$WORK/serialized.out")"
    violations serialized "any(s['name'] == 'zeCommandListAppendSignalEvent' and s['calls'] == 1 for s in proc['sites'])"
    # The same two lists in one handle-scoped domain: a lock for each list.
    guard domain ze --serialize zeCommandListAppendWaitOnEvents=lists:handle,zeCommandListAppendSignalEvent=lists:handle -- "$ZEPROG" wait-signal
}

threads_check_values_are_validated() {
    for bad in "CALLGUARD_CHECK=thread" "CALLGUARD_SERIALIZE_HANDLES=maybe" "CALLGUARD_CHECK_HOLD_US=-1" "CALLGUARD_CHECK_HOLD_US=2000000"; do
        set +e
        env "$bad" "$CG" run -- /bin/true >"$WORK/bad.out" 2>&1
        rc=$?
        set -e
        value=${bad#*=}
        [ "$rc" -eq 2 ] || fail "$bad: exit $rc, expected 2: $(cat "$WORK/bad.out")"
        grep -q -- "'$value': expected" "$WORK/bad.out" || fail "$bad: the message names the value and what is accepted: $(cat "$WORK/bad.out")"
    done
    # The help is read whole: grep -q would close the pipe early, and under
    # pipefail the help's SIGPIPE would fail the check.
    local help
    help=$("$CG" run --help)
    grep -q -- '--check-threads' <<<"$help" || fail "run --help lists --check-threads"
    grep -q -- '--serialize-handles' <<<"$help" || fail "run --help lists --serialize-handles"
}

cgtest_run "$1"
