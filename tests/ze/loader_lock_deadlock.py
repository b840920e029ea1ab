"""The GIL / loader-lock deadlock of triton-lang/triton PR #11265, on the Level Zero simulator.

Thread B walks the loaded objects with dl_iterate_phdr (through ctypes.CDLL, so without the GIL); glibc holds
its loader lock for the whole walk, and each visit is a ctypes callback, which needs the GIL. Thread A (the main
thread) holds the GIL and calls zeModuleCreate through ctypes.PyDLL, which keeps it for the whole call; the
simulator's first SPIR-V compile dlopens its compiler library (as NEO dlopens IGC), which needs the loader
lock. So A waits for B's lock and B for A's GIL: neither returns. Released around zeModuleCreate (callguard run
--release-gil), B's visit runs, the walk ends, the dlopen goes on and this prints "zeModuleCreate 0" and that
the compiler library is loaded.

The order is forced, not timed: A calls zeModuleCreate only once B is inside the walk (`inside`), and B goes on
only once A is about to call (`go`), which A sets without letting the GIL go before the call: the switch
interval is made longer than any run, so the GIL changes hands only where a thread blocks.
Run with ZE_ENABLE_ALT_DRIVERS naming libze_cgsim.so.
"""
import ctypes
import sys
import threading

sys.setswitchinterval(1000.0)
ze = ctypes.PyDLL("libze_loader.so.1")
libc = ctypes.CDLL(None)
ptr = ctypes.c_void_p


def ok(r, what):
    if r != 0:
        raise SystemExit("%s: ze_result_t 0x%x" % (what, r))


class ContextDesc(ctypes.Structure):
    _fields_ = [("stype", ctypes.c_int), ("pNext", ptr), ("flags", ctypes.c_uint32)]


class ModuleDesc(ctypes.Structure):
    _fields_ = [("stype", ctypes.c_int), ("pNext", ptr), ("format", ctypes.c_int), ("inputSize", ctypes.c_size_t),
                ("pInputModule", ctypes.c_char_p), ("pBuildFlags", ctypes.c_char_p), ("pConstants", ptr)]


# Everything up to the module: driver, device, context (no loader lock needed later but the compile's).
ok(ze.zeInit(0), "zeInit")
n = ctypes.c_uint32(1)
driver, device, context, module = ptr(), ptr(), ptr(), ptr()
ok(ze.zeDriverGet(ctypes.byref(n), ctypes.byref(driver)), "zeDriverGet")
n = ctypes.c_uint32(1)
ok(ze.zeDeviceGet(driver, ctypes.byref(n), ctypes.byref(device)), "zeDeviceGet")
ok(ze.zeContextCreate(driver, ctypes.byref(ContextDesc(0xd, None, 0)), ctypes.byref(context)), "zeContextCreate")
spirv = b"\x03\x02\x23\x07" b"saxpy:args=4\0"  # the simulator's test convention (docs/zesim.md)
desc = ModuleDesc(0x1B, None, 0, len(spirv), spirv, None, None)  # ZE_STRUCTURE_TYPE_MODULE_DESC, IL_SPIRV
module_create = ze.zeModuleCreate  # looked up now: nothing but the call itself after B is inside
module_create.argtypes = [ptr, ptr, ptr, ptr, ptr]

inside, go = threading.Event(), threading.Event()
VISIT = ctypes.CFUNCTYPE(ctypes.c_int, ptr, ctypes.c_size_t, ptr)


def visit(info, size, data):
    if not inside.is_set():
        inside.set()
        go.wait()  # the GIL left, the loader lock kept
    return 0


visitor = VISIT(visit)
b = threading.Thread(target=lambda: libc.dl_iterate_phdr(visitor, None))
b.start()
inside.wait()
go.set()
r = module_create(context, device, ctypes.byref(desc), ctypes.byref(module), None)  # thread A: GIL held
b.join()
with open("/proc/self/maps") as maps:
    loaded = "libze_cgsim_compiler.so" in maps.read()
print("zeModuleCreate %d, compiler library %s" % (r, "loaded" if loaded else "not loaded"))
