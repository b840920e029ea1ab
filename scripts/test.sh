#!/bin/sh
# The test suite: the default build, then ThreadSanitizer (runtime and toy
# API tests), then AddressSanitizer + UBSan (the whole suite), then the
# libFuzzer harnesses of the parsers (tests/fuzz: clang-14, 20 s each).
# Usage: scripts/test.sh [default|tsan|asan|fuzz]...   (all four when none given)
set -eu
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
builds=${*:-default tsan asan fuzz}

run() { # name cmake-args ctest-args   (SRC: the source tree, default .)
  name=$1; shift
  cfg=$1; shift
  echo "== $name build"
  # shellcheck disable=SC2086
  cmake -S "${SRC:-.}" -B "build-test/$name" $cfg >/dev/null
  cmake --build "build-test/$name" -j"$jobs" >/dev/null
  echo "== $name tests"
  # shellcheck disable=SC2086
  ctest --test-dir "build-test/$name" --output-on-failure -j"$jobs" "$@"
}

# Every CPython 3 that pyenv has here also runs tests/python/holds.py (the
# adapter's two ways of asking, 3.6 to the newest); none is fine.
pythons=
for py in "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.*/bin/python3; do
  [ -x "$py" ] && pythons="$pythons${pythons:+;}$py"
done

for b in $builds; do
  case $b in
    default) run default "-DCMAKE_BUILD_TYPE=Release -DCALLGUARD_TEST_PYTHONS=$pythons" ;;
    tsan) run tsan "-DCMAKE_BUILD_TYPE=RelWithDebInfo -DCALLGUARD_SANITIZE=thread" -L core ;;
    asan) run asan "-DCMAKE_BUILD_TYPE=RelWithDebInfo -DCALLGUARD_SANITIZE=address,undefined" ;;
    fuzz) SRC=tests/fuzz run fuzz "-DCMAKE_C_COMPILER=clang-14" ;;
    *) echo "scripts/test.sh: unknown build '$b': expected default, tsan, asan or fuzz" >&2; exit 2 ;;
  esac
done
echo "== all test builds passed: $builds"
