"""callguard: safe, observable GPU driver API calls (docs/python.md).

Policies (applied to the layers loaded in this process, kept for those that
load later; a setting kept for a layer not loaded yet returns True):
    serialize(site, domain=None, scope="process")
    set_transition(site_or_None, "always" | "blocking" | "never")
    set_blocking(site, blocking, reason=None)
    configure(variable, value)      as the environment would: configure("CALLGUARD_SERIALIZE", "zeModuleCreate")
    load_policy(path)               a policy file (docs/configuration.md)
    set_runtime("none" | "auto" | "cpython")
The report:
    enable_stats(on=True), stats(site) -> SiteStats, reset_stats()
    write_report(path, format="json" | "text"), read_report(path) -> dict
What is loaded:
    sites(api=None), layers(), result_name(api, code)
The installed tree: executable(), simulator(), layer(api).
Errors: callguard.Error, callguard.DriverError, callguard.OutOfResources.
"""
import collections
import json
import os

from .errors import DriverError, Error, OutOfResources  # before _native: it raises these
from . import _native
from ._tree import executable, layer, simulator

__version__ = _native.VERSION

__all__ = [
    "DriverError", "Error", "OutOfResources", "SiteStats", "configure", "enable_stats", "executable", "layer",
    "layers", "load_policy", "read_report", "reset_stats", "result_name", "serialize", "set_blocking",
    "set_runtime", "set_stall_ms", "set_transition", "simulator", "sites", "stats", "write_report",
]

SiteStats = collections.namedtuple(
    "SiteStats", "calls nested errors total_ns max_ns lock_wait_ns stalls stall_ns")
SiteStats.__doc__ = "One entry point's counters (cg_site_stats; times in nanoseconds)."


def serialize(site, domain=None, scope="process"):
    """Serializes `site` in `domain` (default: a domain of its own name);
    domain "" removes serialization. scope "handle": one lock per first
    input handle. True when kept for a layer not loaded yet."""
    if domain is None:
        domain = site
    return bool(_native.serialize(site, domain, scope))


def set_transition(site, transition):
    """When calls to `site` (None: every site) leave the GIL."""
    return bool(_native.set_transition(site, transition))


def set_blocking(site, blocking, reason=None):
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
    """This process's counters of one entry point."""
    return SiteStats(**_native.get_stats(site))


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
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def sites(api=None):
    """The entry points of the layers loaded in this process, with their policies."""
    return _native.list_sites(api)


def layers():
    """The layers loaded in this process."""
    return _native.list_layers()


def result_name(api, result):
    """The name of an API's result code ("ze", 0x70000004), or None."""
    return _native.result_name(api, result)
