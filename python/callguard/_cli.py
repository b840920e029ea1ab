"""The `callguard` console script: execs the tree's callguard command, so
`callguard run` from a virtual environment is the command itself (its
exit status, its signals, no Python process left around the program).
`callguard docs [NAME]` (also `python -m callguard docs`) prints one of the
documents that ship in the package, or lists them."""
import os
import sys

from . import _tree


def docs(args):
    """callguard docs [NAME]: prints a document, or lists them; 2 for a bad name."""
    if not args:
        print("callguard's documents (callguard docs NAME prints one; they are in %s):" % _tree.DOC)
        for name in _tree.doc_names():
            with open(os.path.join(_tree.DOC, name + ".md"), encoding="utf-8") as f:
                title = f.readline().lstrip("# ").strip()
            print("  %-14s %s" % (name, title))
        return 0
    if len(args) > 1 or args[0].startswith("-"):
        sys.stderr.write("callguard docs: expected one document name, not %s (callguard docs lists them)\n"
                         % " ".join(args))
        return 2
    try:
        path = _tree.docs(args[0])
    except ValueError as e:
        sys.stderr.write("callguard docs: %s\n" % e)
        return 2
    with open(path, encoding="utf-8") as f:
        sys.stdout.write(f.read())
    return 0


def gen_main():
    """The `callguard-gen` console script: execs the tree's layer generator."""
    exe = _tree.generator()
    if not os.access(exe, os.X_OK):
        sys.stderr.write(f"callguard-gen: the package has no generator at {exe}: it was built without "
                         "libclang's headers (clang-c/Index.h); reinstall it from the wheel\n")
        return 2
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(exe, ["callguard-gen"] + sys.argv[1:])


def main():
    if sys.argv[1:2] == ["docs"]:
        return docs(sys.argv[2:])
    exe = _tree.executable()
    if not os.access(exe, os.X_OK):
        sys.stderr.write(f"callguard: the package has no callguard command at {exe}: reinstall it (pip install)\n")
        return 2
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(exe, ["callguard"] + sys.argv[1:])
