"""The Python package's argument checks and exception types (docs/python.md),
on the package from python/ with the extension this build made, without pip.
Run: package_checks.py TEST SOURCE_TREE NATIVE_SO LIBDIR [SIMULATOR] (or --list).

load_binary: a device number outside a C int (2**32 would be CUDA device 0)
and a negative shared_mem raise ValueError; read_report raises
callguard.Error (CG_EFORMAT) for any file it cannot read as a report.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from cgtest import check, listing, main  # noqa: E402  (tests/cgtest.py)

if not listing():
    SRC, NATIVE, LIBDIR = sys.argv[2:5]
    SIMULATOR = sys.argv[5] if len(sys.argv) > 5 else ""  # none where Level Zero's headers were not found
    TMP = tempfile.mkdtemp(prefix="cgpy-")


def package(where):
    """callguard/ in `where`: the sources and the built extension, linked,
    and _tree/lib, where the extension's RUNPATH finds libcallguard."""
    pkg = os.path.join(where, "callguard")
    if os.path.isdir(pkg):
        return where
    os.makedirs(os.path.join(pkg, "_tree"))
    os.symlink(LIBDIR, os.path.join(pkg, "_tree", "lib"))
    src = os.path.join(SRC, "python", "callguard")
    for name in os.listdir(src):
        if name.endswith(".py"):
            os.symlink(os.path.join(src, name), os.path.join(pkg, name))
    os.symlink(NATIVE, os.path.join(pkg, os.path.basename(NATIVE)))
    return where


def python(code, env=None):
    e = dict(os.environ, PYTHONPATH=package(TMP), **(env or {}))
    r = subprocess.run([sys.executable, "-c", code], env=e, capture_output=True, text=True, timeout=120, cwd=TMP)
    check(r.returncode == 0 and r.stdout.strip().endswith("ok"), "exit %d\n%s\n%s" % (r.returncode, r.stdout,
                                                                                      r.stderr[-3000:]))


def python_load_binary_refuses_out_of_range_device_and_negative_shared_mem():
    """On the Level Zero simulator: a kernel that loads with device 0 and
    shared_mem 0 is refused, before any driver call, with a device number
    beyond a C int or a negative shared_mem, in every API, also through
    _native directly."""
    if not SIMULATOR:
        sys.exit(77)
    python("""
import callguard
from callguard import _native
assert _native.HAVE_LOAD_BINARY, "built without load_binary"
ok = b"\\x03\\x02\\x23\\x07saxpy:args=4\\0"
assert callguard.load_binary("saxpy", ok, 0, 0, cache=False).module
for api, device, shared_mem, says in [("ze", 0, -1, "shared_mem -1"), ("cuda", 2**32, 0, "4294967296"),
                                      ("cuda", -1, 0, "-1"), ("ze", 2**64, 0, "18446744073709551616"),
                                      ("cuda", 0, -4096, "shared_mem -4096")]:
    try:
        callguard.load_binary("saxpy", ok, shared_mem, device, api=api, cache=False)
        raise SystemExit("%s device %d shared_mem %d accepted" % (api, device, shared_mem))
    except ValueError as e:
        assert says in str(e) and ("0 to" in str(e) or "0 or more" in str(e)), str(e)
for api, device, shared_mem in [(3, 2**32, 0), (1, 0, -1)]:
    try:
        _native.load_binary(api=api, name="saxpy", kernel=ok, shared_mem=shared_mem, device=device, context=None,
                            device_handle=None, build_flags=None, format=0, max_spills=0, flags=1)
        raise SystemExit("_native: api %d device %d shared_mem %d accepted" % (api, device, shared_mem))
    except ValueError as e:
        assert str(device) in str(e) or str(shared_mem) in str(e), str(e)
print("ok")
""", env={"ZE_ENABLE_ALT_DRIVERS": SIMULATOR, "CGSIM_COMPILE_MS": "1", "CALLGUARD_CACHE": "off"})


def python_read_report_raises_callguard_error_for_any_unreadable_report():
    """A report this process wrote reads back; the same report with what
    only Python's json refuses in it, and a report cut short, raise
    callguard.Error with status CG_EFORMAT, never UnicodeDecodeError or
    JSONDecodeError."""
    good = os.path.join(TMP, "good.json")
    python("""
import callguard
callguard.enable_stats()
callguard.write_report(%r)
assert callguard.read_report(%r)["schema"] == "callguard-report"
print("ok")
""" % (good, good))
    with open(good, "rb") as f:
        text = f.read()
    # What libcallguard's reader passes over and Python's json refuses: bytes
    # that are no UTF-8 (UnicodeDecodeError), a raw tab in a string and a
    # number with a leading zero (JSONDecodeError); then a file cut short.
    bad = []
    for i, value in enumerate([b'"\xff\xfe"', b'"a\tb"', b"01"]):
        bad.append(os.path.join(TMP, "bad%d.json" % i))
        with open(bad[-1], "wb") as f:
            f.write(text.replace(b'"version": 1,', b'"version": 1, "note": ' + value + b",", 1))
    bad.append(os.path.join(TMP, "cut.json"))
    with open(bad[-1], "wb") as f:
        f.write(text[:len(text) // 2])
    python("""
import callguard
for path in %r:
    try:
        callguard.read_report(path)
        raise SystemExit("%%s read" %% path)
    except callguard.Error as e:
        assert e.status_name == "CG_EFORMAT" and e.status == -5 and path in str(e), (type(e), vars(e))
print("ok")
""" % (bad,))


if __name__ == "__main__":
    try:
        main()
    finally:
        if not listing():
            shutil.rmtree(TMP, ignore_errors=True)
