#!/bin/sh
# Makes build-venv/ (ignored by git, beside the source): a Python virtual environment with the PyPI clients the
# tests run under callguard. Today: cuda-bindings (cuda-python), for the test
# cuda_python_under_callguard_run_same_output_and_counted, which tests/cuda/CMakeLists.txt points at
# build-venv/bin/python unless -DCALLGUARD_CUDA_PYTHON=PATH names another Python. About 60 MB, a few seconds
# to install. Needs python3-venv (scripts/setup-debian.sh installs it, then runs this) and PyPI.
# Usage: scripts/setup-venv.sh [DIR]   (default: build-venv in the source tree). Does nothing if DIR has them.
set -eu
cd "$(dirname "$0")/.."
venv=${1:-build-venv}
# The version the tests were written against; the GPU machine's is 13.3.1, same API.
pkgs="cuda-bindings==13.5.0"
if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c "import cuda.bindings.driver" 2>/dev/null; then
    echo "setup-venv: $venv has cuda-bindings already"
    exit 0
fi
/usr/bin/python3 -m venv "$venv"
# shellcheck disable=SC2086
"$venv/bin/python" -m pip install --disable-pip-version-check -q $pkgs
"$venv/bin/python" -c "import cuda.bindings.driver" ||
    { echo "setup-venv: cuda-bindings does not import in $venv" >&2; exit 1; }
echo "setup-venv: $venv ready ($pkgs)"
