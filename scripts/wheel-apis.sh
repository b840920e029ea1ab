# shellcheck shell=sh
# What scripts/build-wheel.sh learns from the source tree about its APIs, so
# that a new API needs no edit there (sourced; POSIX sh). An API is a layer
# the tree builds, src/layers/NAME with a CMakeLists.txt (as the top-level
# CMakeLists.txt decides), described by apis/NAME.ini's [api] section.

# FILE KEY: KEY's value in FILE's [api] section, as written (spaces trimmed).
wheel_api_value() {
    awk -v key="$2" '/^\[/ { in_api = ($0 == "[api]") }
        in_api && $0 ~ "^" key "[ \t]*=" { sub(/^[^=]*=[ \t]*/, ""); sub(/[ \t]+$/, ""); print; exit }' "$1"
}

# ROOT: the APIs whose layers ROOT builds, one a line; fails naming a layer without its apis/NAME.ini.
wheel_api_names() {
    for dir in "$1"/src/layers/*/; do
        [ -f "$dir/CMakeLists.txt" ] || continue
        name=$(basename "$dir")
        [ -f "$1/apis/$name.ini" ] || { echo "src/layers/$name is built but there is no apis/$name.ini" >&2; return 1; }
        echo "$name"
    done
}

# ROOT NAME: the API's headers, as include paths, one a line: its header, then its other headers, which the
# generator reads beside the header when they are named without a folder.
wheel_api_headers() {
    ini=$1/apis/$2.ini
    header=$(wheel_api_value "$ini" header)
    [ -n "$header" ] || { echo "apis/$2.ini: no header = in [api]" >&2; return 1; }
    echo "$header"
    for h in $(wheel_api_value "$ini" headers | tr ',' ' '); do
        case $h in
            */*) echo "$h" ;;
            *) case $header in */*) echo "${header%/*}/$h" ;; *) echo "$h" ;; esac ;;
        esac
    done
}

# ROOT NAME: the folders of the API's own headers, apart from the shared ones: the -I folders of its
# generator line in tests/gen/layers.txt (Open MPI's /usr/lib/<arch>/openmpi/include). The layer's build
# finds its header there itself, and such a folder holds no C library headers.
wheel_api_include_dirs() {
    awk -v ini="apis/$2.ini" '$1 == ini { for (i = 2; i < NF; i++) if ($i == "-I") print $(i + 1) }' \
        "$1/tests/gen/layers.txt"
}

# ROOT NAME: the API's files in an install tree, one a line: its layer and policy, a shim for each soname of
# its library, and the placeholder the shims need (CMakeLists.txt, callguard_add_shim); no shim and no
# placeholder for a layer built with NO_SHIM and no callguard_add_shim of its own (MPI's).
wheel_api_files() {
    echo "lib/libcallguard_$2.so"
    echo "share/callguard/apis/$2.ini"
    cm=$1/src/layers/$2/CMakeLists.txt
    if grep -q NO_SHIM "$cm" && ! grep -q callguard_add_shim "$cm"; then return 0; fi
    echo "lib/callguard/shims/placeholder/libcallguard-real-$2.so"
    for soname in $(wheel_api_value "$1/apis/$2.ini" library | tr ',' ' '); do
        echo "lib/callguard/shims/$soname"
    done
}
