#!/bin/bash
# tests/deps_check.sh BUILD: libcallguard.so and the layers need nothing but glibc (and a
# sanitizer build's own runtime), and export no libinih names, where the build found Debian's
# libinih.a (CMakeLists.txt). Each shared object a preloaded layer brings in is one more that
# the dynamic loader tries for every symbol looked up after start-up (docs/benchmarks.md);
# libinih.so.1 is absent on Ubuntu (the GPU machine); and a program with its own inih must
# not bind to ours, nor ours to its.
set -u
B=$1
fail=0
for f in "$B"/lib/libcallguard.so "$B"/lib/libcallguard_cl.so "$B"/lib/libcallguard_ze.so "$B"/lib/libcallguard_cuda.so; do
    [ -e "$f" ] || { echo "missing: $f"; fail=1; }
done
# Every layer the build made (HIP's where libamdhip64-dev is installed).
for f in "$B"/lib/libcallguard.so "$B"/lib/libcallguard_*.so; do
    [ -e "$f" ] || continue
    extra=$(readelf -d "$f" | awk '/\(NEEDED\)/ { gsub(/[][]/, "", $5); print $5 }' |
        grep -v -E '^(libc\.so\.6|libcallguard\.so\.0|ld-linux-x86-64\.so\.2|libm\.so\.6|lib(a|ub|t)san\.so\.[0-9]+)$')
    [ -z "$extra" ] || { echo "$f needs more than glibc and libcallguard: $extra"; fail=1; }
    ini=$(nm -D --defined-only "$f" | awk '$3 ~ /^ini_/ { print $3 }')
    [ -z "$ini" ] || { echo "$f exports libinih's names: $ini"; fail=1; }
done
[ $fail = 0 ] && echo "ok: libcallguard and the layers need only glibc and export no ini_* name"
exit $fail
