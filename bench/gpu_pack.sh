#!/usr/bin/env bash
# Packs prebuilt CUDA binaries for bench/gpu_check.sh on a device machine whose image lacks the
# build's dependencies (Ceres, yaml-cpp, blosc, assimp, ...): s2r and s2r_tests from BUILD (default
# build/, configured with the CUDA backend), every shared library they load except the C and C++
# runtimes into .gpu/lib, the C runtime into .gpu/core (used only if the device's is older), and,
# where BUILD_MB8 is given, that build's s2r (step kernels for 8 blocks per SM) into .gpu/bin-mb8.
# They are packed as .gpu/pack.tar.xz (about 30 MB; the device tool carries 64 MiB with the working
# tree), which gpu_check.sh unpacks. .gpu/ is ignored by git; carry it (`carry: [".gpu"]`).
# $S2R_GPU_PACK_DIR packs into another folder instead (gpu_check.sh reads the same variable).
set -euo pipefail
cd "$(dirname "$0")/.."
build="$(realpath -m "${1:-build}")"
build_mb8="${2:+$(realpath -m "$2")}"
out="$(realpath -m "${S2R_GPU_PACK_DIR:-.gpu}")"
grep -q "S2R_WITH_CUDA=1\|backend_cuda.cu" "$build/CMakeFiles/s2r_core.dir/build.make" 2>/dev/null ||
  { echo "gpu_pack: $build was not configured with the CUDA backend" >&2; exit 1; }
rm -rf "$out"
mkdir -p "$out/tree"
if [ -z "${S2R_GPU_PACK_DIR:-}" ] && [ -d .git ]; then
  grep -qx '/.gpu/' .git/info/exclude 2>/dev/null || echo '/.gpu/' >> .git/info/exclude
fi
cd "$out/tree"
mkdir -p bin lib core
# not stripped: the symbol table (120 kB compressed for s2r) names the functions in the backtraces
# that gpu_check.sh takes where a smoke run dies
cp "$build/s2r" bin/s2r
cp "$build/s2r_tests" bin/s2r_tests
cp "$build/cuda_resource_usage.txt" .
if [ -n "$build_mb8" ]; then
  mkdir -p bin-mb8
  cp "$build_mb8/s2r" bin-mb8/s2r
  cp "$build_mb8/cuda_resource_usage.txt" cuda_resource_usage_mb8.txt
fi
# the folder the tests' S2R_SOURCE_DIR names (configs/ is read from there)
sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt" > source_dir
core='^(libc|libm|libdl|libpthread|librt|libstdc\+\+|libgcc_s|ld-linux-x86-64)\.so'
for b in bin/s2r bin/s2r_tests; do ldd "$b"; done | awk '$3 ~ /^\// {print $3} $1 ~ /^\/lib64/ {print $1}' |
  sort -u | while read -r lib; do
    if basename "$lib" | grep -qE "$core"; then cp -L "$lib" core/; else cp -L "$lib" lib/; fi
  done
du -sh bin lib core
tar cJf ../pack.tar.xz .
cd ..
rm -rf tree
ls -la pack.tar.xz
