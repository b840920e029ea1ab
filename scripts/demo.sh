#!/bin/sh
# callguard's main job on a real stack, from a fresh checkout: build, then
# run the demo. Until the OpenCL layer lands this is the toy API: eight
# threads compiling at once crash its compiler; serialized, they finish,
# and the report shows every call.
set -eu
cd "$(dirname "$0")/.."
cmake -S . -B build >/dev/null
cmake --build build -j"$(nproc 2>/dev/null || echo 2)" >/dev/null
echo "== plain: the toy compiler aborts when two threads are inside it"
if (ulimit -c 0; ./build/bin/toy_race); then echo "(it did not crash this time)"; else echo "(exit status $?)"; fi
echo "== CALLGUARD_SERIALIZE=toyCompile CALLGUARD_REPORT=- ./build/bin/toy_race"
CALLGUARD_SERIALIZE=toyCompile CALLGUARD_REPORT=- ./build/bin/toy_race
