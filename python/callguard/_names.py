"""Which entry point names a layer could know, to refuse a typo at once.

libcallguard keeps a setting for a name no loaded layer has (a layer may
load later), so outside `callguard run`, where no layer is loaded yet,
serialize("clBuildProgramm") would be kept and never applied. The names
any layer of this package could have are the functions its layers export
(callguard/_tree/lib/libcallguard_API.so: the API's own names, guarded or
passed through); a layer loaded from elsewhere adds its sites. This module
reads the exports from each layer's ELF dynamic symbol table, without
loading the layer (loading one registers it and guards calls).
"""
import difflib
import glob
import os
import struct

from . import _native
from ._tree import LIB

_SHT_DYNSYM, _STT_FUNC, _STV_DEFAULT = 11, 2, 0
_GLOBAL_OR_WEAK = (1, 2)
_exports = None  # {name: api} of the installed layers, read once
_unreadable = []  # layers whose exports could not be read: then, as with none, no name is refused


def _elf_functions(path):
    """The functions an x86-64 ELF shared object defines and exports."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError("not a 64-bit little-endian ELF file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    names = set()
    for _, kind, _, _, offset, size, link, _, _, entsize in sections:
        if kind != _SHT_DYNSYM or not entsize:
            continue
        str_offset = sections[link][4]
        for at in range(offset, offset + size, entsize):
            name, info, other, shndx = struct.unpack_from("<IBBH", data, at)
            if shndx and info & 0xF == _STT_FUNC and info >> 4 in _GLOBAL_OR_WEAK and other & 3 == _STV_DEFAULT:
                names.add(data[str_offset + name:data.index(b"\0", str_offset + name)].decode())
    return names


def installed():
    """{name: api} for every function the package's layers export."""
    global _exports
    if _exports is None:
        exports = {}
        for path in sorted(glob.glob(os.path.join(LIB, "libcallguard_*.so"))):
            api = os.path.basename(path)[len("libcallguard_"):-len(".so")]
            try:
                for name in _elf_functions(path):
                    exports.setdefault(name, api)
            except (OSError, ValueError, struct.error, IndexError, UnicodeDecodeError):
                _unreadable.append(path)
        _exports = exports
    return _exports


def installed_apis():
    return sorted(set(installed().values()))


def loaded_sites():
    """{name: api} for the sites of the layers loaded in this process."""
    return {s["name"]: s["api"] for s in _native.list_sites(None)}


def api_of(site):
    """The API of a name a layer has or could have, else None."""
    return installed().get(site) or loaded_sites().get(site)


def closest(site):
    """'clBuildProgram' (cl), the known name nearest to `site`, or ''."""
    known = dict(installed(), **loaded_sites())
    same_case = [n for n in known if n.lower() == site.lower()]
    near = same_case or difflib.get_close_matches(site, known, n=1, cutoff=0.75)
    return "%r (%s)" % (near[0], known[near[0]]) if near else ""


def unknown(site):
    """The message refusing a name no layer has or could have, or None when
    some layer has it (or its exports could not be read)."""
    if site is None or api_of(site) or _unreadable or not installed():
        return None
    near = closest(site)
    apis = ", ".join(installed_apis()) or "none"
    return ("unknown entry point '%s': no layer exports it (this package's layers: %s)%s"
            % (site, apis, "; did you mean %s?" % near if near else ""))
