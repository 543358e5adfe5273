#!/usr/bin/env bash
# Installs everything s2r needs on a fresh Debian machine (as root, or with sudo):
#   C++: Debian packages (compilers, CMake, Eigen, pugixml, CLI11, nlohmann-json, yaml-cpp, Ceres, gnuplot,
#        GoogleTest, Google Benchmark, ccache); the CUDA toolkit is used when present, never installed here.
#   Python: a virtual environment in .venv with the test oracles (MuJoCo, numpy, pytest; zarr,
#           tensorstore and numcodecs for the Zarr store interop test).
# Safe to run again: it installs only what is missing.
#   --build-only: only the Debian packages that compile the s2r binary (no tests, benchmarks, fuzzers,
#                 gnuplot or Python); docker/Dockerfile's build stage uses it.
set -euo pipefail
cd "$(dirname "$0")/.."
build_only=0
case "${1:-}" in
  "") ;;
  --build-only) build_only=1 ;;
  *) echo "install_deps: unknown argument '$1' (the one option is --build-only)" >&2; exit 2 ;;
esac

# what compiles s2r itself (the binary's build dependencies)
packages=(build-essential cmake pkg-config libeigen3-dev libpugixml-dev libcli11-dev nlohmann-json3-dev
          libblosc-dev libzstd-dev zlib1g-dev   # Zarr v3 store codecs (host/store)
          libyaml-cpp-dev                       # sweep and sysid configs (host/sweep)
          libassimp-dev libqhull-dev            # mesh geoms: mesh files and convex hulls (host/scene)
          libceres-dev)                         # system identification (solvers/)
if [ "$build_only" -eq 0 ]; then
  packages+=(git ccache libgtest-dev libgmock-dev libbenchmark-dev python3 python3-venv
             gnuplot-nox                        # s2r sysid --plot
             slurm-wlm munge                    # the private Slurm cluster of tests/python/test_slurm.py
             clang libclang-rt-14-dev           # libFuzzer for tests/fuzz/run_fuzz.sh
             xz-utils)                          # bench/gpu_pack.sh (tests/python/test_gpu_check.py)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install_deps: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if [ "$build_only" -eq 1 ]; then
  echo "install_deps: done (build dependencies only)"
  exit 0
fi

# Python oracles for the cross-engine tests and the MuJoCo side of the benchmarks
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
if ! .venv/bin/python -c "import mujoco, numpy, pytest, zarr, tensorstore, numcodecs, scipy" 2>/dev/null; then
  .venv/bin/pip install -q --disable-pip-version-check -r tests/python/requirements.txt
fi
echo "install_deps: done"
