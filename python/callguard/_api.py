"""What `import callguard` gives (callguard/__init__.py re-exports it):
libcallguard's C API (callguard._native) for Python, with entry point names
checked against what the package's layers could know (_names.py)."""
import collections
import json
import os

from .errors import DriverError, Error, OutOfResources  # before _native: it raises these
from . import _native, _names
from ._tree import docs, executable, layer, prefix, simulator

__all__ = [
    "DriverError", "Error", "LoadedBinary", "OutOfResources", "SiteStats", "cache_dir", "configure", "docs",
    "enable_stats", "executable", "layer", "layers", "load_binary", "load_policy", "load_stats", "prefix", "read_report",
    "reset_stats", "result_name", "serialize", "set_blocking", "set_runtime", "set_stall_ms", "set_transition",
    "simulator", "sites", "stats", "write_report",
]
_CG_ENOENT = -2  # include/callguard/callguard.h

SiteStats = collections.namedtuple(
    "SiteStats", "calls nested errors total_ns max_ns lock_wait_ns stalls stall_ns states peak_inside peak_waiting",
    defaults=(0, None, None))
SiteStats.__doc__ = ("One entry point's counters (cg_site_stats; times in nanoseconds; errors: failures, "
                     "states: results that report a state, such as ZE_RESULT_NOT_READY; peak_inside, peak_waiting: "
                     "the most threads inside the driver call, and waiting for the site's lock, at once, or None "
                     "where not measured: only blocking or serialized entry points count them).")


def _known(site):
    """Refuses at once a name no layer has and none of the package's could
    have (a typo), naming the closest one: libcallguard would keep it for a
    layer that never comes."""
    message = _names.unknown(site)
    if message:
        raise Error(message, _CG_ENOENT, "CG_ENOENT")


def serialize(site, domain=None, scope="process"):
    """Serializes `site` in `domain` (default: a domain of its own name);
    domain "" removes serialization. scope "handle": one lock per first
    input handle; "once": the domain's lock only until a call of `site`
    first succeeds, then none; "shared": the domain's lock taken shared
    (any number of shared callers at once, none beside an exclusive one;
    a waiting exclusive caller keeps new shared ones out). True when kept for a layer not loaded yet (outside
    `callguard run`), False when applied. A name no layer could have is
    refused:

    >>> callguard.serialize("clBuildProgramm")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    callguard.errors.Error: unknown entry point 'clBuildProgramm': ...; did you mean 'clBuildProgram' (cl)?
    """
    _known(site)
    if domain is None:
        domain = site
    return bool(_native.serialize(site, domain, scope))


def set_transition(site, transition):
    """When calls to `site` (None: every site) leave the GIL."""
    _known(site)
    return bool(_native.set_transition(site, transition))


def set_blocking(site, blocking, reason=None):
    """Marks `site` blocking (its calls may wait in the driver) or not."""
    _known(site)
    return bool(_native.set_blocking(site, blocking, reason))


def configure(variable, value):
    """Applies one CALLGUARD_* setting as the environment would."""
    return bool(_native.configure(variable, value))


def load_policy(path):
    """Reads a policy file (INI: [defaults] and one section per entry point)."""
    return bool(_native.policy_load(os.fspath(path)))


def set_runtime(name):
    _native.set_runtime(name)


def set_stall_ms(ms):
    _native.set_stall_ms(ms)


def enable_stats(on=True):
    """Statistics are off until a report is asked for or they are switched on."""
    _native.stats_enable(on)


def stats(site):
    """This process's counters of one entry point. Its layer must be loaded
    (`callguard run` preloads them): else Error says why there are none."""
    _known(site)
    try:
        s = _native.get_stats(site)
    except Error as e:
        if e.status_name != "CG_ENOENT":
            raise
        raise Error(_why_not_counted(site), e.status, e.status_name) from None
    if not s["peak_inside"]:
        s["peak_inside"] = s["peak_waiting"] = None  # not measured at this entry point
    return SiteStats(**s)


def reset_stats():
    _native.reset_stats()


def write_report(path, format="json"):
    """Writes this process's report ("-": stderr)."""
    _native.report_write(os.fspath(path), format)


def read_report(path):
    """A saved JSON report (this process's or `callguard run --report`'s),
    checked by libcallguard (schema, version, truncation) first."""
    path = os.fspath(path)
    _native.report_convert(path, os.devnull, "json")
    # What libcallguard's reader lets through and Python's does not (bytes
    # that are no UTF-8, a file changed since the check) is no report either.
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise Error(f"{path}: not a report Python's json module can read: {e}", _CG_EFORMAT, "CG_EFORMAT") from None


def sites(api=None):
    """The entry points of the layers loaded in this process, with their policies."""
    return _native.list_sites(api)


def layers():
    """The layers loaded in this process."""
    return _native.list_layers()


def result_name(api, result):
    """The name of an API's result code, or None for a code the API does not
    define:

    >>> callguard.result_name("ze", 0x70000004)
    'ZE_RESULT_ERROR_MODULE_BUILD_FAILURE'
    >>> callguard.result_name("cl", -11)
    'CL_BUILD_PROGRAM_FAILURE'

    A loaded layer names its API's codes; the package itself knows Level
    Zero's and OpenCL's, and CUDA's where the driver is loaded. Other APIs
    need their layer loaded: Error says so."""
    loaded = {l["api"] for l in _native.list_layers()}
    if api not in loaded and api not in _names.installed_apis():
        raise ValueError("api %r: expected one of %s" % (api, ", ".join(sorted(loaded.union(_names.installed_apis())))))
    name = _native.result_name(api, result)
    if name is None and api not in loaded and api not in _native.RESULT_TABLES.split(","):
        raise Error("result_name(%r, %d): %s, and only a loaded layer%s names %s's results; %s"
                    % (api, result, _not_loaded(api), " or driver" if api == "cuda" else "", api, _load_hint(api)),
                    _CG_ENOENT, "CG_ENOENT")
    return name


def _not_loaded(api):
    return "no %s layer is loaded in this process" % api


def _load_hint(api):
    return ("run the program under `callguard run`, or load the layer first: ctypes.CDLL(callguard.layer(%r))"
            % api)


def _why_not_counted(site):
    """Why `site`, a name some layer has, has no counters here."""
    api = _names.api_of(site)
    if api is None:
        return "stats(%r): no layer loaded in this process has it" % site
    if any(l["api"] == api for l in _native.list_layers()):
        return ("stats(%r): the %s layer passes %s through unguarded (a name its API's header does not declare): "
                "its calls are not counted" % (site, api, site))
    return "stats(%r): %s, so its calls are not counted; %s" % (site, _not_loaded(api), _load_hint(api))


# ---- load_binary -------------------------------------------------------------------

_APIS = {"ze": 1, "cl": 2, "cuda": 3}
_FORMATS = {"il": 0, "native": 1, "source": 2}
_SOURCES = {0: "built", 1: "memory", 2: "disk"}
_NO_CACHE, _NO_DISK_CACHE, _NO_RETRY = 0x1, 0x2, 0x4
_CG_EFORMAT = -5  # include/callguard/callguard.h
_INT_MAX, _SSIZE_MAX = 2**31 - 1, 2**63 - 1  # a CUdevice is a C int; shared_mem a size_t below Py_ssize_t's limit


class LoadedBinary(collections.namedtuple("LoadedBinary", "module function n_regs n_spills n_max_threads")):
    """What load_binary returns: unpacks as Triton's 5-tuple (module and
    function are the handles as ints). Also: .build_flags (the flags
    actually used: after a large-register-file retry, with its flag),
    .build_log, .source ("built", "memory" or "disk": where the module came
    from), .retried, .spill_bytes, .private_bytes, .local_bytes, .simd_width
    (-1 where the API does not say)."""


def _handle(value, what):
    if value is None:
        return None
    value = getattr(value, "value", value)  # ctypes.c_void_p
    if value is None or isinstance(value, int):
        return value
    raise TypeError(f"{what}: expected a handle (an int address or a ctypes pointer), not {value!r}")


def load_binary(name, kernel_bytes, shared_mem, device, build_flags="", is_spv=True, *, api="ze", context=None,
                format=None, max_spills=0, cache=True, retry=True):
    """Turns kernel bytes into a loaded module and the kernel `name` of it.

    api "ze": device is a device number (every Level Zero device of every
    driver, in the loader's order; callguard makes one context per driver
    and keeps it), or a ze_device_handle_t with its `context`. is_spv:
    SPIR-V (True) or a native binary (False); build_flags are the build
    options ("-cl-intel-256-GRF-per-thread"...). A build that fails, or
    spills more than max_spills (0: the default, 8), is retried once with
    the large register file unless retry=False; the better result is kept.
    api "cl": device and context are a cl_device_id and a cl_context;
    format "source" takes OpenCL C. api "cuda": device is the CUdevice
    ordinal; PTX (is_spv=True: IL) or a cubin (False); shared_mem above
    48 KiB opts the function in.

    cache: True (memory and disk: $XDG_CACHE_HOME/callguard, or
    CALLGUARD_CACHE_DIR), "memory", or False (a fresh module, never
    unloaded). The GIL is released for all driver work.

    Raises DriverError (OutOfResources for an out-of-resources build) with
    the failed call, its result code's name and the build log; Error for
    a kernel name the module lacks (CG_ENOENT); ValueError for bad values.
    """
    if not getattr(_native, "HAVE_LOAD_BINARY", 0):
        raise NotImplementedError("this callguard package was built without cg_load_binary (libcallguard-load)")
    if api not in _APIS:
        raise ValueError(f"api {api!r}: expected 'ze', 'cl' or 'cuda'")
    if format is None:
        format = "il" if is_spv else "native"
    if format not in _FORMATS:
        raise ValueError(f"format {format!r}: expected 'il', 'native' or 'source'")
    if cache not in (True, False, "memory"):
        raise ValueError(f"cache {cache!r}: expected True, 'memory' or False")
    flags = (_NO_CACHE if cache is False else _NO_DISK_CACHE if cache == "memory" else 0) | (0 if retry else _NO_RETRY)
    if not isinstance(shared_mem, int) or isinstance(shared_mem, bool):
        raise TypeError(f"shared_mem {shared_mem!r}: expected a number of bytes (an int)")
    if not 0 <= shared_mem <= _SSIZE_MAX:
        raise ValueError(f"shared_mem {shared_mem}: expected a number of bytes from 0 to {_SSIZE_MAX}")
    number, device_handle = -1, None
    if api == "cuda" or (api == "ze" and context is None):
        if not isinstance(device, int) or isinstance(device, bool):
            raise TypeError(f"device {device!r}: expected a device number (an int)"
                            + (", or a handle with its context" if api == "ze" else ""))
        if not 0 <= device <= _INT_MAX:
            raise ValueError(f"device {device}: expected a device number from 0 to {_INT_MAX}"
                             + (" (a CUdevice ordinal)" if api == "cuda" else ""))
        number = device
    else:
        if context is None:
            raise ValueError(f"api {api!r} with a device handle needs its context")
        device_handle = _handle(device, "device")
    r = _native.load_binary(api=_APIS[api], name=name, kernel=kernel_bytes, shared_mem=shared_mem, device=number,
                            context=_handle(context, "context"), device_handle=device_handle,
                            build_flags=build_flags or None, format=_FORMATS[format], max_spills=max_spills,
                            flags=flags)
    out = LoadedBinary(*r[:5])
    (out.build_flags, out.build_log, source, out.retried, out.spill_bytes, out.private_bytes, out.local_bytes,
     out.simd_width) = r[5:]
    out.source = _SOURCES.get(source, source)
    out.retried = bool(out.retried)
    return out


def load_stats():
    """This process's load_binary counters (requests, memory_hits, waits,
    disk_hits, builds, retries, disk_writes, corrupt, write_failures,
    evictions)."""
    if not getattr(_native, "HAVE_LOAD_BINARY", 0):
        raise NotImplementedError("this callguard package was built without cg_load_binary (libcallguard-load)")
    return _native.load_stats()


def cache_dir():
    """The disk cache's directory ("" when the disk cache is off)."""
    if not getattr(_native, "HAVE_LOAD_BINARY", 0):
        raise NotImplementedError("this callguard package was built without cg_load_binary (libcallguard-load)")
    return _native.cache_dir()
