"""Tests of the layers `callguard run` chooses, their shims and preloading,
and of `callguard list`.

Run as tests/cli/clitest.py says; each test is a function named for the
behaviour it checks.
"""
import json
import os
import shutil

from clitest import CG, PROG, PROG_DLOPEN, TOYLIB, TOYLAYER, TMP, run, guarded, report_of, calls, check, main


def run_guards_a_dlopened_soname():
    plain = run([PROG_DLOPEN, "dlopen"], env={"LD_LIBRARY_PATH": TOYLIB})
    check(plain.returncode == 0, plain.stderr)
    r, rep = report_of([PROG_DLOPEN, "dlopen"], env={"LD_LIBRARY_PATH": TOYLIB})
    check(r.returncode == 0 and r.stdout == plain.stdout, "same output: %r vs %r" % (r.stdout, plain.stdout))
    check(calls(rep["processes"][0]) == 6, "six calls through dlsym counted once each: %s" % rep)


def run_prepends_existing_preload():
    other = os.path.join(TOYLIB, "libcgtoy.so")
    r = guarded([PROG, "env", "LD_PRELOAD"], env={"LD_PRELOAD": other})
    parts = r.stdout.strip().split(":")
    check(parts[-1] == other and parts[0].endswith("/libcallguard.so.0") and parts[1].endswith("libcallguard_toy.so"),
          "the runtime (its dlsym before libc's), the layer, then theirs: %s" % r.stdout)


def run_shim_does_not_loop_through_a_forwarding_interposer():
    spy = os.path.join(TOYLIB, "libcg_toy_spy.so")
    plain = run([PROG, "calls", "9"], env={"LD_PRELOAD": spy})
    check(plain.returncode == 0 and "spy saw 9 toyAdd calls" in plain.stderr, plain.stderr)
    r, rep = report_of([PROG, "calls", "9"], env={"LD_PRELOAD": spy})
    check(r.returncode == 0, "exit %d: %s" % (r.returncode, r.stderr[-300:]))
    check("spy saw 9 toyAdd calls" in r.stderr, "the spy still sees every call once: %s" % r.stderr)
    s = [x for x in rep["processes"][0]["sites"] if x["name"] == "toyAdd"][0]
    # The layer guards the call; the spy forwards into the shim, which passes it
    # straight through as nested (no second lock).
    check(s["calls"] - s["nested"] == 9, "guarded once each: %s" % s)


def list_prints_policies_and_reasons():
    r = run([CG, "list", TOYLAYER])
    check(r.returncode == 0, r.stderr)
    lines = r.stdout.splitlines()
    at = [k for k, l in enumerate(lines) if l.startswith("toyCompile ")]
    # Its reason in its row where the row fits 100 columns, else on the line under it.
    check(at and ("compiles a program in the driver" in lines[at[0]] or
                  (lines[at[0]].endswith(" (below)") and lines[at[0] + 1] == "    blocks: compiles a program in the driver")),
          r.stdout)
    check(max(len(l) for l in lines) <= 100, r.stdout)
    check("17 entry points" in r.stdout, r.stdout)  # toy.h: 13, its two toyCompile variants, toyQuery_v2, toyGetProcAddress
    r = run([CG, "list", "vulkan"])
    check(r.returncode == 2 and "vulkan" in r.stderr, r.stderr)


def run_layer_takes_a_layer_from_anywhere():
    """A layer and its shim in a directory of their own, as a third party
    builds them: --layer finds the shim at DIR/callguard/shims/SONAME, and a
    program that dlopens the soname is guarded."""
    import shutil
    d = os.path.join(TMP, "elsewhere")
    os.makedirs(os.path.join(d, "callguard", "shims"))
    layer = os.path.join(d, "libcallguard_toy.so")
    shutil.copy(TOYLAYER, layer)
    shim = os.path.join(d, "callguard", "shims", "libcgtoy.so")
    shutil.copy(os.path.join(os.path.dirname(TOYLAYER), "callguard", "shims", "libcgtoy.so"), shim)
    env = {"LD_LIBRARY_PATH": TOYLIB}  # libcallguard and the real toy library: the copies' rpath points nowhere
    path = os.path.join(TMP, "elsewhere.json")
    r = run([CG, "run", "--layer", layer, "--report", path, "--", PROG_DLOPEN, "dlopen"], env=env)
    check(r.returncode == 0, r.stderr)
    rep = json.load(open(path))
    check(calls(rep["processes"][0]) == 6, "six calls through the copied shim: %s" % rep)
    r = run([CG, "list", layer], env=env)
    check(r.returncode == 0 and ("layer toy: " + layer) in r.stdout and ("shim " + shim) in r.stdout, r.stdout + r.stderr)


def run_links_the_real_library_for_the_shim():
    """The run's shim directory: SONAME -> the shim, and
    libcallguard-real-API.so -> the real library: the library variable, else
    the layer's build-time path, else the soname where the loader finds it,
    never a callguard shim."""
    import shutil
    listing = 'cd "$CALLGUARD_STATS_DIR/shims" && for f in *; do echo "$f $(readlink "$f")"; done'

    def links(layer, env=None):
        r = run([CG, "run", "--layer", layer, "--", "sh", "-c", listing], env=env)
        check(r.returncode == 0, r.stderr)
        return dict(l.split(" ", 1) for l in r.stdout.splitlines())

    real = os.path.join(TOYLIB, "libcgtoy.so")
    m = links(TOYLAYER)
    check(m.get("libcallguard-real-toy.so") == real, "the build-time path: %s" % m)
    check(m.get("libcgtoy.so", "").endswith("/callguard/shims/libcgtoy.so"), "the shim: %s" % m)
    other = os.path.join(TMP, "libcgtoy-other.so")
    shutil.copy(real, other)
    m = links(TOYLAYER, env={"CALLGUARD_TOY_LIBRARY": other})
    check(m.get("libcallguard-real-toy.so") == other, "the library variable wins: %s" % m)
    # Built without a path: found as the loader would, past a directory holding callguard's shim.
    unlinked = os.path.join(os.path.dirname(TOYLAYER), "libcallguard_toy_unlinked.so")
    shims = os.path.join(os.path.dirname(TOYLAYER), "callguard", "shims")
    m = links(unlinked, env={"LD_LIBRARY_PATH": shims + ":" + TOYLIB})
    check(m.get("libcallguard-real-toy.so") == real, "the loader's search, skipping the shim: %s" % m)


def run_refuses_what_no_chosen_layer_has():
    marker = os.path.join(TMP, "started-refused")
    policy = os.path.join(TMP, "cl-only.ini")
    with open(policy, "w") as f:
        f.write("[clBuildProgram]\nserialize = igc\n")
    cases = [
        (["--serialize", "clBuildProgram"], {}, "'clBuildProgram'"),
        (["--serialize", "ToyCompile"], {}, "did you mean 'toyCompile'"),
        ([], {"CALLGUARD_SERIALIZE": "clBuildProgram"}, "'clBuildProgram'"),
        ([], {"CALLGUARD_POLICY": policy}, "'clBuildProgram'"),
        ([], {"CALLGUARD_CL_LIBRARY": "/bin/sh"}, "CALLGUARD_CL_LIBRARY"),
        (["--api", "toy"], {}, "no toy layer is installed"),  # a test layer is not an installed one
    ]
    for opts, env, says in cases:
        r = run([CG, "run", "--layer", TOYLAYER, *opts, "--", PROG, "touch", marker], env=env)
        what = "%s %s" % (opts, env)
        check(r.returncode == 2, "%s: exit %d" % (what, r.returncode))
        check(says in r.stderr and r.stderr.count("\n") == 1, "%s: one line naming it: %r" % (what, r.stderr))
        check(not os.path.exists(marker), "%s: the program must not start" % what)
    r = run([CG, "run", "--layer", TOYLAYER, "--serialize", "toyAdd", "--", PROG, "touch", marker],
            env={"CALLGUARD_TOY_LIBRARY": os.path.join(TOYLIB, "libcgtoy.so"), "CALLGUARD_SERIALIZE": "toyCompile"})
    check(r.returncode == 0 and os.path.exists(marker) and not r.stderr, "what the layer has runs: %r" % r.stderr)


def run_default_takes_every_installed_layer_and_no_test_layer():
    installed = sorted(f for f in os.listdir(TOYLIB) if f.startswith("libcallguard_") and f.endswith(".so"))
    r = run([CG, "run", "--", PROG, "env", "LD_PRELOAD"], env={"LD_PRELOAD": ""})
    check(r.returncode == 0, r.stderr)
    got = [] if r.stdout.strip() == "(unset)" else [os.path.basename(p) for p in r.stdout.strip().split(":")]
    check(got == ["libcallguard.so.0"] + installed, "preloaded %s, installed %s" % (got, installed))
    check("libcallguard_toy.so" not in got, "the toy layer is for tests only")
    r = run([CG, "list"])
    check(r.returncode == 0 and "%d layers installed" % len(installed) in r.stdout and "layer toy" not in r.stdout,
          r.stdout + r.stderr)


def run_inside_run_reads_the_preloaded_layer():
    """An inner `callguard run` has the outer one's layers preloaded: loading
    the same layer again registers nothing new, and it still reads it."""
    path = os.path.join(TMP, "inner.json")
    r = run([CG, "run", "--layer", TOYLAYER, "--", CG, "run", "--layer", TOYLAYER, "--report", path, "--", PROG, "calls"])
    check(r.returncode == 0, r.stderr)
    check(calls(json.load(open(path))["processes"][0]) == 5, "the inner run's report")


def list_describes_a_layer_from_a_path():
    r = run([CG, "list", TOYLAYER])
    check(r.returncode == 0, r.stderr)
    check(("layer toy: " + os.path.realpath(TOYLAYER)) in r.stdout and "CALLGUARD_TOY_LIBRARY" in r.stdout
          and "stands in for libcgtoy.so" in r.stdout, r.stdout)
    r = run([CG, "list", os.path.join(TOYLIB, "libcgtoy.so")])
    check(r.returncode == 2 and "not a callguard layer" in r.stderr, r.stderr)
    r = run([CG, "list", "/nonexistent/libcallguard_x.so"])
    check(r.returncode == 2 and "/nonexistent/libcallguard_x.so" in r.stderr, r.stderr)


if __name__ == "__main__":
    main()
