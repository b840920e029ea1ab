#!/bin/bash
# Every policy file an install ships in share/callguard/apis/ belongs to a
# layer the install has, and a run with CALLGUARD_POLICY naming it works
# (a policy whose layer is missing, such as the toy API's, stops every run).
# usage: install_policies.sh BUILD_DIR
set -eu
build=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/p" >/dev/null
n=0
for f in "$tmp"/p/share/callguard/apis/*.ini; do
  api=$(basename "$f" .ini)
  [ -e "$tmp/p/lib/libcallguard_$api.so" ] || { echo "share/callguard/apis/$api.ini is installed without its layer"; exit 1; }
  out=$(CALLGUARD_POLICY=$f "$tmp/p/bin/callguard" run -- /bin/true 2>&1) ||
    { echo "CALLGUARD_POLICY=share/callguard/apis/$api.ini stops a run: $out"; exit 1; }
  n=$((n + 1))
done
[ $n -ge 2 ] || { echo "only $n policy files installed"; exit 1; }
