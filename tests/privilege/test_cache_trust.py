"""The module cache trusts no one but the process's own user.

Run: test_cache_trust.py TEST (or --list), with CG_LOAD_WORKER_ZE and the
simulator's variables set (tests/load/CMakeLists.txt). Needs root, to make a
setuid copy of the worker and two real users; exits 77 (skipped) otherwise.

  setuid_program_ignores_cache_variables_and_home: a copy of load_worker_ze setuid to `nobody` (any effective uid
           other than the real one sets AT_SECURE; no way to root is ever
           left behind) is pointed by its caller at nobody's private folder
           through a symlinked load-v1: by CALLGUARD_CACHE_DIR, then by HOME,
           then by XDG_CACHE_HOME, each with CALLGUARD_CACHE_SIZE=0. Nothing
           in that folder is created or deleted, nothing is created where the
           caller pointed, the kernel loads from memory, and the one line
           says which variables were ignored.
  another_users_cache_is_never_loaded_nor_evicted: two users the test creates (and removes): A makes a
           world-writable "team cache" and plants an entry under B's key
           (its own binary, the checksum recomputed); B's run does not load
           it and says why in one line. A's load-v1 symlinked to B's dataset
           deletes nothing of it. An entry of A's in B's own private cache
           is not loaded either.
"""
import hashlib
import os
import pwd
import shutil
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from cgtest import check, main  # noqa: E402  (tests/cgtest.py)

WORKER = os.environ.get("CG_LOAD_WORKER_ZE", "")
HEADER = 56


def figures(text):
    out = {}
    for word in text.split():
        k, eq, v = word.partition("=")
        if eq:
            out[k] = v
    return out


def tree(path):
    """Every name under path with its size and mode, as root sees them."""
    seen = []
    for root, dirs, files in os.walk(path):
        for n in sorted(dirs + files):
            st = os.lstat(os.path.join(root, n))
            seen.append((os.path.relpath(os.path.join(root, n), path), st.st_size, oct(st.st_mode)))
    return sorted(seen)


def secure_lines(err):
    return [l for l in err.splitlines() if "AT_SECURE" in l]


def setuid_program_ignores_cache_variables_and_home():
    needs_root_and_nobody(WORKER)
    nobody = pwd.getpwnam("nobody")
    base = os.path.dirname(os.path.abspath(WORKER))
    priv = tempfile.mkdtemp(prefix="cgpriv-", dir=base)  # 0700, root's
    shared = tempfile.mkdtemp(prefix="cgcache-setuid-")
    os.chmod(shared, 0o755)
    try:
        prog = os.path.join(priv, "load_worker_ze")
        shutil.copy(WORKER, prog)
        os.chown(prog, nobody.pw_uid, nobody.pw_gid)
        os.chmod(prog, 0o4755)
        private = os.path.join(shared, "private")  # the program owner's own, 0700
        os.mkdir(private, 0o700)
        for name, text in (("results.bin", "precious"), ("0" * 64, "looks like an entry")):
            with open(os.path.join(private, name), "w") as f:
                f.write(text)
        for p in [private] + [os.path.join(private, n) for n in os.listdir(private)]:
            os.chown(p, nobody.pw_uid, nobody.pw_gid)
        # Three ways in, each ending in a load-v1 that is a symlink to the private folder.
        cache, home, xdg = (os.path.join(shared, n) for n in ("cache", "home", "xdg"))
        for top in (cache, os.path.join(home, ".cache", "callguard"), os.path.join(xdg, "callguard")):
            os.makedirs(top)
            os.symlink(private, os.path.join(top, "load-v1"))
        subprocess.run(["chmod", "-R", "a+rwX", cache, home, xdg], check=True)
        before = tree(shared)
        env = {k: v for k, v in os.environ.items() if not k.startswith("CALLGUARD_") and k != "XDG_CACHE_HOME"}
        env.update(CGSIM_COMPILE_MS="0", CALLGUARD_CACHE_SIZE="0", HOME=home)
        runs = (("CALLGUARD_CACHE_DIR", dict(env, CALLGUARD_CACHE_DIR=cache),
                 ["CALLGUARD_CACHE_DIR", "CALLGUARD_CACHE_SIZE"]),
                ("HOME", env, ["CALLGUARD_CACHE_SIZE"]),
                ("XDG_CACHE_HOME", dict(env, XDG_CACHE_HOME=xdg, CALLGUARD_CACHE="on"),
                 ["CALLGUARD_CACHE", "CALLGUARD_CACHE_SIZE"]))
        for how, run_env, named in runs:
            r = subprocess.run([prog, "distinct", "1", "2"], env=run_env, capture_output=True, text=True, timeout=60,
                               cwd="/")
            f = figures(r.stdout)
            check(f.get("secure") == "1",
                  "the setuid copy really runs with AT_SECURE (a nosuid mount would not): %r %r" % (r.stdout, r.stderr))
            check(r.returncode == 0 and f.get("loaded") == "2",
                  "%s: the kernels load: %r %r" % (how, r.stdout, r.stderr))
            check(f.get("disk_writes") == "0" and f.get("evictions") == "0" and f.get("disk_hits") == "0",
                  "%s: the disk cache is not used: %r" % (how, r.stdout))
            check(f.get("cache_dir", "x") == "", "%s: cg_load_cache_dir() is empty: %r" % (how, r.stdout))
            after = tree(shared)
            check(after == before, "%s: nothing created or deleted: %s -> %s" % (how, before, after))
            said = secure_lines(r.stderr)
            check(len(said) == 1, "%s: one line: %r" % (how, r.stderr))
            ignored = said[0].partition("ignoring ")[2].partition(" (")[0].split(", ")
            check(sorted(ignored) == sorted(named), "%s: it names %s: %s" % (how, named, said[0]))
        print("ok:", said[0])
    finally:
        shutil.rmtree(priv, ignore_errors=True)
        shutil.rmtree(shared, ignore_errors=True)
        check(not os.path.exists(priv), "the setuid copy is removed")


def entry_with_payload(data, key_payload):
    """The entry data, its payload replaced by key_payload(payload), checksum recomputed."""
    kl, fl, pl = struct.unpack_from("<IIQ", data, 8)
    key = data[HEADER:HEADER + kl]
    flags = data[HEADER + kl:HEADER + kl + fl]
    payload = key_payload(data[HEADER + kl + fl:HEADER + kl + fl + pl])
    return (data[:8] + struct.pack("<IIQ", kl, fl, len(payload)) + hashlib.sha256(key + flags + payload).digest() +
            key + flags + payload)


class User:
    def __init__(self, name, home_parent):
        subprocess.run(["useradd", "--no-create-home", "--user-group", "--shell", "/usr/sbin/nologin", name],
                       check=True, capture_output=True)
        self.name = name
        pw = pwd.getpwnam(name)
        self.uid, self.gid = pw.pw_uid, pw.pw_gid
        self.home = os.path.join(home_parent, name)
        os.mkdir(self.home, 0o700)
        os.chown(self.home, self.uid, self.gid)

    def run(self, cache_dir, *args, size=None):
        env = {k: v for k, v in os.environ.items() if not k.startswith("CALLGUARD_") and k != "XDG_CACHE_HOME"}
        env.update(CGSIM_COMPILE_MS="0", HOME=self.home, CALLGUARD_CACHE_DIR=cache_dir)
        if size is not None:
            env["CALLGUARD_CACHE_SIZE"] = size

        def become():
            os.setgroups([])
            os.setgid(self.gid)
            os.setuid(self.uid)
            os.umask(0o022)

        r = subprocess.run([WORKER] + list(args), env=env, capture_output=True, text=True, timeout=60, cwd="/",
                           preexec_fn=become)
        sys.stderr.write("--- %s %s\n%s%s" % (self.name, " ".join(args), r.stdout, r.stderr))
        check(r.returncode == 0, "%s's run exits 0: %d" % (self.name, r.returncode))
        return figures(r.stdout), r.stderr

    def remove(self):
        subprocess.run(["userdel", self.name], capture_output=True)


def make(path, owner, mode):
    os.mkdir(path)
    os.chown(path, owner.uid, owner.gid)
    os.chmod(path, mode)


def cache_lines(err):
    return [l for l in err.splitlines() if l.startswith("callguard:")]


def another_users_cache_is_never_loaded_nor_evicted():
    needs_root_and_nobody(WORKER)
    base = tempfile.mkdtemp(prefix="cgcache-users-")
    os.chmod(base, 0o755)
    users = []
    try:
        a = User("cgca%d" % os.getpid(), base)
        users.append(a)
        b = User("cgcb%d" % os.getpid(), base)
        users.append(b)

        # B's own private cache: B's run builds and stores kernel k0 under B's key.
        mine = os.path.join(b.home, "cache")
        f, err = b.run(mine, "distinct", "1", "1")
        check(f["disk_writes"] == "1" and not cache_lines(err), "B stores its entry: %r" % f)
        names = os.listdir(os.path.join(mine, "load-v1"))
        entry = [n for n in names if len(n) == 64][0]
        with open(os.path.join(mine, "load-v1", entry), "rb") as fh:
            good = fh.read()
        # A's own binary under B's key: kernel k0 with three arguments, the checksum recomputed.
        planted = entry_with_payload(good, lambda p: p.replace(b"k0:args=1", b"k0:args=3"))
        check(planted != good, "the planted entry differs from B's")

        # 1. A's world-writable team folder, with the planted entry.
        team = os.path.join(base, "team")
        make(team, a, 0o777)
        make(os.path.join(team, "load-v1"), a, 0o777)
        path = os.path.join(team, "load-v1", entry)
        with open(path, "wb") as fh:
            fh.write(planted)
        os.chown(path, a.uid, a.gid)
        os.chmod(path, 0o666)
        f, err = b.run(team, "distinct", "1", "1")
        check(f["loaded"] == "1" and f["disk_hits"] == "0" and f["from_disk"] == "0" and f["builds"] == "1",
              "B does not load A's planted entry: %r" % f)
        check(f["disk_writes"] == "0", "B writes nothing into A's folder: %r" % f)
        said = cache_lines(err)
        check(len(said) == 1 and "%s is owned by uid %d, not by this process's user (uid %d)" % (team, a.uid, b.uid)
              in said[0] and "the disk cache is off for this process" in said[0], "one line says why: %r" % err)
        with open(path, "rb") as fh:
            check(fh.read() == planted, "A's file is left alone")

        # 2. A's team folder whose load-v1 is a symlink to B's dataset: B's run with a zero size deletes nothing.
        dataset = os.path.join(b.home, "dataset")
        make(dataset, b, 0o755)
        for n in ("results.bin", entry):
            with open(os.path.join(dataset, n), "w") as fh:
                fh.write("B's data")
            os.chown(os.path.join(dataset, n), b.uid, b.gid)
        trap = os.path.join(base, "trap")
        make(trap, a, 0o777)
        os.symlink(dataset, os.path.join(trap, "load-v1"))
        os.lchown(os.path.join(trap, "load-v1"), a.uid, a.gid)
        before = tree(dataset)
        f, err = b.run(trap, "distinct", "1", "3", size="0")
        check(f["loaded"] == "3" and f["disk_writes"] == "0" and f["evictions"] == "0", "nothing stored: %r" % f)
        check(tree(dataset) == before, "B's dataset untouched: %s -> %s" % (before, tree(dataset)))
        check(len(cache_lines(err)) == 1, "one line: %r" % err)

        # 3. An entry of A's in B's own private cache (planted through an earlier window).
        path = os.path.join(mine, "load-v1", entry)
        with open(path, "wb") as fh:
            fh.write(planted)
        os.chown(path, a.uid, a.gid)
        os.chmod(path, 0o644)
        f, err = b.run(mine, "distinct", "1", "1")
        check(f["disk_hits"] == "0" and f["builds"] == "1" and f["disk_writes"] == "0",
              "B does not load an entry of A's from its own folder: %r" % f)
        said = cache_lines(err)
        check(len(said) == 1 and "%s is owned by uid %d" % (path, a.uid) in said[0], "one line says why: %r" % err)

        # B's own entries still serve B.
        os.unlink(path)
        f, err = b.run(mine, "distinct", "1", "1")
        f, err = b.run(mine, "distinct", "1", "1")
        check(f["disk_hits"] == "1" and not cache_lines(err), "B's own cache works: %r %r" % (f, err))
        print("ok:", said[0])
    finally:
        for u in users:
            u.remove()
        shutil.rmtree(base, ignore_errors=True)
        for u in users:
            try:
                pwd.getpwnam(u.name)
                raise AssertionError("user %s is removed" % u.name)
            except KeyError:
                pass


def needs_root_and_nobody(worker):
    """Exits 77 (skipped) where the test cannot run, 2 without the worker."""
    if os.geteuid() != 0:
        print("skipped: needs root to make a setuid copy of the worker and two users (CI runs as root)")
        sys.exit(77)
    if not worker:
        print("CG_LOAD_WORKER_ZE is not set (ctest sets it)", file=sys.stderr)
        sys.exit(2)
    try:
        pwd.getpwnam("nobody")
    except KeyError:
        print("skipped: no user 'nobody'")
        sys.exit(77)


if __name__ == "__main__":
    main()
