#!/usr/bin/env bash
# The whole test suite on a fresh machine: install, build (CUDA backend compiled when nvcc exists),
# run the GoogleTest suite through CTest, again for the float64 CPU build, then the Python
# cross-engine tests against MuJoCo.
set -euo pipefail
cd "$(dirname "$0")/.."
bash docker/install_deps.sh
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$jobs"
ctest --test-dir build --output-on-failure -j"$jobs"
# the float64 reference build of the CPU engine passes the same suite (pinned hashes skip)
cmake -S . -B build-f64 -DCMAKE_BUILD_TYPE=Release -DS2R_DOUBLE=ON -DS2R_CUDA=OFF -DS2R_BUILD_BENCH=OFF
cmake --build build-f64 -j"$jobs"
ctest --test-dir build-f64 --output-on-failure -j"$jobs"
# bounded libFuzzer run of the store's metadata parser and chunk decoder (skips without clang)
bash tests/fuzz/run_fuzz.sh 20
# pytest's temporary files in one folder of this run, removed when every test passed
pytest_tmp=$(mktemp -d "${TMPDIR:-/tmp}/s2r_pytest.XXXXXX")
S2R_BIN="$PWD/build/s2r" .venv/bin/python -m pytest tests/python -q --basetemp="$pytest_tmp" -p no:cacheprovider
rm -rf "$pytest_tmp"
# the container image, built and run with buildah where buildah is installed (skips with a message
# otherwise; S2R_TEST_CONTAINER=0 skips it on purpose)
bash tests/container/test_image.sh
