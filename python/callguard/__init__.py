"""callguard: safe, observable GPU driver API calls from Python.

Run a program under `callguard run` (the layers preloaded: OpenCL, Level
Zero, CUDA, HIP, MPI), then steer and read them from inside it:

    serialize(site, domain=None, scope="process")   one thread at a time in site
    set_transition(site, "always" | "blocking" | "never"), set_blocking(site, on)
    configure(variable, value), load_policy(path), set_runtime(name), set_stall_ms(ms)
    enable_stats(), stats(site) -> SiteStats, reset_stats()
    write_report(path, format="json"), read_report(path) -> dict
    sites(api=None), layers(), result_name(api, code)
    load_binary(name, kernel_bytes, shared_mem, device, ...) -> LoadedBinary
    load_stats(), cache_dir(), executable(), simulator(), layer(api), docs(name)
    prefix(): the install tree, for find_package(callguard) and pkg-config
    Error, DriverError, OutOfResources

help(callguard.NAME) describes one. The documentation ships in the package:
`python -m callguard docs python` prints this module's (docs/python.md),
`python -m callguard docs` lists the others, callguard.docs(name) is a path.
"""
# The code is in _api, and this package has no __all__ of its own: so
# help(callguard) is this page, not every docstring (pydoc documents each
# name of __all__ in full).
from ._api import *  # noqa: F401,F403
from . import _native

__version__ = _native.VERSION
