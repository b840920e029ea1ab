#!/bin/bash
# newer_loader.sh CALLGUARD CLIENT STANDIN: CLIENT dlopens libze_loader.so.1
# under `callguard run --api ze`, with CALLGUARD_ZE_LIBRARY naming STANDIN
# (a stand-in for a loader newer than Debian's). The client checks what each
# name resolves to and does; here: it passed, its header names came from
# callguard's shim, and the report counts its guarded calls.
set -euo pipefail
cg=$1 client=$2 standin=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=$(CALLGUARD_ZE_LIBRARY=$standin "$cg" run --api ze --report "$tmp/report.json" -- "$client") || {
  echo "FAIL: the client exited $?: $out" >&2; exit 1; }
echo "$out"
grep -q '^guarded names from .*/shims/libze_loader.so.1$' <<<"$out" ||
  { echo "FAIL: the header's names do not come from callguard's libze_loader.so.1 shim" >&2; exit 1; }
grep -q '"name": "zeDriverGet", "calls": 2,' "$tmp/report.json" ||
  { echo "FAIL: the report does not count the client's 2 zeDriverGet calls:" >&2; cat "$tmp/report.json" >&2; exit 1; }
for n in zeDeviceGetRootDevice zeInitDrivers zerGetLastErrorDescription zeLoaderInit; do
  if grep -q "\"name\": \"$n\"" "$tmp/report.json"; then
    echo "FAIL: $n, a name the header does not declare, was guarded" >&2; exit 1
  fi
done
echo "PASS"
