# bench/callgrind_count.sh, sourced by bench/run.sh and bench/bench_threads.sh:
# cg_count DIR PROGRAM [ARGS...] runs PROGRAM ARGS --count under callgrind
# (collection off until the program's client requests turn it on) and
# writes DIR/ir.txt: one line "NAME INSTRUCTIONS" per dump the program made
# (CALLGRIND_DUMP_STATS_AT(NAME)). Returns 1 without valgrind, saying so.
cg_count() {
  _d=$1
  shift
  if ! command -v valgrind >/dev/null 2>&1; then
    echo "(valgrind not found: timing only)" >&2
    return 1
  fi
  rm -f "$_d"/cg.out*
  valgrind --tool=callgrind --collect-atstart=no --callgrind-out-file="$_d/cg.out" "$@" --count \
    >"$_d/valgrind.log" 2>&1 || { cat "$_d/valgrind.log" >&2; return 1; }
  for f in "$_d"/cg.out.*; do
    awk '/^desc: Trigger: Client Request: / { name = $5 }
         /^(totals|summary): / { ir = $2 }
         END { if (name != "") print name, ir }' "$f"
  done >"$_d/ir.txt"
}
