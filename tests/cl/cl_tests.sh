#!/bin/bash
# cl_tests.sh CASE (or --list): the OpenCL layer against PoCL through ocl-icd. Paths come
# from the environment CMake sets (tests/cl/CMakeLists.txt):
#   LAYER     libcallguard_cl.so          SPY     the test's interposer below the layer
#   PLAIN     cl_program linked to ocl-icd LINKED  cl_program linked to the layer instead
#   NOLIB     cl_program linked to a layer that knows no library path
#   ICD       ocl-icd's libOpenCL.so.1    PYSCRIPT cl_pyopencl.py
#   PRELOAD_FIRST  (sanitizer builds) the sanitizer runtime, preloaded before the layer
# Every case runs with its own POCL_CACHE_DIR.
set -euo pipefail
source "$(dirname "$0")/../cgtest.sh"
cgtest_list '^cl_' "$@"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export POCL_CACHE_DIR=$WORK/pocl-cache POCL_MAX_PTHREAD_COUNT=1
# PyOpenCL's own program cache (~/.cache/pyopencl) is shared by every process
# of the user and guarded by a lock file it waits on forever when stale: off,
# so each run builds from source through clBuildProgram.
export PYOPENCL_NO_CACHE=1
unset CALLGUARD_REPORT CALLGUARD_SERIALIZE CALLGUARD_CL_LIBRARY
PRE=${PRELOAD_FIRST:+$PRELOAD_FIRST:}
# With the sanitizer runtime preloaded, PoCL's linker child is sanitized too
# and LeakSanitizer fails it on its own leaks: no leak checks in preloaded runs
# (the linked runs keep them).
PRE_ENV=()
[ -z "$PRE" ] || PRE_ENV=(ASAN_OPTIONS=detect_leaks=0)

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

# run NAME CMD...: CMD's stdout in $WORK/NAME.out, stderr in $WORK/NAME.err (also shown)
run() {
    local name=$1
    shift
    set +e
    "$@" >"$WORK/$name.out" 2>"$WORK/$name.err"
    local rc=$?
    set -e
    cat "$WORK/$name.err" >&2
    [ "$rc" -eq 0 ] || fail "$name: exit status $rc: $*"
}

same() { # A B: the two runs printed the same
    diff -u "$WORK/$1.out" "$WORK/$2.out" || fail "$2 printed something else than $1"
}

# counts_match REPORT COUNTS: every entry point the program called, as many
# times as it called it, and nothing else
counts_match() {
    /usr/bin/python3 - "$1" "$2" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
want = {}
for line in open(sys.argv[2]):
    name, n = line.split()
    want[name] = int(n)
got = {}
for proc in report["processes"]:
    for s in proc["sites"]:
        if s["api"] == "cl":
            got[s["name"]] = got.get(s["name"], 0) + s["calls"]
if got != want:
    for k in sorted(set(got) | set(want)):
        if got.get(k) != want.get(k):
            print("%s: program made %s calls, report counts %s" % (k, want.get(k, 0), got.get(k, 0)), file=sys.stderr)
    sys.exit(1)
print("counts match: %d entry points, %d calls" % (len(want), sum(want.values())))
PY
}

cl_layer_exports_every_loader_name() {
    names() { nm -D --defined-only "$1" | awk '$2 == "T" && $3 ~ /^cl/ { sub(/@.*/, "", $3); print $3 }' | sort; }
    names "$ICD" >"$WORK/icd"
    names "$LAYER" >"$WORK/layer"
    [ "$(wc -l <"$WORK/icd")" -ge 100 ] || fail "too few names read from $ICD"
    diff -u "$WORK/icd" "$WORK/layer" || fail "the layer does not export exactly what libOpenCL.so.1 exports"
    ! nm -D --defined-only "$LAYER" | awk '$2 == "T"' | grep -v " cl" || fail "the layer exports names beside cl*"
}

cl_program_same_plain_preloaded_linked() {
    run plain "$PLAIN" run
    grep -q "callbacks: build=1 event=2" "$WORK/plain.out" || fail "plain run: $(cat "$WORK/plain.out")"
    run preloaded env "${PRE_ENV[@]}" LD_PRELOAD="$PRE$LAYER" "$PLAIN" run
    same plain preloaded
    run linked "$LINKED" run
    same plain linked
    ! readelf -d "$LINKED" | grep -q "libOpenCL" || fail "the linked program needs libOpenCL.so.1"
}

cl_counts_every_call_exactly_preloaded() {
    run preloaded env "${PRE_ENV[@]}" LD_PRELOAD="$PRE$LAYER" CALLGUARD_REPORT="$WORK/report.json" "$PLAIN" run "$WORK/counts"
    counts_match "$WORK/report.json" "$WORK/counts"
}

cl_counts_every_call_exactly_linked() {
    run linked env CALLGUARD_REPORT="$WORK/report.json" "$LINKED" run "$WORK/counts"
    counts_match "$WORK/report.json" "$WORK/counts"
}

cl_callbacks_calling_opencl_do_not_deadlock() {
    # The build notify and the event callbacks call OpenCL entry points that
    # share one domain with the calls they run under (when the driver runs
    # them on the calling thread, inside the guarded call). No `timeout`
    # wrapper: it would write its own (empty) report over the program's;
    # cl_program's alarm() ends a deadlock.
    local ser=clBuildProgram=cb,clGetProgramBuildInfo=cb,clSetEventCallback=cb,clGetEventInfo=cb,clSetUserEventStatus=cb
    run plain "$PLAIN" run
    run preloaded env "${PRE_ENV[@]}" LD_PRELOAD="$PRE$LAYER" CALLGUARD_SERIALIZE=$ser CALLGUARD_REPORT="$WORK/report.json" \
        "$PLAIN" run "$WORK/counts"
    same plain preloaded
    run linked env CALLGUARD_SERIALIZE=$ser "$LINKED" run
    same plain linked
    counts_match "$WORK/report.json" "$WORK/counts"
    # PoCL runs the build notify inside clBuildProgram, and a user event's
    # callback inside clSetUserEventStatus: the re-entry really happened.
    /usr/bin/python3 -c '
import json, sys
nested = {s["name"]: s["nested"] for p in json.load(open(sys.argv[1]))["processes"] for s in p["sites"]}
assert nested.get("clGetProgramBuildInfo") == 1 and nested.get("clGetEventInfo", 0) >= 1, nested
' "$WORK/report.json" || fail "no callback called OpenCL from inside a guarded call"
}

race_max() { sed -n 's/.*max_inside=\([0-9]*\).*/\1/p' "$WORK/$1.out"; }

cl_serialized_build_has_one_thread_inside() {
    run race env "${PRE_ENV[@]}" LD_PRELOAD="$PRE$LAYER:$SPY" CALLGUARD_SERIALIZE=clBuildProgram "$PLAIN" race 8
    cat "$WORK/race.out"
    grep -q "builds=8 failed=0" "$WORK/race.out" || fail "not 8 successful builds"
    [ "$(race_max race)" -eq 1 ] || fail "serialized, yet $(race_max race) threads were inside clBuildProgram at once"
}

cl_unserialized_build_has_threads_overlap() {
    run race env "${PRE_ENV[@]}" LD_PRELOAD="$PRE$LAYER:$SPY" "$PLAIN" race 8
    cat "$WORK/race.out"
    grep -q "builds=8 failed=0" "$WORK/race.out" || fail "not 8 successful builds"
    [ "$(race_max race)" -gt 1 ] || fail "not serialized, yet only one thread was ever inside clBuildProgram"
}

cl_library_variable_finds_real_library() {
    run plain "$PLAIN" run
    run nolib env CALLGUARD_CL_LIBRARY="$ICD" "$NOLIB" run
    same plain nolib
}

cl_missing_library_returns_error_once() {
    run missing "$NOLIB" missing
    local want="clGetPlatformIDs=-5,-5 clCreateContext=NULL,-5 clGetExtensionFunctionAddress=NULL clGetGLContextInfoKHR=-5"
    [ "$(cat "$WORK/missing.out")" = "$want" ] || fail "printed '$(cat "$WORK/missing.out")', expected '$want'"
    [ "$(wc -l <"$WORK/missing.err")" -eq 1 ] || fail "expected one line on stderr"
    grep -q "^callguard: cannot find the real clGetPlatformIDs .*CL_OUT_OF_RESOURCES.*CALLGUARD_CL_LIBRARY" \
        "$WORK/missing.err" || fail "stderr does not say what is missing and what to set"
}

cl_pyopencl_preloaded_same_and_counted() {
    run plain /usr/bin/python3 "$PYSCRIPT"
    grep -q "sum=" "$WORK/plain.out" || fail "the PyOpenCL script printed no result"
    run preloaded env "${PRE_ENV[@]}" LD_PRELOAD="$PRE$LAYER" CALLGUARD_REPORT="$WORK/report.json" /usr/bin/python3 "$PYSCRIPT"
    same plain preloaded
    /usr/bin/python3 - "$WORK/report.json" <<'PY'
import json, sys
calls = {}
for proc in json.load(open(sys.argv[1]))["processes"]:
    for s in proc["sites"]:
        calls[s["name"]] = calls.get(s["name"], 0) + s["calls"]
for name in ("clGetPlatformIDs", "clCreateContext", "clCreateProgramWithSource", "clBuildProgram",
             "clEnqueueNDRangeKernel", "clFinish"):
    if calls.get(name, 0) < 1:
        sys.exit("the layer counted no %s call: %s" % (name, calls))
print("counted:", {k: calls[k] for k in sorted(calls)})
PY
}

cl_pyopencl_preloaded_serialized_build() {
    run plain /usr/bin/python3 "$PYSCRIPT"
    run preloaded env "${PRE_ENV[@]}" LD_PRELOAD="$PRE$LAYER" CALLGUARD_SERIALIZE=clBuildProgram CALLGUARD_REPORT="$WORK/report.json" \
        /usr/bin/python3 "$PYSCRIPT"
    same plain preloaded
    /usr/bin/python3 -c '
import json, sys
rows = [s for p in json.load(open(sys.argv[1]))["processes"] for s in p["sites"] if s["name"] == "clBuildProgram"]
assert rows and rows[0]["policy"]["serialize"] == "clBuildProgram", rows
' "$WORK/report.json"
}

cgtest_run "$1"
