"""What the tests of a GPU API's layer share (tests/cuda/test_layer.py on
the stand-in libcuda.so.1, tests/hip/test_hip.py on Debian's HIP runtime and
the stand-in libamdhip64.so.7): running a program without callguard's own
variables, and reading what a report counted.

Those scripts take their paths from the environment (E), which their
folder's CMakeLists.txt sets; tests/cgtest.py runs them.
"""
import json
import os
import subprocess

from cgtest import check, main, no_core  # noqa: F401  (the scripts take them from here)

E = os.environ
# The tests folder, for a Python child to import pausetimer.py from.
TESTS = os.path.dirname(os.path.abspath(__file__))


def run(args, env=None, timeout=60):
    """args with our environment less its CALLGUARD_* variables, plus env; a
    process that aborts (as a test may expect) leaves no core file."""
    e = {k: v for k, v in os.environ.items() if not k.startswith("CALLGUARD_")}
    e.update(env or {})
    return subprocess.run(args, env=e, capture_output=True, text=True, timeout=timeout, preexec_fn=no_core)


def report(path):
    """The report's calls by entry point, summed over its processes."""
    with open(path) as f:
        rep = json.load(f)
    rows = {}
    for proc in rep["processes"]:
        for s in proc["sites"]:
            rows[s["name"]] = rows.get(s["name"], 0) + s["calls"]
    return rows


def sites(path, name):
    """Each process's row of entry point `name` in the report at path."""
    with open(path) as f:
        return [s for p in json.load(f)["processes"] for s in p["sites"] if s["name"] == name]
