"""Where the installed tree is: callguard/_tree/{bin,lib,share,include}.

pip installs the `callguard` command, libcallguard, the layers, their
shims and the Level Zero simulator there as one tree, so the command finds
its layers relative to itself ($ORIGIN), as in any install.
"""
import os

PREFIX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_tree")
BIN = os.path.join(PREFIX, "bin")
LIB = os.path.join(PREFIX, "lib")
SHARE = os.path.join(PREFIX, "share", "callguard")


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
