#!/usr/bin/env bash
# The whole test suite on a fresh machine: install, build (CUDA backend compiled when nvcc exists),
# run the GoogleTest suite through CTest, then the Python interop / cross-engine tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash docker/install_deps.sh
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$jobs"
ctest --test-dir build --output-on-failure -j"$jobs"
S2R_BIN="$PWD/build/s2r" .venv/bin/python -m pytest tests/python -q
