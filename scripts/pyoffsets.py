#!/usr/bin/env python3
"""Writes src/runtime/pyread_offsets.h: the struct offsets pyread.c needs
for CPython 3.9-3.12, which publish no _Py_DebugOffsets (3.13+ do), and
where the GIL's state lies in 3.9-3.13 (3.13's debug offsets omit it).

Each interpreter's own headers are compiled with Py_BUILD_CORE into a tiny
program that prints offsetof() values, so the table is what that minor
version's compiler saw, not a transcription.

    python3 scripts/pyoffsets.py [PYENV_VERSIONS_DIR] > src/runtime/pyread_offsets.h

Default folder: ~/.pyenv/versions; the newest patch release of each minor
version 3.9-3.12 found there is used."""
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
#define P(field, value) printf("    .%s = %ld,\n", #field, (long)(value))
int main(void)
{
    printf("    {\n    .minor = %d,\n", PY_MINOR_VERSION);
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
#define P(field, value) printf("    .%s = %ld,\n", #field, (long)(value))
int main(void)
{
    printf("    {\n    .minor = %d,\n", PY_MINOR_VERSION);
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


def main():
    versions_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.expanduser("~/.pyenv/versions")
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
