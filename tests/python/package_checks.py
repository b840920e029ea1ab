"""The Python package's argument checks and exception types (docs/python.md),
on the package from python/ with the extension this build made, without pip.
Run: package_checks.py TEST SOURCE_TREE NATIVE_SO LIBDIR [SIMULATOR] (or --list).

load_binary: a device number outside a C int (2**32 would be CUDA device 0)
and a negative shared_mem raise ValueError; read_report raises
callguard.Error (CG_EFORMAT) for any file it cannot read as a report;
entry point names no layer could have are refused; stats and result_name
outside `callguard run`; help(callguard) and the documents it points at.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE)]
from cgtest import check, listing, main  # noqa: E402  (tests/cgtest.py)
import pkgtree  # noqa: E402  (tests/python/pkgtree.py)

if not listing():
    SRC, NATIVE, LIBDIR = sys.argv[2:5]
    SIMULATOR = sys.argv[5] if len(sys.argv) > 5 else ""  # none where Level Zero's headers were not found
    TMP = tempfile.mkdtemp(prefix="cgpy-")


def package(where):
    return pkgtree.package(where, SRC, NATIVE, LIBDIR)


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


def run_python(args, env=None):
    e = {k: v for k, v in os.environ.items() if not k.startswith(("CALLGUARD_", "ZE_"))}
    e.update(PYTHONPATH=package(TMP), **(env or {}))
    return subprocess.run([sys.executable] + args, env=e, capture_output=True, text=True, timeout=120, cwd=TMP)


def python_a_name_no_layer_could_have_is_refused_naming_the_closest():
    """Outside `callguard run` (no layer loaded) a typo is refused at once by
    serialize, set_transition, set_blocking and stats, naming the closest
    name (also for a name in another case) and nothing is kept for it; a
    name of a layer not loaded yet is kept (True); with the cl layer
    loaded, the typo is still refused."""
    code = """
import ctypes, callguard
def refused(call, site, closest):
    try:
        call(site)
    except callguard.Error as e:
        assert e.status_name == "CG_ENOENT" and repr(site) in str(e) and "did you mean %r" % closest in str(e), str(e)
    else:
        raise SystemExit("%s(%r) accepted" % (call.__name__, site))
for call in (callguard.serialize, lambda s: callguard.set_transition(s, "never"),
             lambda s: callguard.set_blocking(s, True), callguard.stats):
    refused(call, "clBuildProgramm", "clBuildProgram")
refused(callguard.serialize, "ZeModuleCreate", "zeModuleCreate")
refused(callguard.serialize, "cuLaunchKernal", "cuLaunchKernel")
assert callguard.serialize("zeModuleCreate", "igc") is True  # kept for the ze layer
assert callguard.serialize("hipModuleLoadData") is True
ctypes.CDLL(callguard.layer("cl"))
assert callguard.serialize("clBuildProgram") is False
refused(callguard.serialize, "clBuildProgramm", "clBuildProgram")
callguard.serialize("hipModuleLoadData", "")
print("ok")
"""
    r = run_python(["-c", code])
    check(r.returncode == 0 and r.stdout.strip() == "ok", "refusing typos", r)
    # What is kept and never applied is named at exit: the ze setting, never a refused name.
    check("zeModuleCreate" in r.stderr and "Programm" not in r.stderr and "ZeModule" not in r.stderr,
          "only the kept setting is named at exit", r)


def python_stats_and_result_name_outside_callguard_run_answer_or_say_why():
    """No layer loaded: stats of a known entry point says no layer is loaded
    and how to load one; result_name names Level Zero's and OpenCL's codes
    from the package's tables, None for a code the API lacks, says why for
    HIP, refuses an unknown API. With the ze layer loaded by hand, stats
    counts (zero calls), and a name it passes through unguarded is said to
    be uncounted."""
    code = """
import ctypes, callguard
try:
    callguard.stats("zeModuleCreate")
    raise SystemExit("stats without a ze layer answered")
except callguard.Error as e:
    assert "no ze layer is loaded" in str(e) and "callguard run" in str(e) and "callguard.layer('ze')" in str(e), e
assert callguard.result_name("ze", 0x70000004) == "ZE_RESULT_ERROR_MODULE_BUILD_FAILURE"
assert callguard.result_name("ze", 0) == "ZE_RESULT_SUCCESS"
assert callguard.result_name("cl", -11) == "CL_BUILD_PROGRAM_FAILURE"
assert callguard.result_name("cl", 0) == "CL_SUCCESS"
assert callguard.result_name("ze", 0x12345) is None
try:
    callguard.result_name("hip", 100)
    raise SystemExit("result_name of hip without its layer answered")
except callguard.Error as e:
    assert "no hip layer is loaded" in str(e) and "callguard run" in str(e), e
try:
    callguard.result_name("nosuch", 0)
    raise SystemExit("an unknown api accepted")
except ValueError as e:
    assert "nosuch" in str(e) and "ze" in str(e), e
ctypes.CDLL(callguard.layer("ze"))
callguard.enable_stats()
assert callguard.stats("zeModuleCreate").calls == 0
assert callguard.result_name("ze", 0x70000004) == "ZE_RESULT_ERROR_MODULE_BUILD_FAILURE"
try:
    callguard.stats("zeGetDriverProcAddrTable")
    raise SystemExit("stats of a pass-through name answered")
except callguard.Error as e:
    assert "passes zeGetDriverProcAddrTable through unguarded" in str(e), e
print("ok")
"""
    r = run_python(["-c", code])
    check(r.returncode == 0 and r.stdout.strip() == "ok", "stats and result_name outside callguard run", r)


def python_help_is_short_and_points_at_the_docs_the_package_holds():
    """help(callguard) is one short page (at most 50 lines of at most 100
    columns but its file's path) that names `python -m callguard docs`;
    that prints docs/python.md, lists the documents without a name, and
    exits 2 naming a bad one and those there are; callguard.docs() is the
    path of the package's copy."""
    r = run_python(["-c", "import callguard, pydoc; print(pydoc.render_doc(callguard, renderer=pydoc.plaintext))"])
    lines = r.stdout.splitlines()
    check(r.returncode == 0 and len(lines) <= 50, "help(callguard): %d lines" % len(lines), r)
    wide = [l for l in lines if len(l) > 100 and not l.startswith("    /")]
    check(not wide, "help(callguard) wider than 100 columns: %s" % wide)
    check("python -m callguard docs" in r.stdout, "help(callguard) names python -m callguard docs", r)
    with open(os.path.join(SRC, "docs", "python.md"), encoding="utf-8") as f:
        python_md = f.read()
    r = run_python(["-m", "callguard", "docs", "python"])
    check(r.returncode == 0 and r.stdout == python_md, "python -m callguard docs python prints docs/python.md", r)
    r = run_python(["-m", "callguard", "docs"])
    names = [l.split()[0] for l in r.stdout.splitlines()[1:]]
    check(r.returncode == 0 and "python" in names and "report" in names, "the documents listed", r)
    r = run_python(["-m", "callguard", "docs", "nosuch"])
    check(r.returncode == 2 and "nosuch" in r.stderr and "python" in r.stderr and not r.stdout, "a bad name", r)
    r = run_python(["-c", "import callguard; print(callguard.docs('report'))"])
    check(r.returncode == 0 and r.stdout.strip().endswith("/_tree/share/doc/callguard/report.md"), "docs()", r)


if __name__ == "__main__":
    try:
        main()
    finally:
        if not listing():
            shutil.rmtree(TMP, ignore_errors=True)
