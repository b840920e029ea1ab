"""Prints what this process's own symbol look-ups find, as a binding probing for a library would: for each
API, its names looked up in the global scope (dlopen(NULL) + dlsym, and dlsym(RTLD_DEFAULT)) before the
library is loaded, then after loading it with RTLD_GLOBAL, and whether a failed look-up left dlerror() set.
tests/clients/test_clients.py runs it plainly and under `callguard run` and compares the two outputs.

    probe_symbols.py SONAME:NAME[,NAME...] ..."""
import ctypes
import sys

libc = ctypes.CDLL(None)
libc.dlsym.restype = ctypes.c_void_p
libc.dlsym.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
libc.dlerror.restype = ctypes.c_char_p
main = ctypes.CDLL(None)  # dlopen(NULL): the main program's handle, the global scope


def seen(names):
    out = []
    for n in names:
        try:
            main[n]  # dlsym(handle, n); a new function object each time, nothing cached
            by_handle = 1
        except AttributeError:
            by_handle = 0
        libc.dlerror()
        p = libc.dlsym(None, n.encode())  # RTLD_DEFAULT
        err = libc.dlerror()
        out.append("%s=%d%d%s" % (n, by_handle, p is not None, "" if p or err else "(no dlerror)"))
    return " ".join(out)


print("dlerror at start:", libc.dlerror())
for arg in sys.argv[1:]:
    soname, names = arg.split(":")
    names = names.split(",")
    print(soname, "before:", seen(names))
    try:
        ctypes.CDLL(soname, mode=ctypes.RTLD_GLOBAL)
        loaded = "loaded"
    except OSError:
        loaded = "not found"
    print(soname, loaded + ":", seen(names))
