"""Two real hosts on this machine for the multi-host tests: each a network namespace of its own, its
processes under a host name of their own (a UTS namespace), joined by a veth pair.

Host A (namespace cgmh-PID-a) has 10.233.0.1/30 and host B (cgmh-PID-b) 10.233.0.2/30 on their ends of
the pair, both named cgmh0; each has its loopback, and nothing else: IPv6 is off inside them, so no
link-local address appears, and nothing in them can reach any other network. `mpirun` runs on host A;
Open MPI reaches host B through tests/multihost/agent.sh, its rsh agent, which enters B's namespaces.
The MCA settings below keep Open MPI's launch, its out-of-band channel and its messages on the veth pair
(docs/development.md, "Two hosts", says why each is needed).

TwoHosts is a context manager: it makes both hosts or raises Skip (no root, no `ip` or `unshare`, or the
kernel refuses a namespace), and on every way out ends each process still inside either namespace and
deletes both namespaces, which deletes the veth pair. Namespaces that a test killed outright (SIGKILL at
ctest's timeout) left behind are deleted by the next test: their names carry the pid of the test.
"""
import os
import re
import shutil
import signal
import subprocess
import time

HERE = os.path.dirname(os.path.abspath(__file__))
AGENT = os.path.join(HERE, "agent.sh")
NETWORK = "10.233.0.0/30"
DEVICE = "cgmh0"
NAMESPACE = re.compile(r"^cgmh-(\d+)-[ab]$")


class Skip(Exception):
    """The hosts cannot be made here: the test is skipped (exit 77), saying why."""


def mca():
    """The MCA settings of a two-host job (docs/development.md, "Two hosts")."""
    settings = [("plm", "rsh"), ("plm_rsh_agent", AGENT), ("plm_rsh_no_tree_spawn", "1"),
                ("oob", "tcp"), ("oob_tcp_if_include", NETWORK), ("oob_tcp_disable_ipv6_family", "1"),
                ("pml", "ob1"), ("btl", "tcp,self"), ("btl_tcp_if_include", NETWORK),
                ("btl_tcp_disable_family", "6"), ("hwloc_base_binding_policy", "none")]
    return [arg for name, value in settings for arg in ("--mca", name, value)]


def ip(*args, timeout=10):
    return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=timeout)


def alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def end_namespace(ns):
    """Ends every process inside network namespace ns, then deletes it; returns what failed ("" if none)."""
    deadline = time.monotonic() + 10
    while True:
        r = ip("netns", "pids", ns)
        pids = [int(p) for p in r.stdout.split()] if r.returncode == 0 else []
        if not pids or time.monotonic() > deadline:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.05)
    r = ip("netns", "del", ns)
    if r.returncode != 0 and ns in namespaces():
        return "ip netns del %s: %s (processes inside: %s)" % (ns, r.stderr.strip(), pids)
    return ""


def namespaces():
    r = ip("netns", "list")
    return [line.split()[0] for line in r.stdout.splitlines() if line.split()]


def addresses(ns):
    """The addresses in namespace ns, as "ADDRESS/PREFIX" (both families)."""
    r = ip("-n", ns, "-o", "addr", "show")
    return sorted(line.split()[3] for line in r.stdout.splitlines())


class TwoHosts:
    """names: the hosts' names; addresses: their addresses on the pair; ns: their namespaces."""

    def __init__(self):
        self.names = ["cgmh-a", "cgmh-b"]
        self.addresses = ["10.233.0.1", "10.233.0.2"]
        self.ns = ["cgmh-%d-a" % os.getpid(), "cgmh-%d-b" % os.getpid()]
        self.made = []

    def _step(self, what, *args):
        r = ip(*args)
        if r.returncode != 0:
            raise Skip("cannot make the two hosts: %s (`ip %s`): %s" % (what, " ".join(args), r.stderr.strip()))

    def _make(self):
        if os.geteuid() != 0:
            raise Skip("needs root to make network namespaces (euid %d)" % os.geteuid())
        for tool in ("ip", "unshare"):
            if not shutil.which(tool):
                raise Skip("no `%s` here: it makes the hosts' namespaces" % tool)
        for ns in namespaces():  # left by a test that was killed outright
            m = NAMESPACE.match(ns)
            if m and not alive(int(m.group(1))):
                end_namespace(ns)
        for ns in self.ns:
            self._step("a network namespace", "netns", "add", ns)
            self.made.append(ns)
            # Before the pair is made, so its ends never get a link-local address.
            ip("netns", "exec", ns, "sh", "-c", "for f in /proc/sys/net/ipv6/conf/*/disable_ipv6; do "
               "[ -e \"$f\" ] && echo 1 > \"$f\"; done; true")
        a, b = self.ns
        self._step("the veth pair", "link", "add", DEVICE, "netns", a, "type", "veth", "peer", "name", DEVICE,
                   "netns", b)
        for ns, address in zip(self.ns, self.addresses):
            self._step("an address", "-n", ns, "addr", "add", address + "/30", "dev", DEVICE)
            self._step("the loopback", "-n", ns, "link", "set", "lo", "up")
            self._step("the pair's end", "-n", ns, "link", "set", DEVICE, "up")
        for ns, name in zip(self.ns, self.names):
            r = subprocess.run(["ip", "netns", "exec", ns, "unshare", "--uts", "sh", "-c", 'hostname "$1" && hostname',
                                "sh", name], capture_output=True, text=True, timeout=10)
            if r.returncode != 0 or r.stdout.strip() != name:
                raise Skip("cannot give a namespace its own host name (unshare --uts): %s" % r.stderr.strip())

    def __enter__(self):
        try:
            self._make()
        except BaseException:
            self.remove()
            raise
        return self

    def __exit__(self, *exc):
        failed = self.remove()
        if failed and exc[0] is None:
            raise AssertionError(failed)

    def remove(self):
        """Ends what runs inside the hosts and deletes them; returns what failed ("" if none)."""
        failed = "; ".join(f for f in (end_namespace(ns) for ns in self.made) if f)
        left = [ns for ns in self.made if ns in namespaces()]
        self.made = []
        return failed or ("namespaces left: %s" % left if left else "")

    def left(self, seconds):
        """The processes still inside either host after up to `seconds` (each "PID COMMAND"): none once a
        job has ended."""
        deadline = time.monotonic() + seconds
        while True:
            pids = [p for ns in self.ns for p in ip("netns", "pids", ns).stdout.split()]
            if not pids or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        left = []
        for pid in pids:
            try:
                with open("/proc/%s/cmdline" % pid, "rb") as f:
                    left.append("%s %s" % (pid, f.read().replace(b"\0", b" ").decode(errors="replace")))
            except OSError:
                pass
        return left

    def hosts_variable(self):
        """CG_MULTIHOST_HOSTS for agent.sh: each address with its namespace and host name."""
        return " ".join("%s/%s/%s" % x for x in zip(self.addresses, self.ns, self.names))

    def on(self, host, args):
        """args run on host `host` (0 is A, 1 is B), as its own shell would run them: in its network
        namespace, under its host name."""
        return ["ip", "netns", "exec", self.ns[host], "unshare", "--uts", "sh", "-c",
                'hostname "$1" && shift && exec "$@"', "sh", self.names[host], *args]

    def on_a(self, args):
        return self.on(0, args)

    def host_list(self, per_host):
        """mpirun's --host value: per_host slots on each host."""
        return ",".join("%s:%d" % (a, per_host) for a in self.addresses)
