"""The package as pip lays it out, made from python/ and this build, without
pip: callguard/ in a folder, with links to the sources, the built
extension, the build's lib/ as _tree/lib (where the extension's RUNPATH
finds libcallguard and the package finds its layers; the Level Zero
simulator where an install puts it) and docs/ as _tree/share/doc/callguard
(where the package's CMake install puts them)."""
import os

SIMULATOR = ("libze_cgsim.so", "libze_cgsim_compiler.so")


def package(where, src, native, libdir):
    """Makes callguard/ in `where` (once) and returns `where`, for PYTHONPATH."""
    pkg = os.path.join(where, "callguard")
    if os.path.isdir(pkg):
        return where
    lib = os.path.join(pkg, "_tree", "lib")
    os.makedirs(os.path.join(lib, "callguard", "drivers"))
    for name in os.listdir(libdir):
        into = os.path.join(lib, "callguard", "drivers") if name in SIMULATOR else lib
        if name != "callguard":
            os.symlink(os.path.join(libdir, name), os.path.join(into, name))
    for name in os.listdir(os.path.join(libdir, "callguard")):
        os.symlink(os.path.join(libdir, "callguard", name), os.path.join(lib, "callguard", name))
    os.makedirs(os.path.join(pkg, "_tree", "share", "doc"))
    os.symlink(os.path.join(src, "docs"), os.path.join(pkg, "_tree", "share", "doc", "callguard"))
    code = os.path.join(src, "python", "callguard")
    for name in os.listdir(code):
        if name.endswith(".py"):
            os.symlink(os.path.join(code, name), os.path.join(pkg, name))
    os.symlink(native, os.path.join(pkg, os.path.basename(native)))
    return where
