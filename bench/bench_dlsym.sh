#!/bin/sh
# bench_dlsym.sh [BUILD_DIR]: what a program's own global look-up, dlsym(RTLD_DEFAULT, NAME), costs under
# `callguard run` (libcallguard's dlsym, src/runtime/dlsym_interpose.c) against plainly (bench_dlsym.c):
# close and cuserid (a layer's prefix, defined by libc), clGetPlatformIDs (a layer's name: before its library
# is loaded a failed look-up, plainly and under callguard; then with libOpenCL.so.1 loaded) and malloc (no
# layer's prefix). The column "layers" has the layers preloaded without libcallguard first: glibc's dlsym
# over the same larger scope, the part of the cost that is the preloading's, not callguard's dlsym (where
# it answers otherwise, it says so). Instructions a look-up (callgrind, 1,000 look-ups), then ns a look-up
# (medians of 5 interleaved runs, each the median of 21 rounds of 100,000), then a second of look-ups of
# close while another thread opens and closes a small library. Figures only (docs/benchmarks.md, "A
# program's own look-ups").
set -eu
build=$(cd "${1:-build}" && pwd)
prog=$build/bin/bench_dlsym
cg=$build/bin/callguard
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
layers=$(ls "$build"/lib/libcallguard_*.so | tr '\n' ':')
ocl=libOpenCL.so.1
rows="close cuserid clGetPlatformIDs malloc clGetPlatformIDs+"
args() { # ROW: bench_dlsym's arguments for it ("+": with libOpenCL.so.1 loaded)
    case $1 in *+) echo "--load $ocl ${1%+}" ;; *) echo "$1" ;; esac
}
setting() { # SETTING COMMAND...: runs it plainly, with the layers preloaded, or under callguard run
    s=$1
    shift
    case $s in
        plain) "$@" ;;
        layers) LD_PRELOAD="$layers" "$@" ;;
        guarded) "$cg" run -- "$@" ;;
    esac
}
uptime
if command -v valgrind >/dev/null 2>&1; then
    printf '%-26s %10s %10s %7s %10s %7s\n' "Ir a look-up" plain layers ratio "callguard" ratio
    for r in $rows; do
        for s in plain layers guarded; do
            # shellcheck disable=SC2046
            setting $s valgrind --tool=callgrind --toggle-collect=bench_dlsym_lookups \
                --callgrind-out-file="$tmp/cg.$s" "$prog" --ir --n 1000 $(args "$r") >/dev/null 2>&1
            awk '/^summary:/ { printf "%d", $2 / 1000 }' "$tmp/cg.$s" >"$tmp/ir.$s"
        done
        p=$(cat "$tmp/ir.plain") l=$(cat "$tmp/ir.layers") g=$(cat "$tmp/ir.guarded")
        printf '%-26s %10s %10s %6sx %10s %6sx\n' "$(echo "$r" | sed "s/+/ (loaded)/")" "$p" "$l" \
            "$(awk "BEGIN{printf \"%.2f\", $l/$p}")" "$g" "$(awk "BEGIN{printf \"%.2f\", $g/$p}")"
    done
else
    echo "(valgrind not found: no instruction counts)"
fi
for i in 1 2 3 4 5; do
    for s in plain layers guarded; do
        for r in $rows; do
            # shellcheck disable=SC2046
            setting $s "$prog" $(args "$r") | sed "s/^[^ ]*/$r/" >>"$tmp/ns.$s"
        done
    done
done
med() { # FILE ROW: the median ns of ROW's lines
    awk -v n="$2" '$1 == n { print $2 }' "$1" | sort -n | sed -n 3p
}
answer() { # FILE ROW
    awk -v n="$2" '$1 == n { print $3; exit }' "$1"
}
printf '%-26s %10s %10s %7s %10s %7s\n' "ns a look-up" plain layers ratio "callguard" ratio
for r in $rows; do
    p=$(med "$tmp/ns.plain" "$r") l=$(med "$tmp/ns.layers" "$r") g=$(med "$tmp/ns.guarded" "$r")
    a=$(answer "$tmp/ns.plain" "$r") b=$(answer "$tmp/ns.layers" "$r") c=$(answer "$tmp/ns.guarded" "$r")
    note=$a
    [ "$b" = "$a" ] || note="$note (layers: $b)"
    [ "$c" = "$a" ] || note="$note (callguard: $c)"
    printf '%-26s %10s %10s %6sx %10s %6sx  %s\n' "$(echo "$r" | sed "s/+/ (loaded)/")" "$p" "$l" \
        "$(awk "BEGIN{printf \"%.2f\", $l/$p}")" "$g" "$(awk "BEGIN{printf \"%.2f\", $g/$p}")" "$note"
done
echo 'int cg_bench_empty;' | cc -shared -fPIC -x c - -o "$tmp/libempty.so"
for s in plain guarded; do
    printf '%-8s ' "$s:"
    setting $s "$prog" --n 1 --beside "$tmp/libempty.so" close | tail -1 | sed "s|$tmp/||"
done
uptime
