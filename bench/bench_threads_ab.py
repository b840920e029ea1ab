#!/usr/bin/env python3
"""bench_threads of two builds run in turn: the cost of a change to the
thread rules' checks or locks against the code before it, in one run.

usage: bench/bench_threads_ab.py OLD_BUILD NEW_BUILD [RUNS]   (default 10 runs each)

Each build's bin/bench_threads (bench/bench_threads.c; the old tree built
with the same bench_threads.c) runs RUNS times, old and new in turn; each
prints per row the median of its 51 interleaved rounds. Prints per row the
median over the runs of each program's candidate ns and added ns, and the
median of the RUNS pairs' new/old candidate ratios."""
import statistics
import subprocess
import sys


def rows(build):
    out = subprocess.run([build + "/bin/bench_threads"], check=True, capture_output=True, text=True).stdout
    got = {}
    for line in out.splitlines():
        p = line.split()
        if p and p[0].isdigit():
            got[p[0]] = (float(p[-2]), float(p[-1]))  # candidate ns, added ns
    return got


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__.split("\n\n")[1])
    old, new = sys.argv[1], sys.argv[2]
    runs = int(sys.argv[3]) if len(sys.argv) == 4 else 10
    res = {"old": [], "new": []}
    for _ in range(runs):
        res["old"].append(rows(old))
        res["new"].append(rows(new))
    med = statistics.median
    print("%-4s %12s %12s %12s %12s %10s" % ("row", "old ns", "old added", "new ns", "new added", "new/old"))
    for row in sorted(res["old"][0]):
        o = [r[row] for r in res["old"]]
        n = [r[row] for r in res["new"]]
        ratio = med(b[0] / a[0] for a, b in zip(o, n))
        print("%-4s %12.1f %12.1f %12.1f %12.1f %10.3f" % (row, med(x[0] for x in o), med(x[1] for x in o),
                                                             med(x[0] for x in n), med(x[1] for x in n), ratio))


main()
