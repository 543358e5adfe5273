#!/usr/bin/env bash
# The whole test suite on a fresh machine: install, build (CUDA backend compiled when nvcc exists),
# run the GoogleTest suite through CTest, again for the float64 CPU build, for an
# AddressSanitizer + UBSan build and for a ThreadSanitizer build, the fuzzers, then the Python
# cross-engine tests against MuJoCo.
set -euo pipefail
cd "$(dirname "$0")/.."
bash docker/install_deps.sh
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$jobs"
ctest --test-dir build --output-on-failure -j"$jobs"
# the CLI built with the device's code path on the CPU (S2R_LEAN_READS, kernels/solver_body.h):
# tests/python/test_lean_reads.py checks it against build/s2r bit for bit
cmake -S . -B build-lean -DCMAKE_BUILD_TYPE=Release -DS2R_CUDA=OFF -DS2R_BUILD_BENCH=OFF -DS2R_BUILD_TESTS=OFF \
  -DCMAKE_CXX_FLAGS=-DS2R_LEAN_READS
cmake --build build-lean --target s2r -j"$jobs"
# the float64 reference build of the CPU engine passes the same suite (pinned hashes skip); it
# runs the loads the device's step skips as the device does (S2R_LEAN_READS, kernels/solver_body.h),
# so the suite covers that path without a GPU
cmake -S . -B build-f64 -DCMAKE_BUILD_TYPE=Release -DS2R_DOUBLE=ON -DS2R_CUDA=OFF -DS2R_BUILD_BENCH=OFF \
  -DCMAKE_CXX_FLAGS=-DS2R_LEAN_READS
cmake --build build-f64 -j"$jobs"
ctest --test-dir build-f64 --output-on-failure -j"$jobs"
# AddressSanitizer and UndefinedBehaviorSanitizer over the same suite: the CPU engine, the CUDA
# backend's code in the emulation (its kernels' local arrays are stack arrays there, its device
# blocks guarded pages), the store and the CLI's library code; any report fails the run
# (S2R_TEST_SANITIZE=0 skips it). It found reads through pointers into destroyed samples that
# had let two physics tests pass on stale memory (stop 32).
if [ "${S2R_TEST_SANITIZE:-1}" != "0" ]; then
  san="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O1 -g" \
    -DCMAKE_CXX_FLAGS="$san" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
    -DS2R_CUDA=OFF -DS2R_BUILD_BENCH=OFF
  # -g puts the folder in ccache's hash; with these a fresh clone reuses an earlier clone's objects
  # (their line tables then name that clone's paths)
  CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1 cmake --build build-asan -j"$jobs"
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir build-asan --output-on-failure -j"$jobs"
  # ThreadSanitizer over the same suite (clang; GCC 12's TSan build of s2r_tests crashes while
  # listing its tests): the CPU backend's worker threads, the store's writer, the sweep, and the
  # emulated CUDA launches, whose threads step neighbouring worlds at once, so a kernel writing
  # outside its world is named as a race instead of showing up as a mismatch with the CPU.
  if command -v clang++ > /dev/null; then
    CC=clang CXX=clang++ cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O1 -g" \
      -DCMAKE_CXX_FLAGS="-fsanitize=thread" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=thread" \
      -DS2R_CUDA=OFF -DS2R_BUILD_BENCH=OFF
    CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1 cmake --build build-tsan -j"$jobs"
    TSAN_OPTIONS=halt_on_error=1 \
      ctest --test-dir build-tsan --output-on-failure -j"$jobs"
  else
    echo "run_all: clang++ not found, the ThreadSanitizer build is skipped" >&2
  fi
fi
# bounded libFuzzer run of the store's metadata parser and chunk decoder (skips without clang)
bash tests/fuzz/run_fuzz.sh 20
# pytest's temporary files in one folder of this run, removed when every test passed
pytest_tmp=$(mktemp -d "${TMPDIR:-/tmp}/s2r_pytest.XXXXXX")
S2R_BIN="$PWD/build/s2r" S2R_LEAN_BIN="$PWD/build-lean/s2r" \
  .venv/bin/python -m pytest tests/python -q --basetemp="$pytest_tmp" -p no:cacheprovider
rm -rf "$pytest_tmp"
# the same tests with the sanitized CLI: its bad-input paths (configs, scenes, CSV logs, stores)
# run under AddressSanitizer and UBSan; a test may expect the exit code a report gives, so the
# reports go to files, and any file fails the run
if [ "${S2R_TEST_SANITIZE:-1}" != "0" ]; then
  pytest_tmp=$(mktemp -d "${TMPDIR:-/tmp}/s2r_pytest.XXXXXX")
  mkdir "$pytest_tmp/sanitizer_reports"
  reports="$pytest_tmp/sanitizer_reports"
  ASAN_OPTIONS="detect_leaks=1:log_path=$reports/asan" UBSAN_OPTIONS="print_stacktrace=1:log_path=$reports/ubsan" \
    S2R_BIN="$PWD/build-asan/s2r" .venv/bin/python -m pytest tests/python -q --basetemp="$pytest_tmp/t" -p no:cacheprovider
  if [ -n "$(ls -A "$reports")" ]; then
    cat "$reports"/* >&2
    echo "run_all: the sanitized s2r reported errors (above; kept in $reports)" >&2
    exit 1
  fi
  rm -rf "$pytest_tmp"
fi
# the container image, built and run with buildah where buildah is installed (skips with a message
# otherwise; S2R_TEST_CONTAINER=0 skips it on purpose)
bash tests/container/test_image.sh
