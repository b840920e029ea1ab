"""Where the installed tree is: callguard/_tree/{bin,lib,share,include}.

pip installs the `callguard` command, libcallguard, the layers, their
shims and the Level Zero simulator there as one tree, so the command finds
its layers relative to itself ($ORIGIN), as in any install; and the
documentation (docs/*.md of the source) in share/doc/callguard.
"""
import os

PREFIX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_tree")
BIN = os.path.join(PREFIX, "bin")
LIB = os.path.join(PREFIX, "lib")
SHARE = os.path.join(PREFIX, "share", "callguard")
DOC = os.path.join(PREFIX, "share", "doc", "callguard")


def prefix():
    """The install tree's folder: CMAKE_PREFIX_PATH for find_package(callguard), and
    prefix()/lib/pkgconfig for pkg-config, to build a layer of your own against the
    package (docs/thirdparty.md)."""
    return PREFIX


def generator():
    """callguard-gen, the layer generator of the tree (the console script
    callguard-gen runs it; it loads PyPI's libclang: pip install 'callguard[gen]')."""
    return os.path.join(BIN, "callguard-gen")


def executable():
    """The callguard command of the tree."""
    return os.path.join(BIN, "callguard")


def simulator():
    """libze_cgsim.so, the Level Zero simulator driver (docs/zesim.md):
    give it to the loader as ZE_ENABLE_ALT_DRIVERS."""
    return os.path.join(LIB, "callguard", "drivers", "libze_cgsim.so")


def layer(api):
    """The installed layer of an API ("cl", "ze", "cuda")."""
    return os.path.join(LIB, f"libcallguard_{api}.so")


def doc_names():
    """The documents the package holds ("python", "report", ...)."""
    try:
        return sorted(n[:-3] for n in os.listdir(DOC) if n.endswith(".md"))
    except OSError:
        return []


def docs(name="python"):
    """The path of one of callguard's documents, which ship in the package
    (`python -m callguard docs NAME` prints one; without NAME, lists them):

    >>> callguard.docs("report").endswith("/share/doc/callguard/report.md")
    True
    """
    path = os.path.join(DOC, name + ".md")
    if os.sep in name or not os.path.isfile(path):
        raise ValueError("no document %r in %s: expected one of %s" % (name, DOC, ", ".join(doc_names()) or "none"))
    return path
