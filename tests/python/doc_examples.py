"""The Python module's examples run as tests, so a document cannot go stale.
Run: doc_examples.py TEST SOURCE_TREE NATIVE_SO LIBDIR CALLGUARD [SIMULATOR]
(or --list), on the package from python/ with the extension this build
made (tests/python/pkgtree.py).

docs/python.md: each ```python block runs in a fresh process, in a folder
of its own under /tmp: a block of `>>>` lines as a doctest (ELLIPSIS on:
`...` stands for the rest of a line), any other as a program. A block whose
first line says `run it as: callguard run OPTIONS -- python3 FILE.py` runs
under this build's `callguard run OPTIONS`; any other plainly.

Docstrings: every `>>>` example in the docstrings of the package's modules
(python/callguard, and callguard._native's from src/pyext), with
`callguard` imported, plainly (outside `callguard run`).
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE)]
from cgtest import check, listing, main  # noqa: E402  (tests/cgtest.py)
import pkgtree  # noqa: E402  (tests/python/pkgtree.py)

if not listing():
    SRC, NATIVE, LIBDIR, CALLGUARD = sys.argv[2:6]
    SIMULATOR = sys.argv[6] if len(sys.argv) > 6 else ""
    TMP = tempfile.mkdtemp(prefix="cgdoc-")
SKIP = 77
UNDER_RUN = re.compile(r"^# .*run it as: callguard run (?P<options>.*?) -- python3 \S+\.py\b")

# Runs a block of >>> lines as a doctest: the block's file is argv[1].
DOCTEST = """
import doctest, sys
text = open(sys.argv[1]).read()
test = doctest.DocTestParser().get_doctest(text, {}, sys.argv[2], sys.argv[2], 0)
runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
runner.run(test)
sys.exit(1 if runner.failures or not test.examples else 0)
"""

# Every >>> example of every module of the package, with `callguard` imported.
DOCSTRINGS = """
import doctest, importlib, pkgutil, sys
import callguard
tried = failed = 0
names = ["callguard"] + ["callguard." + m.name for m in pkgutil.iter_modules(callguard.__path__)
                         if m.name != "__main__"]
for name in names:
    module = importlib.import_module(name)
    tests = doctest.DocTestFinder().find(module, extraglobs={"callguard": callguard})
    if name == "callguard._native":  # a C module: its functions' docstrings, which the finder skips
        tests += [doctest.DocTestParser().get_doctest(f.__doc__ or "", {"callguard": callguard}, name + "." + n,
                                                      name, 0) for n, f in vars(module).items() if callable(f)]
    for test in tests:
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
        runner.run(test)
        tried, failed = tried + runner.tries, failed + runner.failures
print("%d examples, %d failed" % (tried, failed))
sys.exit(1 if failed or not tried else 0)
"""


def environment(folder):
    """The examples' environment: the package; nothing of callguard's or
    the simulator's from outside; caches and PoCL's files in `folder`."""
    e = {k: v for k, v in os.environ.items() if not k.startswith(("CALLGUARD_", "CGSIM_", "ZE_", "POCL_"))}
    e.update(PYTHONPATH=pkgtree.package(TMP, SRC, NATIVE, LIBDIR), HOME=folder, XDG_CACHE_HOME=folder,
             POCL_CACHE_DIR=os.path.join(folder, "pocl"), POCL_MAX_PTHREAD_COUNT="1")
    return e


def blocks(path):
    """(line, text) of each ```python block of a Markdown file."""
    found, block, start = [], None, 0
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if block is None and line.strip() == "```python":
                block, start = [], n + 1
            elif block is not None and line.strip() == "```":
                found.append((start, "".join(block)))
                block = None
            elif block is not None:
                block.append(line)
    return found


def run_block(doc, line, text):
    """Runs one block as the module's documentation says; the failure names its line."""
    folder = os.path.join(TMP, "line%d" % line)
    os.makedirs(folder)
    program = os.path.join(folder, "example.py")
    where = "%s:%d" % (os.path.relpath(doc, SRC), line)
    with open(program, "w") as f:
        f.write(text)
    if ">>> " in text:
        command = [sys.executable, "-c", DOCTEST, program, where]
    else:
        command = [sys.executable, program]
    under = UNDER_RUN.match(text)
    if under:
        command = [CALLGUARD, "run"] + under.group("options").split() + ["--"] + command
    r = subprocess.run(command, env=environment(folder), cwd=folder, capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, "%s: the example fails%s" % (where, " under callguard run" if under else ""), r)


def python_md_examples_run_as_documented():
    """Each ```python block of docs/python.md (at least the module's, the
    callguard run program's and load_binary's) runs and passes."""
    if not SIMULATOR or not os.path.exists(os.path.join(LIBDIR, "libcallguard_cl.so")):
        return SKIP  # the examples use the Level Zero simulator and the cl layer
    doc = os.path.join(SRC, "docs", "python.md")
    found = blocks(doc)
    check(len(found) >= 3, "docs/python.md has %d python blocks, expected at least 3" % len(found))
    check(any(UNDER_RUN.match(text) for _, text in found), "no block runs under callguard run")
    for line, text in found:
        run_block(doc, line, text)


def docstring_examples_run_as_documented():
    """Every >>> example of the package's docstrings passes (and there are
    some: result_name's, serialize's, docs')."""
    folder = os.path.join(TMP, "docstrings")
    os.makedirs(folder)
    r = subprocess.run([sys.executable, "-c", DOCSTRINGS], env=environment(folder), cwd=folder,
                       capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, "the docstrings' examples fail", r)


if __name__ == "__main__":
    try:
        main()
    finally:
        if not listing():
            shutil.rmtree(TMP, ignore_errors=True)
