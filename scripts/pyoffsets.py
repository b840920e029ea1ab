#!/usr/bin/env python3
"""Writes src/runtime/pyread_offsets.h: the struct offsets pyread.c needs
for CPython 3.9-3.12, which publish no _Py_DebugOffsets (3.13+ do), and
where the GIL's state lies in 3.9-3.13 (3.13's debug offsets omit it);
with --names, src/runtime/pynames_offsets.h: what pynames.c reads of
dicts, modules, instances and ints in 3.9-3.13 to find threading's names
(no debug offsets say where those lie).

Each interpreter's own headers are compiled with Py_BUILD_CORE into a tiny
program that prints offsetof() values, so the table is what that minor
version's compiler saw, not a transcription. Two structs 3.9 installs no
header of (its dict keys object, Objects/dict-common.h; its module object,
Objects/moduleobject.c), and 3.10's dict keys, are written out in the
probe as those versions define them; the tests read real dicts and
threads through them (tests/python/pyread.py, tests/watchdog/test_threads.py).

With --debug, src/runtime/pyread_debug.h: where each field pyread.c reads
lies in the _Py_DebugOffsets of 3.13+ (at the start of _PyRuntime), in its
uint64_t words, by field name: offsetof(_Py_DebugOffsets, SECTION.FIELD)
compiled against each installed version's headers (3.13+), or against a
header of CPython's for a version not installed here, given as
MINOR=HEADER (the struct's typedef is taken from it alone: it is uint64_t
words only). Several headers of one minor version are several shapes
(3.14's changed during its development); pyread.c takes one only where
its fixed values read as they must.

    python3 scripts/pyoffsets.py [PYENV_VERSIONS_DIR] > src/runtime/pyread_offsets.h
    python3 scripts/pyoffsets.py --names [PYENV_VERSIONS_DIR] > src/runtime/pynames_offsets.h
    python3 scripts/pyoffsets.py --debug [PYENV_VERSIONS_DIR] [MINOR=HEADER ...] > src/runtime/pyread_debug.h

Default folder: ~/.pyenv/versions; the newest patch release of each minor
version 3.9-3.12 (3.9-3.13 for the GIL and the names) found there is used."""
import os
import re
import subprocess
import sys
import tempfile

PROBE = r"""
#define Py_BUILD_CORE 1
#include <Python.h>
#include <stddef.h>
#include <stdio.h>
#include "internal/pycore_runtime.h"
#include "internal/pycore_interp.h"
#if PY_VERSION_HEX >= 0x030B0000
#include "internal/pycore_frame.h"
#include "internal/pycore_code.h"
#else
#include "frameobject.h"
#endif
#if PY_VERSION_HEX >= 0x030B0000
#define THREADS_HEAD threads.head
#else
#define THREADS_HEAD tstate_head
#endif
#if PY_VERSION_HEX >= 0x030A0000
#define LINETABLE co_linetable
#else
#define LINETABLE co_lnotab
#endif
#define P(field, value) printf("        .%s = %ld,\n", #field, (long)(value))
int main(void)
{
    printf("    {\n        .minor = %d,\n", PY_MINOR_VERSION);
    P(runtime_interpreters_head, offsetof(_PyRuntimeState, interpreters.head));
    P(interp_next, offsetof(PyInterpreterState, next));
    P(interp_threads_head, offsetof(PyInterpreterState, THREADS_HEAD));
    P(tstate_next, offsetof(PyThreadState, next));
    P(tstate_interp, offsetof(PyThreadState, interp));
    P(tstate_thread_id, offsetof(PyThreadState, thread_id));
#if PY_VERSION_HEX >= 0x030B0000
    P(tstate_native_thread_id, offsetof(PyThreadState, native_thread_id));
    P(tstate_frame, offsetof(PyThreadState, cframe));
    P(cframe_current_frame, offsetof(_PyCFrame, current_frame));
    P(frame_previous, offsetof(_PyInterpreterFrame, previous));
    P(frame_code, offsetof(_PyInterpreterFrame, f_code));
    P(frame_instr, offsetof(_PyInterpreterFrame, prev_instr));
    P(frame_owner, offsetof(_PyInterpreterFrame, owner));
    P(code_adaptive, offsetof(PyCodeObject, co_code_adaptive));
#else
    P(tstate_native_thread_id, -1);
    P(tstate_frame, offsetof(PyThreadState, frame));
    P(cframe_current_frame, -1);
    P(frame_previous, offsetof(PyFrameObject, f_back));
    P(frame_code, offsetof(PyFrameObject, f_code));
    P(frame_instr, offsetof(PyFrameObject, f_lasti));
    P(frame_owner, -1);
    P(code_adaptive, -1);
#endif
    P(code_filename, offsetof(PyCodeObject, co_filename));
    P(code_name, offsetof(PyCodeObject, co_name));
    P(code_firstlineno, offsetof(PyCodeObject, co_firstlineno));
    P(code_linetable, offsetof(PyCodeObject, LINETABLE));
    P(object_type, offsetof(PyObject, ob_type));
    P(bytes_size, offsetof(PyVarObject, ob_size));
    P(bytes_data, offsetof(PyBytesObject, ob_sval));
    P(unicode_length, offsetof(PyASCIIObject, length));
    P(unicode_state, offsetof(PyASCIIObject, state));
    P(unicode_ascii_size, sizeof(PyASCIIObject));
    P(unicode_compact_size, sizeof(PyCompactUnicodeObject));
    printf("    },\n");
    return 0;
}
"""


GIL_PROBE = r"""
#define Py_BUILD_CORE 1
#include <Python.h>
#include <stddef.h>
#include <stdio.h>
#include "internal/pycore_runtime.h"
#include "internal/pycore_interp.h"
#include "internal/pycore_gil.h"
#define P(field, value) printf("        .%s = %ld,\n", #field, (long)(value))
int main(void)
{
    printf("    {\n        .minor = %d,\n", PY_MINOR_VERSION);
#if PY_VERSION_HEX >= 0x030C0000
    P(runtime_gil, -1);
    P(interp_gil_ptr, offsetof(PyInterpreterState, ceval.gil));
    P(interp_gil_storage, offsetof(PyInterpreterState, _gil));
#else
    P(runtime_gil, offsetof(_PyRuntimeState, ceval.gil));
    P(interp_gil_ptr, -1);
    P(interp_gil_storage, -1);
#endif
    P(gil_holder, offsetof(struct _gil_runtime_state, last_holder));
    P(gil_locked, offsetof(struct _gil_runtime_state, locked));
    P(gil_switches, offsetof(struct _gil_runtime_state, switch_number));
    printf("    },\n");
    return 0;
}
"""


NAMES_PROBE = r"""
#define Py_BUILD_CORE 1
#include <Python.h>
#include <stddef.h>
#include <stdio.h>
#include "internal/pycore_runtime.h"
#include "internal/pycore_interp.h"
#if PY_VERSION_HEX >= 0x030B0000
#include "internal/pycore_dict.h"
#include "internal/pycore_object.h"
#else
/* Objects/dict-common.h of 3.9 and 3.10, which they do not install. */
typedef struct {
    Py_hash_t me_hash;
    PyObject *me_key;
    PyObject *me_value;
} PyDictKeyEntry;
struct probe_dictkeys {
    Py_ssize_t dk_refcnt;
    Py_ssize_t dk_size;
    void *dk_lookup;
    Py_ssize_t dk_usable;
    Py_ssize_t dk_nentries;
    char dk_indices[];
};
#endif
#if PY_VERSION_HEX >= 0x030A0000
#include "internal/pycore_moduleobject.h"
#define MODULE_DICT offsetof(PyModuleObject, md_dict)
#else
#define MODULE_DICT sizeof(PyObject) /* Objects/moduleobject.c: PyObject_HEAD, then md_dict */
#endif
#if PY_VERSION_HEX >= 0x030C0000
#define INTERP_MODULES offsetof(PyInterpreterState, imports.modules)
#define LONG_SIZE offsetof(PyLongObject, long_value.lv_tag)
#define LONG_DIGITS offsetof(PyLongObject, long_value.ob_digit)
#else
#define INTERP_MODULES offsetof(PyInterpreterState, modules)
#define LONG_SIZE offsetof(PyVarObject, ob_size)
#define LONG_DIGITS offsetof(PyLongObject, ob_digit)
#endif
#define P(field, value) printf("        .%s = %ld,\n", #field, (long)(value))
#define S(field, name) printf("        .%s = %s,\n", #field, #name)
int main(void)
{
    printf("    {\n        .minor = %d,\n", PY_MINOR_VERSION);
    P(interp_modules, INTERP_MODULES);
    P(module_dict, MODULE_DICT);
    P(dict_keys, offsetof(PyDictObject, ma_keys));
    P(dict_values, offsetof(PyDictObject, ma_values));
#if PY_VERSION_HEX >= 0x030B0000
    P(keys_size, offsetof(PyDictKeysObject, dk_log2_size));
    P(keys_log2, 1);
    P(keys_index_bytes, offsetof(PyDictKeysObject, dk_log2_index_bytes));
    P(keys_kind, offsetof(PyDictKeysObject, dk_kind));
    P(keys_nentries, offsetof(PyDictKeysObject, dk_nentries));
    P(keys_indices, offsetof(PyDictKeysObject, dk_indices));
    P(unicode_entry_size, sizeof(PyDictUnicodeEntry));
    P(unicode_entry_key, offsetof(PyDictUnicodeEntry, me_key));
    P(unicode_entry_value, offsetof(PyDictUnicodeEntry, me_value));
    P(values_values, offsetof(PyDictValues, values));
#else
    P(keys_size, offsetof(struct probe_dictkeys, dk_size));
    P(keys_log2, 0);
    P(keys_index_bytes, -1);
    P(keys_kind, -1);
    P(keys_nentries, offsetof(struct probe_dictkeys, dk_nentries));
    P(keys_indices, offsetof(struct probe_dictkeys, dk_indices));
    P(unicode_entry_size, -1);
    P(unicode_entry_key, -1);
    P(unicode_entry_value, -1);
    P(values_values, 0);
#endif
    P(entry_size, sizeof(PyDictKeyEntry));
    P(entry_key, offsetof(PyDictKeyEntry, me_key));
    P(entry_value, offsetof(PyDictKeyEntry, me_value));
    P(type_flags, offsetof(PyTypeObject, tp_flags));
    P(type_dictoffset, offsetof(PyTypeObject, tp_dictoffset));
    P(type_basicsize, offsetof(PyTypeObject, tp_basicsize));
    P(heaptype_cached_keys, offsetof(PyHeapTypeObject, ht_cached_keys));
#if PY_VERSION_HEX >= 0x030D0000
    P(values_capacity, offsetof(PyDictValues, capacity));
    P(values_valid, offsetof(PyDictValues, valid));
#else
    P(values_capacity, -1);
    P(values_valid, -1);
#endif
#if PY_VERSION_HEX >= 0x030D0000
    S(instance_dict, CGI_NAMES_INLINE_VALUES);
    P(managed_dict, MANAGED_DICT_OFFSET);
    P(managed_values, -1);
    P(flag_inline_values, Py_TPFLAGS_INLINE_VALUES);
#elif PY_VERSION_HEX >= 0x030C0000
    S(instance_dict, CGI_NAMES_DICT_OR_VALUES);
    P(managed_dict, -3 * (long)sizeof(PyObject *)); /* _PyObject_DictOrValuesPointer */
    P(managed_values, -1);
    P(flag_inline_values, 0);
#elif PY_VERSION_HEX >= 0x030B0000
    S(instance_dict, CGI_NAMES_VALUES_APART);
    P(managed_dict, MANAGED_DICT_OFFSET);
    P(managed_values, -4 * (long)sizeof(PyObject *)); /* _PyObject_ValuesPointer */
    P(flag_inline_values, 0);
#else
    S(instance_dict, CGI_NAMES_DICTOFFSET);
    P(managed_dict, -1);
    P(managed_values, -1);
    P(flag_inline_values, 0);
#endif
#ifdef Py_TPFLAGS_MANAGED_DICT
    P(flag_managed_dict, Py_TPFLAGS_MANAGED_DICT);
#else
    P(flag_managed_dict, 0);
#endif
    P(long_size, LONG_SIZE);
    P(long_tagged, PY_VERSION_HEX >= 0x030C0000);
    P(long_digits, LONG_DIGITS);
    P(long_shift, PyLong_SHIFT);
    printf("    },\n");
    return 0;
}
"""


# The _Py_DebugOffsets fields pyread.c reads, each SECTION.FIELD as CPython names it.
DEBUG_FIELDS = [
    "runtime_state.interpreters_head",
    "interpreter_state.next", "interpreter_state.threads_head",
    "thread_state.size", "thread_state.next", "thread_state.interp", "thread_state.current_frame",
    "thread_state.thread_id", "thread_state.native_thread_id",
    "interpreter_frame.size", "interpreter_frame.previous", "interpreter_frame.executable",
    "interpreter_frame.instr_ptr", "interpreter_frame.owner",
    "code_object.size", "code_object.filename", "code_object.name", "code_object.linetable",
    "code_object.firstlineno", "code_object.co_code_adaptive",
    "pyobject.size", "pyobject.ob_type",
    "bytes_object.ob_size", "bytes_object.ob_sval",
    "unicode_object.state", "unicode_object.length", "unicode_object.asciiobject_size",
]

DEBUG_PROBE = r"""
%s
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#define P(section, field) printf("        .%%s_%%s = %%zu,\n", #section, #field, offsetof(_Py_DebugOffsets, section.field) / 8)
int main(void)
{
    _Static_assert(offsetof(_Py_DebugOffsets, version) == 8, "the cookie is word 0");
    printf("    {\n        .minor = %%d,\n", %s);
%s
    printf("    },\n");
    return 0;
}
"""

# An installed version: its own headers, as CPython compiles them.
DEBUG_INSTALLED = """
#define Py_BUILD_CORE 1
#include <Python.h>
#include "internal/pycore_runtime.h"
"""


def debug_probe(work, minor, prelude, minor_expr, inc=None):
    """One row of pyread_debug.h: the word of each DEBUG_FIELDS field."""
    body = "\n".join("    P(%s, %s);" % tuple(f.split(".")) for f in DEBUG_FIELDS)
    src = os.path.join(work, "debug%d.c" % minor)
    with open(src, "w") as f:
        f.write(DEBUG_PROBE % (prelude, minor_expr, body))
    exe = src[:-2]
    subprocess.run(["cc", "-std=c11", "-w"] + (["-I", inc] if inc else []) + [src, "-o", exe], check=True)
    return subprocess.run([exe], check=True, capture_output=True, text=True).stdout.rstrip("\n")


def debug_struct(header):
    """The typedef of _Py_DebugOffsets in a header of CPython's, alone."""
    text = open(header, encoding="utf-8").read()
    m = re.search(r"typedef struct _Py_DebugOffsets \{.*?\} _Py_DebugOffsets;", text, re.S)
    if not m:
        sys.exit("pyoffsets.py: %s defines no _Py_DebugOffsets" % header)
    return "#include <stdint.h>\n" + re.sub(r"\b_Py_NONSTRING\b", "", m.group(0))


def debug_table(versions_dir, headers):
    """pyread_debug.h: the debug offsets' words of 3.13+."""
    installed = [n for n in os.listdir(versions_dir) if re.fullmatch(r"3\.(1[3-9]|[2-9]\d)\.\d+", n)]
    best = {}
    for n in installed:
        minor, micro = map(int, n.split(".")[1:])
        if minor not in best or micro > best[minor][0]:
            best[minor] = (micro, n)
    rows, sources = [], []
    with tempfile.TemporaryDirectory() as work:
        for minor in sorted(best):
            name = best[minor][1]
            inc = os.path.join(versions_dir, name, "include", "python3.%d" % minor)
            rows.append(debug_probe(work, minor, DEBUG_INSTALLED, "PY_MINOR_VERSION", inc))
            sources.append(name)
        for arg in headers:
            minor, _, header = arg.partition("=")
            if not minor.isdigit() or not header:
                sys.exit("pyoffsets.py: %s: give MINOR=HEADER (14=.../pycore_debug_offsets.h)" % arg)
            rows.append(debug_probe(work, 100 + len(rows), debug_struct(header), minor))
            sources.append("3.%s (%s)" % (minor, os.path.basename(header)))
    words = max(int(line.rsplit("=", 1)[1].rstrip(",")) for row in rows for line in row.splitlines()
                if "=" in line and ".minor" not in line) + 1
    out = ["/* Generated by scripts/pyoffsets.py --debug from the headers of CPython; do not edit. From:"]
    out += [" *   " + source for source in sources]
    out += [" * Where each field pyread.c reads lies in _Py_DebugOffsets (3.13+), in its uint64_t words (the",
            " * cookie is word 0), named SECTION_FIELD as CPython names them. */",
           "#define CGI_PYREAD_DEBUG_WORDS %d" % words,
           "static const cgi_pyread_debug_words cgi_pyread_debug_layouts[] = {"]
    out += rows
    out.append("};")
    return out


def newest(versions_dir, last=12):
    best = {}
    for name in os.listdir(versions_dir):
        m = re.fullmatch(r"3\.(\d+)\.(\d+)", name)
        if m and 9 <= int(m.group(1)) <= last:
            key = int(m.group(1))
            if key not in best or int(m.group(2)) > best[key][0]:
                best[key] = (int(m.group(2)), name)
    return [best[k][1] for k in sorted(best)]


def probe(prefix, minor, work, text=PROBE):
    inc = os.path.join(prefix, "include", "python3.%d" % minor)
    src = os.path.join(work, "probe.c")
    exe = os.path.join(work, "probe%d" % minor)
    with open(src, "w") as f:
        f.write(text)
    subprocess.run(["cc", "-std=c11", "-w", "-I", inc, src, "-o", exe], check=True)
    return subprocess.run([exe], check=True, capture_output=True, text=True).stdout


def names_table(versions_dir):
    """pynames_offsets.h: the names table of 3.9-3.13."""
    names = newest(versions_dir, last=13)
    out = ["/* Generated by scripts/pyoffsets.py --names from the headers of CPython " + ", ".join(names)
           + "; do not edit. */",
           "/* What pynames.c reads of dicts, modules, instances and ints (3.9-3.13). -1: no such field. */",
           "static const cgi_pynames_table cgi_pynames_tables[] = {"]
    with tempfile.TemporaryDirectory() as work:
        for name in names:
            out.append(probe(os.path.join(versions_dir, name), int(name.split(".")[1]), work, NAMES_PROBE)
                       .rstrip("\n"))
    out.append("};")
    return out


def main():
    args = sys.argv[1:]
    if args[:1] == ["--debug"]:
        rest = args[1:]
        dirs = [a for a in rest if "=" not in a]
        versions_dir = dirs[0] if dirs else os.path.expanduser("~/.pyenv/versions")
        print("\n".join(debug_table(versions_dir, [a for a in rest if "=" in a])))
        return
    if args[:1] == ["--names"]:
        versions_dir = args[1] if len(args) > 1 else os.path.expanduser("~/.pyenv/versions")
        print("\n".join(names_table(versions_dir)))
        return
    versions_dir = args[0] if args else os.path.expanduser("~/.pyenv/versions")
    names = newest(versions_dir)
    out = ["/* Generated by scripts/pyoffsets.py from the headers of CPython " + ", ".join(names)
           + "; do not edit. */",
           "/* Struct offsets pyread.c reads 3.9-3.12 by (3.13+ publish _Py_DebugOffsets). -1: no such field. */",
           "static const cgi_pyread_table cgi_pyread_tables[] = {"]
    with tempfile.TemporaryDirectory() as work:
        for name in names:
            out.append(probe(os.path.join(versions_dir, name), int(name.split(".")[1]), work).rstrip("\n"))
    out.append("};")
    gil = newest(versions_dir, last=13)
    out += ["/* Where the GIL's state lies (3.9-3.13, from the headers of " + ", ".join(gil) + "). */",
            "static const cgi_pyread_gil_table cgi_pyread_gil_tables[] = {"]
    with tempfile.TemporaryDirectory() as work:
        for name in gil:
            out.append(probe(os.path.join(versions_dir, name), int(name.split(".")[1]), work, GIL_PROBE).rstrip("\n"))
    out.append("};")
    print("\n".join(out))


if __name__ == "__main__":
    main()
