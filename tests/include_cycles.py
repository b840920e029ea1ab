"""No file under src/ includes itself through others: the test
src_files_include_one_another_in_no_cycle. Run: include_cycles.py [ROOT].

Reads each `#include "NAME"` of every .c and .h file under ROOT/src/ and
follows it as the compiler would: beside the including file first, then in
the folders the build puts on the include path (a folder of src/ holding
NAME, when exactly one does). Any cycle (report.h -> quirks.h -> report.h)
is printed, one line each, and the exit status is 1. A cycle means the
parts no longer call one way (src/runtime/internal.h and
src/report/internal.h give the direction).
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def sources(src):
    for top, dirs, files in os.walk(src):
        dirs.sort()
        for f in sorted(files):
            if f.endswith((".c", ".h")):
                yield os.path.normpath(os.path.join(top, f))


def resolve(name, including, by_base):
    beside = os.path.normpath(os.path.join(os.path.dirname(including), name))
    if os.path.isfile(beside):
        return beside
    found = by_base.get(name, [])
    return found[0] if len(found) == 1 else None


def graph(src):
    files = list(sources(src))
    by_base = {}
    for f in files:
        by_base.setdefault(os.path.basename(f), []).append(f)
    edges = {}
    for f in files:
        with open(f, encoding="utf-8", errors="replace") as h:
            text = h.read()
        edges[f] = sorted({t for t in (resolve(n, f, by_base) for n in INCLUDE.findall(text)) if t})
    return edges


def cycles(edges):
    """Each cycle once, as the list of its files from where the search met it."""
    state, stack, found, seen = {}, [], [], set()

    def visit(f):
        state[f] = 1
        stack.append(f)
        for t in edges.get(f, []):
            if state.get(t) == 1:
                c = stack[stack.index(t):]
                key = frozenset(c)
                if key not in seen:
                    seen.add(key)
                    found.append(c + [t])
            elif t not in state:
                visit(t)
        stack.pop()
        state[f] = 2

    sys.setrecursionlimit(10000)
    for f in sorted(edges):
        if f not in state:
            visit(f)
    return found


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    src = os.path.join(root, "src")
    if not os.path.isdir(src):
        print("include_cycles.py: %s is not a folder (expected the repository's root)" % root, file=sys.stderr)
        return 2
    found = cycles(graph(src))
    for c in found:
        print("include cycle: " + " -> ".join(os.path.relpath(f, root) for f in c), file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
