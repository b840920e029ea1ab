#!/bin/sh
# Installs the Debian packages callguard's build, tests and demo need.
# Run as root (or through sudo) on Debian 12. Then makes build-venv/ with the
# PyPI clients the tests use (scripts/setup-venv.sh).
# libamdhip64-dev: Debian 12's HIP runtime (ROCm 5.2.3), which the HIP layer is generated from and
# tested on (no AMD GPU needed). libclang-rt-14-dev: libFuzzer, for the fuzz build of scripts/test.sh. debootstrap, curl: the wheel's
# Debian 11 check (tests/package/debian11_wheel.sh); scripts/build-wheel.sh takes its tools from PyPI.
# clang-format-14: scripts/format.sh and its check in the tests. openmpi-bin, libopenmpi-dev, python3-mpi4py:
# Open MPI 4.1, which the MPI layer is generated from and tested on (docs/mpi.md). mpich, libmpich-dev: MPICH 4.0.2
# beside it, for the thread fix's tests on MPICH (mpicc.mpich, mpiexec.mpich); Open MPI stays the mpicc/mpirun
# that the other tests use (pinned below). tmux: the test that reads the
# report as a person sees it, on a 100-column screen (tests/cli/test_cli_cl.py). iproute2: `ip netns`, the two
# hosts of tests/multihost (skipped without it).
set -eu
SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo
$SUDO apt-get update
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y \
  build-essential cmake pkg-config curl debootstrap clang-14 clang-format-14 libclang-14-dev libclang-rt-14-dev libinih-dev \
  python3 python3-dev python3-venv \
  ocl-icd-opencl-dev opencl-c-headers pocl-opencl-icd clinfo python3-pyopencl python3-numpy \
  libze1 libze-dev llvm-spirv-14 spirv-tools \
  libamdhip64-dev \
  openmpi-bin libopenmpi-dev python3-mpi4py mpich libmpich-dev \
  ocaml-nox ruby-dev \
  valgrind tmux iproute2
# Open MPI's priority wins on amd64 today; pinned so that MPICH never becomes the default mpicc, mpirun or mpi.h.
for alt in mpi mpirun "mpi-$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)"; do
  path=$(update-alternatives --list "$alt" 2>/dev/null | grep -m1 openmpi) && $SUDO update-alternatives --set "$alt" "$path"
done
sh "$(dirname "$0")/setup-venv.sh"
