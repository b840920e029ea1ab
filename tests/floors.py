"""Calls go down, never up: the floor test. Run: floors.py TEST ROOT BUILD
(floors.py --list names the tests; ctest runs each).

src/common/common.h holds the map of src/'s folders, lowest first, and
each folder with a map (common.h, runtime/internal.h, report/internal.h,
...: FOLDER_MAPS below) the map of its files. In a map, a row is

     N names...        what they are (continued on lines further in)

under a line that starts " * Floors, lowest first" (files) or " * Folders,
lowest first" (src/'s folders): N the floor, names its files (`stats` is
stats.c and stats.h; `stats.h` is only the header) or folders. A file may
include and call what is on a floor below its own, in its folder; and
anything of a folder below its folder. On its own floor only the files of
its own row, which are one room (x.c and x.h, or a concern in two files).
A folder without a map (the generated layers, the Python
extension, the host-runtime adapters) is one floor.

The tests:
  every_file_is_on_its_folders_map   each source in a mapped folder is named
                                     in its map, and each name is a file
  no_file_includes_above_its_floor   from each `#include "..."` under src/
  no_object_calls_above_its_floor    from `nm` of each object BUILD's
                                     compile_commands.json names: a function
                                     it needs that a file above defines
  a_planted_upward_call_is_found     message.c compiled with a call into the
                                     runtime is caught (the test tests itself)
  hand_written_c_stays_short         no function of hand-written C over 80
                                     lines, no file over 800
"""
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cgtest  # noqa: E402

FOLDER_MAPS = {
    "common": "common.h",
    "policy": "policy_ini.h",
    "report": "internal.h",
    "runtime": "internal.h",
    "load": "internal.h",
    "gen": "gen.h",
    "cli": "cli.h",
}
SOURCE = (".c", ".h", ".S", ".map")
ROW = re.compile(r"^ \*\s{1,4}(\d+)\s+([\w./-]+(?: [\w./-]+)*)(?:\s{2,}.*)?$")
GENERATED = re.compile(r"^src/layers/\w+/cg_\w+\.c$")


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def map_rows(text, head):
    """The rows (floor, [names]) of the block that starts with head."""
    rows, inside = [], False
    for line in text.splitlines():
        if line.startswith(" * " + head):
            inside = True
            continue
        if inside:
            if line.strip() in ("*", "*/") or line.startswith(" */"):
                break
            m = ROW.match(line)
            if m:
                rows.append((int(m.group(1)), m.group(2).split()))
    return rows


class House:
    def __init__(self, root):
        self.root = root
        self.errors = []
        common = read(os.path.join(root, "src/common/common.h"))
        self.folder_floor = {}
        for floor, names in map_rows(common, "Folders, lowest first"):
            for n in names:
                self.folder_floor[n] = floor
        if not self.folder_floor:
            self.errors.append("src/common/common.h: no 'Folders, lowest first' map")
        self.file_floor = {}  # src/FOLDER/FILE -> floor in its folder
        for folder, header in FOLDER_MAPS.items():
            self.read_folder_map(folder, header)

    def files(self, folder):
        d = os.path.join(self.root, "src", folder)
        return sorted(f for f in os.listdir(d) if f.endswith(SOURCE))

    def read_folder_map(self, folder, header):
        rows = map_rows(read(os.path.join(self.root, "src", folder, header)), "Floors, lowest first")
        if not rows:
            self.errors.append(f"src/{folder}/{header}: no 'Floors, lowest first' map")
            return
        present = set(self.files(folder))
        for row, (floor, names) in enumerate(rows):
            for n in names:
                hits = [n] if "." in n else [n + ".c", n + ".h"]
                hits = [h for h in hits if h in present]
                if not hits:
                    self.errors.append(f"src/{folder}/{header}: the map names {n}, which is no file")
                for h in hits:
                    self.file_floor[f"src/{folder}/{h}"] = (floor, row)
        for f in sorted(present):
            if f"src/{folder}/{f}" not in self.file_floor:
                self.errors.append(f"src/{folder}/{f}: not on src/{folder}/{header}'s map")

    def floor(self, path):
        """(folder, folder's floor, file's floor in it) of src/FOLDER/...; None outside src/."""
        parts = path.split("/")
        if len(parts) < 3 or parts[0] != "src":
            return None
        folder = parts[1]
        return folder, self.folder_floor.get(folder), self.file_floor.get(path, (0, 0))

    def upward(self, a, b):
        """Why a may not use b, or None when it may."""
        fa, fb = self.floor(a), self.floor(b)
        if fa is None or fb is None or a == b:
            return None
        if fa[0] == fb[0]:
            if fb[2][0] < fa[2][0] or fb[2] == fa[2]:
                return None  # a floor below, or the same row of the map (a room)
            return f"floor {fb[2][0]} of src/{fa[0]} is not below {fa[2][0]}"
        if fa[1] is None or fb[1] is None:
            return f"src/{fa[0] if fa[1] is None else fb[0]} is not on src/common/common.h's map"
        if fb[1] < fa[1]:
            return None
        return f"src/{fb[0]} (floor {fb[1]}) is not below src/{fa[0]} (floor {fa[1]})"


def sources(root):
    for top, dirs, files in os.walk(os.path.join(root, "src")):
        dirs.sort()
        for f in sorted(files):
            if f.endswith((".c", ".h")):
                yield os.path.relpath(os.path.join(top, f), root)


INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def includes(root, path):
    for name in INCLUDE.findall(read(os.path.join(root, path))):
        target = os.path.normpath(os.path.join(os.path.dirname(path), name))
        if os.path.isfile(os.path.join(root, target)):
            yield name, target


def objects(root, build):
    """(source relative to root, object path) of each compiled file under src/."""
    with open(os.path.join(build, "compile_commands.json")) as f:
        entries = json.load(f)
    for e in entries:
        src = os.path.relpath(os.path.realpath(e["file"]), os.path.realpath(root))
        if not src.startswith("src/"):
            continue
        args = e.get("arguments") or shlex.split(e["command"])
        obj = e.get("output") or args[args.index("-o") + 1]
        yield src, os.path.join(e["directory"], obj)


def nm(obj):
    """(functions defined, symbols needed) of an object."""
    out = subprocess.run(["nm", "-P", obj], capture_output=True, text=True, check=True).stdout
    defined, needed = set(), set()
    for line in out.splitlines():
        f = line.split()
        if len(f) < 2:
            continue
        if f[1] in "TWi":
            defined.add(f[0])
        elif f[1] == "U":
            needed.add(f[0])
    return defined, needed


def libc_names(cc="gcc"):
    """What libc defines: a call of one is libc's even where callguard
    interposes it (dlsym_interpose.c, signals_interpose.c)."""
    out = subprocess.run(["sh", "-c", "nm -D --defined-only $(" + cc + " -print-file-name=libc.so.6)"],
                         capture_output=True, text=True).stdout
    return {l.split()[-1].split("@")[0] for l in out.splitlines() if l.strip()}


def calls(root, build, replace=None):
    """(caller source, callee source, symbol) for each function an object
    needs that another source of the same target defines (or, when none
    does, any source: libcallguard's API for the CLI)."""
    objs = list(objects(root, build))
    if replace:
        objs = [(s, replace[s] if s in replace else o) for s, o in objs]
    target = lambda o: next((p for p in o.split(os.sep) if p.endswith(".dir")), "")
    table = [(s, target(o), *nm(o)) for s, o in objs if os.path.exists(o)]
    if not table:
        raise SystemExit(f"no objects of src/ under {build}: build it first")
    by_symbol = {}
    for s, t, defined, _ in table:
        for sym in defined:
            by_symbol.setdefault(sym, set()).add((s, t))
    libc = libc_names()
    for s, t, _, needed in table:
        for sym in sorted(needed - libc):
            where = by_symbol.get(sym, set())
            same = {d for d, dt in where if dt == t}
            for d in sorted(same or {d for d, _ in where}):
                yield s, d, sym


def every_file_is_on_its_folders_map():
    fail(House(where()[0]).errors)


def no_file_includes_above_its_floor():
    root = where()[0]
    house = House(root)
    bad = []
    for path in sources(root):
        for name, target in includes(root, path):
            why = house.upward(path, target)
            if why:
                bad.append(f'{path}: #include "{name}" goes up: {why}')
    fail(bad)


def upward_calls(root, build, replace=None):
    house = House(root)
    bad = set()
    for caller, callee, sym in calls(root, build, replace):
        why = house.upward(caller, callee)
        if why:
            bad.add(f"{caller}: calls {sym} of {callee}, which is up: {why}")
    return sorted(bad)


def no_object_calls_above_its_floor():
    fail(upward_calls(*where()))


def a_planted_upward_call_is_found():
    """message.c compiled again with a call of the runtime's cgi_stats_keep
    (src/runtime/stats.c): the check must name it."""
    root, build = where()
    src = "src/common/message.c"
    entry = next((e for e in json.load(open(os.path.join(build, "compile_commands.json")))
                  if os.path.realpath(e["file"]) == os.path.realpath(os.path.join(root, src))
                  and "callguard.dir" in e["command"]), None)
    if entry is None:
        fail([f"{src} is not compiled into libcallguard in {build}"])
    with tempfile.TemporaryDirectory() as tmp:
        planted = os.path.join(tmp, "message.c")
        with open(planted, "w") as f:
            f.write(read(os.path.join(root, src)))
            f.write("\nvoid cgi_stats_keep(void);\nvoid cgi_planted(void) { cgi_stats_keep(); }\n")
        obj = os.path.join(tmp, "message.o")
        args = shlex.split(entry["command"])
        args[args.index("-o") + 1] = obj
        args[args.index("-c") + 1] = planted
        args += ["-I" + os.path.join(root, "src/common"), "-Wno-missing-prototypes"]
        subprocess.run(args, cwd=entry["directory"], check=True)
        found = upward_calls(root, build, {src: obj})
    if not any(l.startswith(f"{src}: calls cgi_stats_keep of src/runtime/stats.c") for l in found):
        fail(["the planted call of cgi_stats_keep from src/common/message.c was not found"])


def functions(text):
    """(name, lines) of each function: its signature's first line to the
    closing brace at column 0."""
    lines = text.split("\n")
    start = None
    for i, line in enumerate(lines):
        if line.startswith("{") and start is None:
            j = i - 1
            while j > 0 and "(" not in lines[j]:
                j -= 1
            m = re.search(r"(\w+)\s*\(", " ".join(lines[j:i]))
            start = (j, m.group(1) if m else "?")
        elif line.startswith("}") and start is not None:
            yield start[1], i - start[0] + 1
            start = None


def hand_written_c(root):
    out = subprocess.run(["git", "-C", root, "ls-files", "*.c", "*.h"], capture_output=True, text=True)
    names = out.stdout.split() if out.returncode == 0 else list(sources(root))
    for p in names:
        if GENERATED.match(p) or not os.path.isfile(os.path.join(root, p)):
            continue
        text = read(os.path.join(root, p))
        if "Generated by" in text[:400] or "generated by" in text[:400]:
            continue
        yield p, text


def hand_written_c_stays_short():
    root = where()[0]
    bad = []
    for p, text in hand_written_c(root):
        n = text.count("\n")
        if n > 800:
            bad.append(f"{p}: {n} lines (a file of one idea is at most 800)")
        if p.endswith(".c"):
            for name, length in functions(text):
                if length > 80:
                    bad.append(f"{p}: {name} is {length} lines (at most 80)")
    fail(bad)


def where(argv=sys.argv):
    """ROOT and BUILD, the arguments after the test's name."""
    if len(argv) < 4:
        sys.exit(f"usage: {argv[0]} TEST ROOT BUILD ({argv[0]} --list names the tests)")
    return os.path.abspath(argv[2]), os.path.abspath(argv[3])


def fail(lines):
    if lines:
        raise AssertionError("\n".join(lines))


if __name__ == "__main__":
    cgtest.main()
