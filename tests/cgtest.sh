# cgtest.sh: the runner of a bash test script (sourced), as tests/cgtest.c is
# of a C file and tests/cgtest.py of a Python one. A test is a function of
# the script, defined at the start of a line as `NAME() {` and named for the
# behaviour it checks; its helpers are functions too, so the script says
# which names are tests with a pattern. Near its top, before anything that
# needs its arguments:
#     source "$(dirname "$0")/../cgtest.sh"
#     cgtest_list '^(gen|policy)_' "$@"
# and as its last line:
#     cgtest_run "$1"
# `SCRIPT --list` prints the names of its tests, one a line, for
# cg_discover_tests (tests/cgtest.cmake); `SCRIPT TEST ARGS...` runs TEST and
# prints "PASS: TEST".

cgtest_tests() {
    grep -oE '^[A-Za-z_][A-Za-z0-9_]*\(\) \{' "$0" | sed 's/() {$//' | grep -E -- "$CGTEST_PATTERN" || true
}

cgtest_list() {
    CGTEST_PATTERN=$1
    if [ "${2-}" = --list ]; then
        cgtest_tests
        exit 0
    fi
}

cgtest_run() {
    local tests
    tests=$(cgtest_tests)
    if ! grep -qxF -- "${1-}" <<<"$tests"; then
        echo "$0: no test named '${1-}' ($0 --list names them)" >&2
        exit 2
    fi
    "$1"
    echo "PASS: $1"
}
