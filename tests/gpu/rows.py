"""Reads a callguard JSON report (all processes merged). Usage:
    rows.py REPORT NAME...     prints "NAME=calls" for each name (0 if absent)
    rows.py REPORT --total     prints the sum of all guarded calls
    rows.py REPORT --stalls NAME   prints the stalls reported for NAME (-1 if absent)"""
import json
import sys

rep = json.load(open(sys.argv[1]))
rows, stalls = {}, {}
for p in rep["processes"]:
    for s in p["sites"]:
        rows[s["name"]] = rows.get(s["name"], 0) + s["calls"]
        stalls[s["name"]] = stalls.get(s["name"], 0) + s.get("stalls", 0)
if sys.argv[2] == "--total":
    print(sum(rows.values()))
elif sys.argv[2] == "--stalls":
    print(stalls.get(sys.argv[3], -1))
else:
    print(" ".join("%s=%d" % (n, rows.get(n, 0)) for n in sys.argv[2:]))
