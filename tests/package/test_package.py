"""The Python package, installed with pip into a fresh virtual environment
and used from there. Run: test_package.py TEST WORKDIR SOURCE_DIR PYTHON (or --list)

pip_install_into_fresh_venv (the fixture of the others) makes WORKDIR/venv
anew with PYTHON and runs `pip install SOURCE_DIR` in it: pip fetches
scikit-build-core from PyPI (pip's own cache keeps it) and runs the CMake
build of the package (pyproject.toml) in WORKDIR/skbuild, kept between
runs so a second run rebuilds only what changed. Every other test runs the
venv's own `callguard`, `python -m callguard` and `import callguard`.
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import textwrap

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from cgtest import check, listing, main, no_core  # noqa: E402  (tests/cgtest.py)

if not listing():
    WORK, SRC, PYTHON = sys.argv[2:5]
    VENV = os.path.join(WORK, "venv")
    VPY = os.path.join(VENV, "bin", "python")
    VCG = os.path.join(VENV, "bin", "callguard")
    TMP = os.path.join(WORK, "tmp-" + sys.argv[1])
SKIP = 77


def run(args, env=None, timeout=120, **kw):
    e = {k: v for k, v in os.environ.items() if not k.startswith(("CALLGUARD_", "CGSIM_", "ZE_"))}
    e.update(env or {})
    return subprocess.run(args, env=e, capture_output=True, text=True, timeout=timeout, **kw)


def ok(r, what):
    check(r.returncode == 0, "%s: exit %d\nstdout:\n%s\nstderr:\n%s" % (what, r.returncode, r.stdout, r.stderr))
    return r


def site_packages(venv):
    found = glob.glob(os.path.join(venv, "lib", "python3*", "site-packages"))
    check(len(found) == 1, "one site-packages in %s: %s" % (venv, found))
    return found[0]


def pkg_dir(venv):
    return os.path.join(site_packages(venv), "callguard")


def simulator(pkg):
    return os.path.join(pkg, "_tree", "lib", "callguard", "drivers", "libze_cgsim.so")


def python(code, env=None, interpreter=None):
    """Runs code in the venv's Python (from TMP, never from the source tree)."""
    return run([interpreter or VPY, "-c", textwrap.dedent(code)], env=env, cwd=TMP)


def pip_install_into_fresh_venv():
    shutil.rmtree(VENV, ignore_errors=True)
    ok(run([PYTHON, "-m", "venv", VENV]), "python -m venv")
    # The build runs inside pip: two jobs (the machines have two cores).
    r = run([os.path.join(VENV, "bin", "pip"), "install", "--config-settings=build-dir=" + os.path.join(WORK, "skbuild"),
             SRC], env={"CMAKE_BUILD_PARALLEL_LEVEL": "2"}, timeout=1500)
    ok(r, "pip install " + SRC)
    pkg = pkg_dir(VENV)
    for f in ["__init__.py", "__main__.py", "errors.py", "_native.abi3.so", "_tree/bin/callguard",
              "_tree/lib/libcallguard.so.0", "_tree/lib/libcallguard_ze.so", "_tree/lib/libcallguard_cl.so",
              "_tree/lib/callguard/shims/libze_loader.so.1", "_tree/lib/callguard/shims/libOpenCL.so.1",
              "_tree/lib/callguard/drivers/libze_cgsim.so", "_tree/lib/callguard/drivers/libze_cgsim_compiler.so",
              "_tree/share/callguard/apis/ze.ini",
              "_tree/share/callguard/quirks.ini",
              "_tree/include/callguard/callguard.h"]:
        check(os.path.exists(os.path.join(pkg, f)), "the package has no callguard/%s" % f)
    check(os.access(VCG, os.X_OK), "the venv has no callguard console script")
    # The generator, built to load libclang when it runs (src/gen/clang.h): it links none, and its console
    # script answers --help without one (the wheel's test builds a layer with it: wheel_thirdparty.sh).
    gen = os.path.join(pkg, "_tree/bin/callguard-gen")
    r = ok(run(["ldd", gen]), "ldd callguard-gen")
    check("libclang" not in r.stdout, "callguard-gen links libclang: " + r.stdout)
    r = ok(run([os.path.join(VENV, "bin", "callguard-gen"), "--help"]), "callguard-gen --help")
    check(r.stdout.startswith("usage: callguard-gen"), r.stdout[:200])
    # The extension finds libcallguard in the package's own tree.
    r = ok(run(["ldd", os.path.join(pkg, "_native.abi3.so")], env={"LD_LIBRARY_PATH": ""}), "ldd _native")
    check("libcallguard.so.0 => " + os.path.join(pkg, "_tree", "lib", "libcallguard.so.0") in r.stdout, r.stdout)


def command_help_from_venv():
    os.makedirs(TMP, exist_ok=True)
    r = ok(run([VCG, "--help"], cwd=TMP), "callguard --help")
    check(r.stdout.startswith("usage: callguard run"), "usage printed: " + r.stdout[:200])
    r = ok(run([VCG, "--version"], cwd=TMP), "callguard --version")
    check(r.stdout.strip() == "callguard 0.1.0", r.stdout)
    r = run([VCG, "run", "--no-such-option", "--", "/bin/true"], cwd=TMP)
    check(r.returncode == 2 and "--no-such-option" in r.stderr, "a bad option: exit 2 naming it: %d %s" %
          (r.returncode, r.stderr))
    r = ok(run([VCG, "list"], cwd=TMP), "callguard list")
    for api in ("cl", "ze"):
        check(api in r.stdout, "callguard list names the %s layer: %s" % (api, r.stdout))


def python_m_lists_ze():
    os.makedirs(TMP, exist_ok=True)
    r = ok(run([VPY, "-m", "callguard", "list", "ze"], cwd=TMP), "python -m callguard list ze")
    lines = r.stdout.splitlines()
    check(lines and lines[-1].endswith(" entry points") and int(lines[-1].split()[0]) > 200,
          "the ze layer's entry points counted: %s" % lines[-1:])
    check(any(l.split()[:1] == ["zeModuleCreate"] for l in lines), "zeModuleCreate listed")
    r = run([VPY, "-m", "callguard", "list", "nosuchapi"], cwd=TMP)
    check(r.returncode == 2 and "nosuchapi" in r.stderr, "an unknown layer: exit 2 naming it: %s" % r.stderr)


# A Level Zero program: the simulator's device through Debian's loader,
# opened by soname (so the shim is what it gets), which also reads its own
# counters through the package.
ZE_PROGRAM = """
import ctypes, json, sys
import callguard
ze = ctypes.CDLL("libze_loader.so.1")
assert ze.zeInit(0) == 0, "zeInit"
n = ctypes.c_uint32(0)
for _ in range(3):
    assert ze.zeDriverGet(ctypes.byref(n), None) == 0 and n.value == 1, ("zeDriverGet", n.value)
layers = {l["api"]: l for l in callguard.layers()}
site = {s["name"]: s for s in callguard.sites("ze")}["zeDriverGet"]
runtime = [l.split()[-1] for l in open("/proc/self/maps") if l.rstrip().endswith("/libcallguard.so.0")]
print(json.dumps({"layers": sorted(layers), "runtime": sorted(set(runtime)), "domain": site["domain"],
                  "zeDriverGet": callguard.stats("zeDriverGet").calls}))
"""


def docs_ship_in_the_package():
    """The venv's package holds docs/*.md (src/pyext/CMakeLists.txt), which
    `callguard docs` prints and help(callguard) points at."""
    os.makedirs(TMP, exist_ok=True)
    with open(os.path.join(SRC, "docs", "python.md"), encoding="utf-8") as f:
        python_md = f.read()
    r = ok(run([VCG, "docs", "python"], cwd=TMP), "callguard docs python")
    check(r.stdout == python_md, "callguard docs python prints docs/python.md")
    shipped = sorted(os.listdir(os.path.join(pkg_dir(VENV), "_tree", "share", "doc", "callguard")))
    check(shipped == sorted(n for n in os.listdir(os.path.join(SRC, "docs")) if n.endswith(".md")),
          "every document shipped: %s" % shipped)
    r = ok(python("import callguard; help(callguard)", env={"PAGER": "cat"}), "help(callguard)")
    check("python -m callguard docs" in r.stdout and len(r.stdout.splitlines()) <= 50, r.stdout)


def run_from_venv_guards_simulator_program():
    os.makedirs(TMP, exist_ok=True)
    prog = os.path.join(TMP, "ze_program.py")
    with open(prog, "w") as f:
        f.write(ZE_PROGRAM)
    report = os.path.join(TMP, "report.json")
    env = {"ZE_ENABLE_ALT_DRIVERS": simulator(pkg_dir(VENV))}
    r = ok(run([VCG, "run", "--api", "ze", "--serialize", "zeDriverGet", "--report", report, "--", VPY, prog],
               env=env, cwd=TMP), "callguard run -- python ze_program.py")
    seen = json.loads(r.stdout.splitlines()[-1])
    check(seen["layers"] == ["ze"], "only the ze layer is loaded: %s" % seen)
    check(seen["runtime"] == [os.path.join(pkg_dir(VENV), "_tree", "lib", "libcallguard.so.0")],
          "the one libcallguard loaded is the package's: %s" % seen["runtime"])
    check(seen["domain"] == "zeDriverGet", "zeDriverGet serialized in its own domain: %s" % seen)
    check(seen["zeDriverGet"] == 3, "the program read its own 3 zeDriverGet calls: %s" % seen)
    rep = json.load(open(report))
    procs = [p for p in rep["processes"] if any(s["api"] == "ze" for s in p["sites"])]
    check(len(procs) == 1, "one process made ze calls: %d" % len(procs))
    sites = {s["name"]: s for s in procs[0]["sites"]}
    check(sites["zeInit"]["calls"] == 1 and sites["zeDriverGet"]["calls"] == 3,
          "zeInit 1, zeDriverGet 3: %s" % {k: v["calls"] for k, v in sites.items()})
    check(sites["zeDriverGet"]["errors"] == 0 and sites["zeDriverGet"]["policy"]["serialize"] == "zeDriverGet",
          sites["zeDriverGet"])
    # The saved report, read back through the package and printed by the venv's command.
    r = ok(python("import callguard, sys; r = callguard.read_report(sys.argv[1]); print(len(r['processes']))"
                  .replace("sys.argv[1]", repr(report))), "callguard.read_report")
    check(int(r.stdout) == len(rep["processes"]), r.stdout)
    r = ok(run([VCG, "report", report], cwd=TMP), "callguard report")
    check("zeDriverGet" in r.stdout, r.stdout)


def module_policies_and_report():
    os.makedirs(TMP, exist_ok=True)
    report = os.path.join(TMP, "own.json")
    bad = os.path.join(TMP, "bad.json")
    with open(bad, "w") as f:
        f.write('{"schema": "something else"}')
    code = """
    import ctypes, callguard
    # Before any layer loads: kept for it (True), applied when it loads.
    assert callguard.serialize("zeModuleCreate", "igc") is True
    assert callguard.configure("CALLGUARD_TRANSITION", "blocking") in (True, False)
    # The package's ze layer, loaded into this process, registers itself.
    ctypes.CDLL(callguard.layer("ze"))
    layers = [l["api"] for l in callguard.layers()]
    assert layers == ["ze"], layers
    sites = {s["name"]: s for s in callguard.sites("ze")}
    assert sites["zeModuleCreate"]["domain"] == "igc", sites["zeModuleCreate"]
    assert callguard.set_transition("zeModuleCreate", "never") is False
    assert {s["name"]: s for s in callguard.sites("ze")}["zeModuleCreate"]["transition"] == "never"
    assert callguard.serialize("zeModuleCreate", "") is False
    assert {s["name"]: s for s in callguard.sites("ze")}["zeModuleCreate"]["domain"] == ""
    # Errors: the status and its name, and the message naming the bad value.
    try:
        callguard.serialize("zeNope")
        raise SystemExit("zeNope accepted")
    except callguard.Error as e:
        assert e.status_name == "CG_ENOENT" and "zeNope" in str(e), (e.status_name, str(e))
    try:
        callguard.configure("CALLGUARD_TRANSITION", "sometimes")
        raise SystemExit("a bad transition accepted")
    except callguard.Error as e:
        assert e.status_name == "CG_EINVAL" and "sometimes" in str(e), (e.status_name, str(e))
    try:
        callguard.serialize("zeModuleCreate", "igc", scope="device")
        raise SystemExit("a bad scope accepted")
    except ValueError as e:
        assert "device" in str(e) and "handle" in str(e), str(e)
    # Statistics of a site and this process's report, written and read back.
    callguard.enable_stats()
    s = callguard.stats("zeModuleCreate")
    assert s.calls == 0 and s.errors == 0 and s == callguard.SiteStats(*[0] * 8), s
    callguard.write_report(REPORT)
    rep = callguard.read_report(REPORT)
    names = {x["name"] for p in rep["processes"] for x in p["sites"]}
    try:
        callguard.read_report(BAD)
        raise SystemExit("a file that is no report was read")
    except callguard.Error as e:
        assert e.status_name == "CG_EFORMAT", (e.status_name, str(e))
    assert callguard.result_name("ze", 0x70000004) == "ZE_RESULT_ERROR_MODULE_BUILD_FAILURE"
    print("ok")
    """.replace("REPORT", repr(report)).replace("BAD", repr(bad))
    r = ok(python(code), "policies and report through the module")
    check(r.stdout.strip() == "ok", r.stdout)


# Triton's async-compile pattern: a pool of N threads, released together,
# each loading a kernel of its own through callguard.load_binary.
LOAD_PROGRAM = """
import concurrent.futures, json, sys, threading
import callguard
n = int(sys.argv[1])
barrier = threading.Barrier(n)
def load(i):
    kernel = b"\\x03\\x02\\x23\\x07" + b"k%d:args=2\\0" % i
    barrier.wait()
    return callguard.load_binary("k%d" % i, kernel, 0, 0, "-cl-intel-128-GRF-per-thread", True)
with concurrent.futures.ThreadPoolExecutor(n) as pool:
    results = list(pool.map(load, range(n)))
print(json.dumps({"results": [list(r) + [r.build_flags, r.source] for r in results],
                  "stats": callguard.load_stats()}))
"""


def load_binary_threads_on_simulator():
    """16 threads load 16 kernels at once on the simulator with its compiler
    race set to abort: serialized, every kernel loads; a second process
    takes them all from the disk cache; unserialized, the threads meet
    inside zeModuleCreate and the driver aborts, which only happens because
    load_binary released the GIL around the driver's work."""
    os.makedirs(TMP, exist_ok=True)
    prog = os.path.join(TMP, "load_program.py")
    with open(prog, "w") as f:
        f.write(LOAD_PROGRAM)
    cache = os.path.join(TMP, "cache")
    shutil.rmtree(cache, ignore_errors=True)
    env = {"ZE_ENABLE_ALT_DRIVERS": simulator(pkg_dir(VENV)), "CGSIM_COMPILER_RACE": "abort",
           "CGSIM_COMPILE_MS": "100", "CALLGUARD_CACHE_DIR": cache}
    serialized = [VCG, "run", "--api", "ze", "--serialize", "zeModuleCreate", "--", VPY, prog, "16"]
    for n, source in ((1, "built"), (2, "disk")):
        r = ok(run(serialized, env=env, cwd=TMP, preexec_fn=no_core), "load_binary run %d" % n)
        out = json.loads(r.stdout.splitlines()[-1])
        res = out["results"]
        check(len(res) == 16, "16 results: %s" % res)
        check(all(m and f for m, f, *_ in res) and len({m for m, *_ in res}) == 16, "16 modules and kernels: %s" % res)
        check(all(x[2] == 128 and x[3] == 0 and x[4] > 0 for x in res), "128 registers (the flags' GRF mode), "
              "no spills, a maximum group size: %s" % res)
        check(all("-cl-intel-128-GRF-per-thread" in x[5] for x in res), "the flags used are returned: %s" % res)
        check(all(x[6] == source for x in res), "run %d: every module %s: %s" % (n, source, [x[6] for x in res]))
        st = out["stats"]
        want = {"requests": 16, "builds": 16 if n == 1 else 0, "disk_hits": 0 if n == 1 else 16}
        check({k: st[k] for k in want} == want, "run %d: %s, expected %s" % (n, st, want))
    unserialized = [VCG, "run", "--api", "ze", "--", VPY, prog, "16"]
    shutil.rmtree(cache, ignore_errors=True)
    r = run(unserialized, env=env, cwd=TMP, preexec_fn=no_core)
    check(r.returncode in (-6, 134), "unserialized, the simulator's compiler race aborts the process: exit %d\n%s" %
          (r.returncode, r.stderr[-2000:]))
    # The package's own share/callguard/quirks.ini: on a driver reporting NEO 26.27.39122.11 (IGC 2.38.2),
    # its quirk serializes zeModuleCreate with no --serialize at all.
    shutil.rmtree(cache, ignore_errors=True)
    neo = dict(env, CGSIM_VENDOR_ID="0x8086", CGSIM_DRIVER_VERSION="26.27.39122.11")
    r = ok(run([VCG, "run", "--api", "ze", "--report", "-", "--", VPY, prog, "16"], env=neo, cwd=TMP,
               preexec_fn=no_core), "load_binary run on an affected driver")
    check("quirk igc-2.38-zeModuleCreate applied" in r.stderr, "the package's quirks file applied: %s" % r.stderr[-2000:])


def load_binary_errors_on_simulator():
    os.makedirs(TMP, exist_ok=True)
    code = """
    import callguard
    ok = b"\\x03\\x02\\x23\\x07" + b"saxpy:args=4\\0"
    r = callguard.load_binary("saxpy", ok, 0, 0, cache=False)
    module, function, n_regs, n_spills, n_max_threads = r
    assert module and function and n_regs == 0 and n_spills == 0 and n_max_threads > 0, r
    assert r.source == "built" and "saxpy" in r.build_log, (r.source, r.build_log)
    # The same bytes again: the memory cache's module.
    a = callguard.load_binary("saxpy", ok, 0, 0, cache="memory")
    b = callguard.load_binary("saxpy", ok, 0, 0, cache="memory")
    assert a.module == b.module and b.source == "memory", (a, b.source)
    try:
        callguard.load_binary("saxpy", b"not SPIR-V", 0, 0, cache=False)
        raise SystemExit("bad bytes loaded")
    except callguard.OutOfResources:
        raise SystemExit("a build failure taken for out of resources")
    except callguard.DriverError as e:
        assert e.function == "zeModuleCreate", e.function
        assert e.result_name == "ZE_RESULT_ERROR_MODULE_BUILD_FAILURE", e.result_name
        assert e.build_log.strip() and e.build_log.strip() in str(e), (e.build_log, str(e))
        assert e.api == "ze" and e.status_name == "CG_LOAD_EDRIVER", (e.api, e.status_name)
    # Out of resources (the simulator's grf= and slm= keys): its own exception, with the result's name and log.
    fat = b"\\x03\\x02\\x23\\x07" + b"fat:args=1:grf=%d\\0"
    r = callguard.load_binary("fat", fat % 200, 0, 0, cache=False)
    assert r.retried and r.n_regs == 256 and "-cl-intel-256-GRF-per-thread" in r.build_flags, (r, r.build_flags)
    try:
        callguard.load_binary("fat", fat % 300, 0, 0, cache=False)
        raise SystemExit("a kernel needing 300 registers loaded")
    except callguard.OutOfResources as e:
        assert isinstance(e, callguard.DriverError) and e.status_name == "CG_LOAD_ERESOURCES", (type(e), e.status_name)
        assert e.function == "zeModuleCreate" and e.result_name == "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY", vars(e)
        assert "needs 300 registers per thread" in e.build_log and e.build_log.strip() in str(e), e.build_log
    try:
        callguard.load_binary("fat", fat % 200, 0, 0, "-cl-intel-128-GRF-per-thread", cache=False)
        raise SystemExit("200 registers in the 128-register GRF mode loaded")
    except callguard.OutOfResources as e:
        assert "-cl-intel-128-GRF-per-thread" in str(e) and "gives 128" in e.build_log, (str(e), e.build_log)
    try:
        callguard.load_binary("fat", b"\\x03\\x02\\x23\\x07fat:slm=131072\\0", 0, 0, cache=False)
        raise SystemExit("128 KiB of shared local memory on a 64 KiB device")
    except callguard.OutOfResources as e:
        assert e.function == "zeKernelCreate" and e.result_name == "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY", vars(e)
    try:
        callguard.load_binary("nosuchkernel", ok, 0, 0, cache=False)
        raise SystemExit("a kernel the module lacks loaded")
    except callguard.Error as e:
        assert "nosuchkernel" in str(e), str(e)
    try:
        callguard.load_binary("saxpy", ok, 0, 7)
        raise SystemExit("device 7 of 1 accepted")
    except ValueError as e:
        assert "7" in str(e) and "0..0" in str(e), str(e)
    print("ok")
    """
    r = ok(python(code, env={"ZE_ENABLE_ALT_DRIVERS": simulator(pkg_dir(VENV)), "CGSIM_COMPILE_MS": "1",
                             "CALLGUARD_CACHE_DIR": os.path.join(TMP, "cache")}), "load_binary errors")
    check(r.stdout.strip() == "ok", r.stdout)
    # No driver at all: the device enumeration's own failure, named.
    code = """
    import callguard
    try:
        callguard.load_binary("saxpy", b"\\x03\\x02\\x23\\x07saxpy\\0", 0, 0)
        raise SystemExit("loaded without a driver")
    except callguard.DriverError as e:
        assert e.function == "zeInit" and e.result_name == "ZE_RESULT_ERROR_UNINITIALIZED", vars(e)
    print("ok")
    """
    r = ok(python(code, env={"ZE_ENABLE_ALT_DRIVERS": os.path.join(TMP, "no-such-driver.so")}), "no driver")
    check(r.stdout.strip() == "ok", r.stdout)


def load_binary_opencl_source_on_pocl():
    """api="cl": OpenCL C built on PoCL through a context and device made
    with ctypes, then the same source again from the memory cache; a
    build error raises DriverError with clBuildProgram's log."""
    os.makedirs(TMP, exist_ok=True)
    code = """
    import ctypes, callguard
    cl = ctypes.CDLL("libOpenCL.so.1")
    platform, device = ctypes.c_void_p(), ctypes.c_void_p()
    assert cl.clGetPlatformIDs(1, ctypes.byref(platform), None) == 0
    assert cl.clGetDeviceIDs(platform, ctypes.c_uint64(0xFFFFFFFF), 1, ctypes.byref(device), None) == 0
    err = ctypes.c_int(0)
    cl.clCreateContext.restype = ctypes.c_void_p
    context = ctypes.c_void_p(cl.clCreateContext(None, 1, ctypes.byref(device), None, None, ctypes.byref(err)))
    assert err.value == 0 and context.value
    src = b"__kernel void twice(__global float *x) { x[get_global_id(0)] *= 2.0f; }"
    r = callguard.load_binary("twice", src, 0, device, "-cl-fast-relaxed-math", api="cl", context=context,
                              format="source", cache="memory")
    module, function, n_regs, n_spills, n_max_threads = r
    assert module and function and n_max_threads > 0 and n_regs == -1 and n_spills == -1, r
    assert "-cl-fast-relaxed-math" in r.build_flags and r.source == "built", (r.build_flags, r.source)
    again = callguard.load_binary("twice", src, 0, device, "-cl-fast-relaxed-math", api="cl", context=context,
                                  format="source", cache="memory")
    assert again.module == module and again.source == "memory", (again, again.source)
    try:
        callguard.load_binary("bad", b"__kernel void bad( { }", 0, device, api="cl", context=context,
                              format="source", cache=False)
        raise SystemExit("a kernel that does not compile was built")
    except callguard.DriverError as e:
        assert e.function == "clBuildProgram" and e.result_name == "CL_BUILD_PROGRAM_FAILURE", vars(e)
        assert "error" in e.build_log, e.build_log
    try:
        callguard.load_binary("twice", src, 0, device, api="cl")
        raise SystemExit("cl without a context accepted")
    except ValueError as e:
        assert "context" in str(e), str(e)
    print("ok")
    """
    r = ok(python(code, env={"POCL_MAX_PTHREAD_COUNT": "1", "POCL_CACHE_DIR": os.path.join(TMP, "pocl"),
                             "CALLGUARD_CACHE_DIR": os.path.join(TMP, "cache")}), "load_binary on PoCL")
    check(r.stdout.strip() == "ok", r.stdout)


# api="cl" from SPIR-V on Intel's CPU OpenCL runtime: a pool of N threads,
# released together, each loading k<i>.spv; the figures and where each
# module came from as JSON.
CL_IL_PROGRAM = """
import concurrent.futures, ctypes, json, os, sys, threading
import callguard
n, spirv = int(sys.argv[1]), sys.argv[2]
cl = ctypes.CDLL("libOpenCL.so.1")
platform, device = ctypes.c_void_p(), ctypes.c_void_p()
assert cl.clGetPlatformIDs(1, ctypes.byref(platform), None) == 0
assert cl.clGetDeviceIDs(platform, ctypes.c_uint64(0xFFFFFFFF), 1, ctypes.byref(device), None) == 0
name = ctypes.create_string_buffer(256)
assert cl.clGetPlatformInfo(platform, 0x0902, 256, name, None) == 0  # CL_PLATFORM_NAME
err = ctypes.c_int(0)
cl.clCreateContext.restype = ctypes.c_void_p
context = ctypes.c_void_p(cl.clCreateContext(None, 1, ctypes.byref(device), None, None, ctypes.byref(err)))
assert err.value == 0 and context.value
barrier = threading.Barrier(n)
def load(i):
    with open(os.path.join(spirv, "k%d.spv" % i), "rb") as f:
        il = f.read()
    barrier.wait()
    r = callguard.load_binary("k%d" % i, il, 0, device, "-cl-mad-enable", api="cl", context=context)
    fname = ctypes.create_string_buffer(64)  # the kernel handle is Intel's: its name
    assert cl.clGetKernelInfo(ctypes.c_void_p(r.function), 0x1190, 64, fname, None) == 0
    return dict(zip(r._fields, r), build_flags=r.build_flags, build_log=r.build_log, source=r.source,
                simd_width=r.simd_width, local_bytes=r.local_bytes, private_bytes=r.private_bytes,
                kernel_name=fname.value.decode())
with concurrent.futures.ThreadPoolExecutor(n) as pool:
    results = list(pool.map(load, range(n)))
try:
    callguard.load_binary("k0", b"no SPIR-V at all, only words", 0, device, api="cl", context=context, cache=False)
    bad = "loaded"
except callguard.OutOfResources as e:
    bad = "out of resources: %s" % e
except callguard.DriverError as e:
    bad = "%s %s" % (e.function, e.result_name)
print(json.dumps({"platform": name.value.decode(), "results": results, "bad": bad,
                  "stats": callguard.load_stats()}))
"""


def load_binary_opencl_il_on_intel():
    """api="cl" from real SPIR-V (clCreateProgramWithIL) on Intel's CPU
    OpenCL runtime (build-venv, scripts/setup-venv.sh): 16 threads at once
    under `callguard run --serialize clBuildProgram`, each kernel with
    Intel's build log and CL_KERNEL_* figures; a second process loads all
    16 from the disk cache; two damaged entries are reported, rebuilt and
    replaced; bytes that are no SPIR-V raise DriverError naming
    clCreateProgramWithIL and its result."""
    lib, venv, spirv = (os.environ.get(k, "") for k in ("CG_INTEL_OCL", "CG_INTEL_OCL_VENV", "CG_LOAD_SPIRV_DIR"))
    check(spirv and os.path.isdir(spirv), "no SPIR-V made at build time (clang-14, llvm-spirv-14): %r" % spirv)
    if not os.path.exists(lib):
        if venv and not os.path.exists(venv):
            print("SKIP: no %s (Intel's CPU OpenCL runtime): %s does not exist; run scripts/setup-venv.sh" % (lib, venv))
            return SKIP
        raise AssertionError("%s (Intel's CPU OpenCL runtime) is missing: scripts/setup-venv.sh installs it" % lib)
    os.makedirs(TMP, exist_ok=True)
    icd = os.path.join(TMP, "icd")
    os.makedirs(icd, exist_ok=True)
    with open(os.path.join(icd, "intel-cpu.icd"), "w") as f:
        f.write(lib + "\n")
    prog = os.path.join(TMP, "cl_il_program.py")
    with open(prog, "w") as f:
        f.write(CL_IL_PROGRAM)
    cache = os.path.join(TMP, "cache")
    shutil.rmtree(cache, ignore_errors=True)
    env = {"OCL_ICD_VENDORS": icd, "CALLGUARD_CACHE_DIR": cache}
    runs = [([VCG, "run", "--api", "cl", "--serialize", "clBuildProgram", "--", VPY, prog, "16", spirv], "built",
             {"builds": 17, "disk_writes": 16, "disk_hits": 0, "corrupt": 0}),
            ([VPY, prog, "16", spirv], "disk", {"builds": 1, "disk_writes": 0, "disk_hits": 16, "corrupt": 0})]
    # (each run's last build is the bad IL's, uncached)
    for n, (cmd, source, want) in enumerate(runs, 1):
        r = ok(run(cmd, env=env, cwd=TMP), "load_binary on Intel, run %d" % n)
        out = json.loads(r.stdout.splitlines()[-1])
        check(out["platform"] == "Intel(R) OpenCL", "Intel's platform: %s" % out["platform"])
        res = out["results"]
        check(len(res) == 16 and all(x["module"] and x["function"] for x in res), "16 modules and kernels: %s" % res)
        check([x["kernel_name"] for x in res] == ["k%d" % i for i in range(16)], "each kernel named: %s" % res)
        check(all(x["n_max_threads"] > 0 and x["simd_width"] > 0 and x["n_regs"] == -1 and x["n_spills"] == -1
                  and x["local_bytes"] >= 0 and x["private_bytes"] >= 0 for x in res), "CL_KERNEL_* figures: %s" % res)
        check(all(x["build_flags"] == "-cl-mad-enable" and x["build_log"].strip() for x in res),
              "the flags and Intel's build log: %s" % res)
        check(all(x["source"] == source for x in res), "run %d: every module %s: %s" % (n, source, res))
        check({k: out["stats"][k] for k in want} == want, "run %d: %s, expected %s" % (n, out["stats"], want))
        check(out["bad"] == "clCreateProgramWithIL CL_INVALID_VALUE", "bad IL: %s" % out["bad"])
    # A flipped byte in one entry, another truncated: both reported, rebuilt and replaced.
    entries = sorted(glob.glob(os.path.join(cache, "load-v1", "[0-9a-f]*")))
    check(len(entries) == 16, "16 entries: %s" % entries)
    with open(entries[0], "r+b") as f:
        f.seek(-2, os.SEEK_END)
        c = f.read(1)
        f.seek(-2, os.SEEK_END)
        f.write(bytes([c[0] ^ 0x5A]))
    os.truncate(entries[1], 40)
    r = ok(run([VPY, prog, "16", spirv], env=env, cwd=TMP), "load_binary on Intel after damage")
    out = json.loads(r.stdout.splitlines()[-1])
    want = {"builds": 3, "disk_writes": 2, "disk_hits": 14, "corrupt": 2}
    check({k: out["stats"][k] for k in want} == want, "after damage: %s, expected %s" % (out["stats"], want))
    check(r.stderr.count("is corrupt") == 2, "two reports: %s" % r.stderr)
    check(sorted(x["source"] for x in out["results"]) == ["built"] * 2 + ["disk"] * 14, out["results"])


def load_binary_cuda_on_standin():
    """api="cuda" from Python on the stand-in libcuda.so.1 (tests/cuda/standin.c) under `callguard run
    --api cuda`: tests/gpu/load_binary_cuda.py (what tests/gpu/run.sh runs on the H200 with the same PTX)
    loads 16 PTX modules from 16 threads with the stand-in's JIT aborting on overlap and cuModuleLoadData
    and cuLinkComplete serialized in one domain: all load with the primary context, Triton's figures, the
    shared memory opt-in, OutOfResources beyond it, CG_ENOENT, a DriverError with CUDA's result name; a
    second process, without callguard run, takes all 16 cubins from disk; unserialized, the threads meet
    in the JIT and the stand-in aborts (the GIL was released)."""
    standin = os.environ.get("CG_CUDA_STANDIN", "")
    check(os.path.exists(standin), "the stand-in libcuda.so.1 %r (CMake passes it)" % standin)
    os.makedirs(TMP, exist_ok=True)
    cache = os.path.join(TMP, "cache")
    shutil.rmtree(cache, ignore_errors=True)
    script = os.path.join(SRC, "tests", "gpu", "load_binary_cuda.py")
    ptx = os.path.join(SRC, "tests", "gpu", "ptx")
    env = {"CALLGUARD_CUDA_LIBRARY": standin, "CALLGUARD_CACHE_DIR": cache, "CGCUDA_COMPILER_RACE": "abort",
           "CGCUDA_COMPILE_MS": "30"}
    serialized = [VCG, "run", "--api", "cuda", "--serialize", "cuModuleLoadData=jit,cuLinkComplete=jit", "--"]
    # The second process runs without callguard: the stand-in found on LD_LIBRARY_PATH, CUDA's result names
    # from its cuGetErrorName, and the cache key the same as under callguard run (the driver's real path).
    plain = dict(env, LD_LIBRARY_PATH=os.path.dirname(standin))
    for expect, cmd, e in (("built", serialized, env), ("disk", [], plain)):
        r = run(cmd + [VPY, script, ptx, expect], env=e, cwd=TMP, preexec_fn=no_core)
        check(r.returncode == 0 and "FAIL" not in r.stdout and r.stdout.count("PASS: ") == 9,
              "load_binary_cuda.py %s: exit %d\n%s\n%s" % (expect, r.returncode, r.stdout[:3000], r.stderr[-2000:]))
        out = json.loads(r.stdout.splitlines()[-1])
        check(len(out["results"]) == 16 and out["cache_dir"] == cache, out)
    shutil.rmtree(cache, ignore_errors=True)
    r = run([VCG, "run", "--api", "cuda", "--", VPY, script, ptx, "built"], env=env, cwd=TMP, preexec_fn=no_core)
    check(r.returncode in (-6, 134) and "CGCUDA_COMPILER_RACE=abort" in r.stderr,
          "unserialized, the stand-in's JIT race aborts: exit %d\n%s" % (r.returncode, r.stderr[-2000:]))


def abi3_build_serves_python312():
    """The one cp39-abi3 build, installed unchanged into a 3.12 venv."""
    # On PATH, or pyenv's (whose shim on PATH answers only for its selected version).
    pyenv = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    found = [p for p in [shutil.which("python3.12")] + sorted(glob.glob(pyenv + "/versions/3.12*/bin/python3.12"))
             if p and run([p, "-c", "import venv, ensurepip"]).returncode == 0]
    py312 = found[0] if found else None
    if not py312:
        print("no python3.12 with venv here: skipped")
        return SKIP
    wheels = os.path.join(WORK, "wheels")
    shutil.rmtree(wheels, ignore_errors=True)
    # The same build directory as the fixture's: nothing to compile again.
    ok(run([os.path.join(VENV, "bin", "pip"), "wheel", "--no-deps", "-w", wheels,
            "--config-settings=build-dir=" + os.path.join(WORK, "skbuild"), SRC],
           env={"CMAKE_BUILD_PARALLEL_LEVEL": "2"}, timeout=1500), "pip wheel")
    found = glob.glob(os.path.join(wheels, "callguard-*.whl"))
    check(len(found) == 1 and os.path.basename(found[0]).endswith("-cp39-abi3-linux_x86_64.whl"),
          "one cp39-abi3 wheel: %s" % found)
    venv312 = os.path.join(WORK, "venv312")
    shutil.rmtree(venv312, ignore_errors=True)
    ok(run([py312, "-m", "venv", venv312]), "python3.12 -m venv")
    ok(run([os.path.join(venv312, "bin", "pip"), "install", found[0]], timeout=600), "pip install the wheel on 3.12")
    os.makedirs(TMP, exist_ok=True)
    r = ok(python("""
        import sys, ctypes, callguard
        ctypes.CDLL(callguard.layer("ze"))
        assert callguard.serialize("zeModuleCreate") is False
        print(sys.version_info[:2], callguard.__file__)
        """, interpreter=os.path.join(venv312, "bin", "python")), "import callguard on 3.12")
    check(r.stdout.startswith("(3, 12)") and venv312 in r.stdout, r.stdout)


if __name__ == "__main__":
    main()
