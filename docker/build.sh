#!/usr/bin/env bash
# Builds the s2r image from docker/Dockerfile with buildah (docs/container.md), from the repository:
#   bash docker/build.sh                 # -> localhost/s2r:latest (runtime) and localhost/s2r-build:latest
# Base images, chosen by S2R_BASE:
#   auto (default)  NVIDIA's CUDA images (the Dockerfile's defaults) when present or pullable, else debian
#   registry        NVIDIA's CUDA images, or BUILD_BASE/RUNTIME_BASE from the environment; CUDA backend ON
#   debian          a Debian bookworm base made here with debootstrap from deb.debian.org and imported
#                   with `podman import` (localhost/s2r-base:bookworm, made once and reused), for both
#                   stages; CUDA backend OFF (CPU backend only) unless S2R_CUDA=ON, which installs
#                   Debian's CUDA 11.8 (contrib/non-free nvidia-cuda-toolkit; +5 GB in the build stage)
# Other settings (environment): S2R_IMAGE (localhost/s2r:latest), S2R_CUDA (ON|OFF|AUTO, overrides the
# default above), S2R_STORAGE_DRIVER (overlay, vfs, ...: passed to buildah and podman as
# --storage-driver; the default is containers-storage's own choice), S2R_DEBIAN_MIRROR
# (http://deb.debian.org/debian).
#
# This script installs buildah, podman and debootstrap with apt (root, or sudo) when they are missing
# -- only when it runs; nothing else in the project (tests/run_all.sh, CI) installs them.
# Re-runnable: the base is reused, and buildah's layer cache (--layers) keeps the dependency layers,
# so a rebuild after a source change recompiles s2r and nothing else. Stops at the first failure,
# naming the step (--force-rm: a failed step leaves no working container behind).
set -euo pipefail
cd "$(dirname "$0")/.."

image=${S2R_IMAGE:-localhost/s2r:latest}
build_image=${image%:*}-build:${image##*:}
[ "${image##*:}" = "$image" ] && build_image=$image-build
base_mode=${S2R_BASE:-auto}
debian_base=localhost/s2r-base:bookworm
mirror=${S2R_DEBIAN_MIRROR:-http://deb.debian.org/debian}
cuda_build_base=docker.io/nvidia/cuda:13.0.0-devel-ubuntu24.04     # the Dockerfile's defaults
cuda_runtime_base=docker.io/nvidia/cuda:13.0.0-runtime-ubuntu24.04

step() { echo "build.sh: $*" >&2; }
fail() { echo "build.sh: FAILED: $*" >&2; exit 1; }
run() { echo "+ $*" >&2; "$@"; }

case "$base_mode" in auto|registry|debian) ;; *) fail "S2R_BASE=$base_mode: one of auto, registry, debian" ;; esac

# --- tools ---------------------------------------------------------------------------------------
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
need=()
command -v buildah >/dev/null || need+=(buildah)
command -v podman >/dev/null || need+=(podman)
command -v debootstrap >/dev/null || need+=(debootstrap)
if [ ${#need[@]} -gt 0 ]; then
  command -v apt-get >/dev/null || fail "missing ${need[*]} and no apt-get to install them; install them by hand"
  step "installing ${need[*]} with apt"
  run $SUDO apt-get update -qq || fail "apt-get update"
  run $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" \
    || fail "apt-get install ${need[*]}"
fi
storage=()
[ -n "${S2R_STORAGE_DRIVER:-}" ] && storage=(--storage-driver "$S2R_STORAGE_DRIVER")
buildah "${storage[@]}" info >/dev/null 2>&1 || fail "buildah ${storage[*]} info: buildah cannot start here (try S2R_STORAGE_DRIVER=vfs)"
step "buildah $(buildah --version | awk '{print $3}'), storage driver $(buildah "${storage[@]}" info --format '{{.store.GraphDriverName}}')"
have_image() { buildah "${storage[@]}" inspect --type image "$1" >/dev/null 2>&1; }

# --- base images -----------------------------------------------------------------------------------
make_debian_base() {
  if have_image "$debian_base"; then
    step "reusing the Debian base $debian_base"
    return
  fi
  command -v podman >/dev/null || fail "podman is needed to import the Debian base"
  local rootfs
  rootfs=$(mktemp -d "${TMPDIR:-/var/tmp}/s2r-rootfs.XXXXXX")
  # the root file system is root-owned; remove it however this function ends
  trap 'rm -rf "$rootfs"' EXIT
  step "making the Debian bookworm base with debootstrap from $mirror (a few minutes)"
  echo "+ $SUDO debootstrap --variant=minbase bookworm $rootfs $mirror  (log: $rootfs.log)" >&2
  $SUDO debootstrap --variant=minbase bookworm "$rootfs" "$mirror" >"$rootfs.log" 2>&1 \
    || { tail -n 20 "$rootfs.log" >&2; rm -f "$rootfs.log"; fail "debootstrap bookworm $rootfs $mirror"; }
  rm -f "$rootfs.log"
  # the point releases and security updates too, then no package lists or .debs in the image
  $SUDO tee "$rootfs/etc/apt/sources.list" >/dev/null <<EOF
deb $mirror bookworm main
deb $mirror bookworm-updates main
deb http://deb.debian.org/debian-security bookworm-security main
EOF
  $SUDO rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/cache/apt/*.bin
  step "importing it as $debian_base"
  $SUDO tar --numeric-owner -C "$rootfs" -c . \
    | run podman "${storage[@]}" import --change 'CMD ["/bin/bash"]' \
        --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' - "$debian_base" >/dev/null \
    || fail "podman import $debian_base"
  $SUDO rm -rf "$rootfs"
  trap - EXIT
}

build_base=${BUILD_BASE:-}
runtime_base=${RUNTIME_BASE:-}
cuda=""
debian_cuda=0
if [ "$base_mode" != debian ] && [ -z "$build_base" ]; then
  # NVIDIA's CUDA images: present, or pullable (a registry within reach)
  if have_image "$cuda_build_base" && have_image "$cuda_runtime_base"; then
    build_base=$cuda_build_base runtime_base=$cuda_runtime_base
  else
    step "pulling $cuda_build_base and $cuda_runtime_base"
    if timeout 1800 buildah "${storage[@]}" pull -q "$cuda_build_base" >/dev/null \
       && timeout 1800 buildah "${storage[@]}" pull -q "$cuda_runtime_base" >/dev/null; then
      build_base=$cuda_build_base runtime_base=$cuda_runtime_base
    elif [ "$base_mode" = registry ]; then
      fail "cannot pull NVIDIA's CUDA images (S2R_BASE=registry); set BUILD_BASE/RUNTIME_BASE or S2R_BASE=debian"
    else
      step "no registry within reach: building on a local Debian base, CUDA backend off"
    fi
  fi
fi
if [ -n "$build_base" ]; then
  runtime_base=${runtime_base:-$build_base}
  cuda=${S2R_CUDA:-ON}
else
  make_debian_base
  build_base=$debian_base runtime_base=$debian_base
  cuda=${S2R_CUDA:-OFF}
  [ "$cuda" = ON ] && debian_cuda=1
fi

# --- the image -------------------------------------------------------------------------------------
revision=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
[ "$revision" != unknown ] && [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ] && revision+="-dirty"
image_id() { buildah "${storage[@]}" images --noheading --no-trunc --format '{{.ID}}' "$1" 2>/dev/null | head -n1 || true; }
old_ids=("$(image_id "$image")" "$(image_id "$build_image")")
bud=(buildah "${storage[@]}" bud --isolation chroot --layers --force-rm -f docker/Dockerfile
     --build-arg BUILD_BASE="$build_base" --build-arg RUNTIME_BASE="$runtime_base"
     --build-arg S2R_CUDA="$cuda" --build-arg DEBIAN_CUDA="$debian_cuda" --build-arg S2R_GIT_REVISION="$revision")
step "building $build_image and $image: bases $build_base / $runtime_base, S2R_CUDA=$cuda (Debian's CUDA: $debian_cuda), revision $revision"
start=$(date +%s)
run "${bud[@]}" --target build -t "$build_image" . || fail "buildah bud (build stage)"
run "${bud[@]}" -t "$image" . || fail "buildah bud (runtime stage)"
elapsed=$(( $(date +%s) - start ))
# the images these tags named before the rebuild are left untagged: remove them (not the layer cache;
# rmi refuses an image that is still tagged or in use, which is then left alone)
new_ids=" $(image_id "$image") $(image_id "$build_image") "
for id in "${old_ids[@]}"; do
  [ -n "$id" ] && [[ "$new_ids" != *" $id "* ]] && buildah "${storage[@]}" rmi "$id" >/dev/null 2>&1 || true
done
step "built in ${elapsed}s; image sizes:"
for name in "$build_image" "$image" "$build_base" "$runtime_base"; do
  printf '  %-60s %s\n' "$name" "$(buildah "${storage[@]}" images --noheading --format '{{.Size}}' "$name" 2>/dev/null | head -n1 || true)"
done | sort -u >&2
echo "$image"
