#!/bin/bash
# No object of the build tree or of an install carries an empty run path
# entry: the dynamic loader takes "" (a leading, trailing or doubled ':')
# as the current directory, so a program run under callguard from an
# untrusted directory would load libraries planted there (CMake's padding
# for its install-time rewrite looks like "::::" or "$ORIGIN:::").
# usage: runpath_check.sh BUILD_DIR
set -eu
build=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
bad=0 seen=0
check_tree() { # DIR: every ELF object below it
  while IFS= read -r -d '' f; do
    [ "$(head -c 4 "$f" 2>/dev/null | od -An -c | tr -d ' ')" = '177ELF' ] || continue
    seen=$((seen + 1))
    # "Library runpath: [a:b]" / "Library rpath: [a:b]"
    while IFS= read -r path; do
      case ":$path:" in
        *::*) echo "empty run path entry (the current directory) in $f: [$path]"; bad=1 ;;
      esac
    done < <(readelf -d "$f" 2>/dev/null | sed -n 's/.*Library r\(un\)\{0,1\}path: \[\(.*\)\]$/\2/p')
  done < <(find "$1" -type f -not -path '*/CMakeFiles/*' -print0)
}
check_tree "$build/bin"
check_tree "$build/lib"
n_build=$seen
check_tree "$tmp/prefix"
[ "$n_build" -gt 0 ] && [ "$seen" -gt "$n_build" ] || { echo "no ELF objects found ($n_build built, $((seen - n_build)) installed)"; exit 1; }
# The installed libcallguard still finds its neighbours ($ORIGIN-relative).
readelf -d "$tmp/prefix/lib/libcallguard_cl.so" | grep -q 'Library runpath: \[\$ORIGIN/../lib\]' ||
  { echo "installed layer: unexpected run path: $(readelf -d "$tmp/prefix/lib/libcallguard_cl.so" | grep -i path)"; exit 1; }
[ $bad = 0 ] && echo "ok: $seen objects, no empty run path entry"
exit $bad
