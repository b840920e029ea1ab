"""The `callguard` console script: execs the tree's callguard command, so
`callguard run` from a virtual environment is the command itself (its
exit status, its signals, no Python process left around the program)."""
import os
import sys

from . import _tree


def main():
    exe = _tree.executable()
    if not os.access(exe, os.X_OK):
        sys.stderr.write(f"callguard: the package has no callguard command at {exe}: reinstall it (pip install)\n")
        return 2
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(exe, ["callguard"] + sys.argv[1:])
