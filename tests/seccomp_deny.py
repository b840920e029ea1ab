"""A seccomp filter that refuses process_vm_readv to every thread of this
process, for the tests of the frame reader's other way of reading
(src/runtime/selfread.h): killing the process, as allow-lists built with
SCMP_ACT_KILL_PROCESS do, or failing with EPERM; or one that fails every
way of debugging it (ptrace, process_vm_readv, process_vm_writev) with
EPERM, as hardened container profiles do. Written by hand as
classic BPF (libseccomp may be absent), installed with seccomp(2) and
SECCOMP_FILTER_FLAG_TSYNC so that threads already running get it too.
"""
import ctypes
import errno
import platform

# The machine's AUDIT_ARCH_*, and the numbers of process_vm_readv and seccomp.
MACHINES = {"x86_64": (0xC000003E, 310, 317), "aarch64": (0xC00000B7, 270, 277)}
# The numbers of ptrace and process_vm_writev.
DEBUGGING = {"x86_64": (101, 311), "aarch64": (117, 271)}
RET_KILL_PROCESS, RET_ERRNO, RET_ALLOW = 0x80000000, 0x00050000, 0x7FFF0000
LD_W_ABS, JEQ_K, RET_K = 0x20, 0x15, 0x06  # BPF_LD|BPF_W|BPF_ABS, BPF_JMP|BPF_JEQ|BPF_K, BPF_RET|BPF_K


class SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint32)]


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(SockFilter))]


def known():
    """Can this machine's filter be written here?"""
    return platform.machine() in MACHINES


def deny_process_vm_readv(action):
    """From now on process_vm_readv kills the process (action "kill") or
    fails with EPERM ("eperm"), on every thread; other calls are allowed.
    Raises OSError where the filter cannot be installed."""
    audit, readv, _ = MACHINES[platform.machine()]
    deny = RET_KILL_PROCESS if action == "kill" else RET_ERRNO | errno.EPERM
    program = [
        (LD_W_ABS, 0, 0, 4),  # seccomp_data.arch
        (JEQ_K, 1, 0, audit),
        (RET_K, 0, 0, RET_ALLOW),  # another ABI's numbers: not ours to judge
        (LD_W_ABS, 0, 0, 0),  # seccomp_data.nr
        (JEQ_K, 0, 1, readv),
        (RET_K, 0, 0, deny),
        (RET_K, 0, 0, RET_ALLOW),
    ]
    install(program)


def deny_debugging():
    """From now on ptrace, process_vm_readv and process_vm_writev fail with
    EPERM on every thread (other calls are allowed). Raises OSError where
    the filter cannot be installed."""
    audit, readv, _ = MACHINES[platform.machine()]
    ptrace, writev = DEBUGGING[platform.machine()]
    deny = RET_ERRNO | errno.EPERM
    program = [
        (LD_W_ABS, 0, 0, 4),  # seccomp_data.arch
        (JEQ_K, 1, 0, audit),
        (RET_K, 0, 0, RET_ALLOW),
        (LD_W_ABS, 0, 0, 0),  # seccomp_data.nr
        (JEQ_K, 3, 0, ptrace),
        (JEQ_K, 2, 0, readv),
        (JEQ_K, 1, 0, writev),
        (RET_K, 0, 0, RET_ALLOW),
        (RET_K, 0, 0, deny),
    ]
    install(program)


def install(program):
    """Installs a classic BPF program on every thread (TSYNC), after PR_SET_NO_NEW_PRIVS."""
    _, _, seccomp = MACHINES[platform.machine()]
    insns = (SockFilter * len(program))(*[SockFilter(*i) for i in program])
    prog = SockFprog(len(program), insns)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
    # SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC
    if libc.syscall(ctypes.c_long(seccomp), ctypes.c_long(1), ctypes.c_long(1), ctypes.byref(prog)) != 0:
        raise OSError(ctypes.get_errno(), "seccomp(SECCOMP_SET_MODE_FILTER)")
