#!/usr/bin/env bash
# The container image, end to end (docs/container.md): builds it with docker/build.sh (cached after
# the first time), then inside it, with `buildah run --isolation chroot` and a temporary folder
# mounted at /out: `s2r --version` names this checkout's revision, a 32-episode sweep of
# builtin:push exits 0, `s2r inspect` reads the store back (32 episodes), and `s2r sysid --plot`
# fits a parameter to that store and draws the PNG (Ceres and gnuplot present in the slim image).
#
# Runs wherever buildah is installed (CI included: tests/run_all.sh calls it) and skips (exit 0)
# with a message where it is not; S2R_TEST_CONTAINER=0 skips it on purpose. CI does not install
# container tools itself (docker/build.sh does, with apt). The first build takes about 7 minutes on 2 cores (plus the Debian base and the tools, ~2 minutes); a
# rebuild with unchanged sources reuses every layer. Removes its container and folder however it
# ends; the images stay as the build cache (docs/container.md says how to remove them).
#   bash tests/container/test_image.sh
set -euo pipefail
cd "$(dirname "$0")/../.."

if [ "${S2R_TEST_CONTAINER:-1}" = 0 ]; then
  echo "test_image: SKIPPED (S2R_TEST_CONTAINER=0)"
  exit 0
fi
if ! command -v buildah >/dev/null; then
  echo "test_image: SKIPPED: buildah is not installed (bash docker/build.sh installs it with apt, with podman and debootstrap)"
  exit 0
fi

image=${S2R_IMAGE:-localhost/s2r:latest}
export S2R_IMAGE=$image
storage=()
[ -n "${S2R_STORAGE_DRIVER:-}" ] && storage=(--storage-driver "$S2R_STORAGE_DRIVER")
fail() { echo "test_image: FAILED: $*" >&2; exit 1; }

bash docker/build.sh >/dev/null || fail "docker/build.sh"

out=$(mktemp -d "${TMPDIR:-/tmp}/s2r_container.XXXXXX")
ctr=""
cleanup() {
  [ -n "$ctr" ] && buildah "${storage[@]}" rm "$ctr" >/dev/null 2>&1 || true
  rm -rf "$out"
}
trap cleanup EXIT
ctr=$(buildah "${storage[@]}" from --name "s2r-test-$$" "$image") || fail "buildah from $image"
in_image() { buildah "${storage[@]}" run --isolation chroot -v "$out:/out" "$ctr" -- "$@"; }

version=$(in_image s2r --version) || fail "s2r --version in the image"
echo "test_image: $version"
revision=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
[[ "$version" == *"$revision"* ]] || fail "the image's s2r ($version) is not this checkout's revision $revision"

echo "test_image: s2r sweep builtin:push --episodes 32 --out /out/push.zarr (in the image)"
in_image s2r sweep builtin:push --episodes 32 --out /out/push.zarr || fail "s2r sweep in the image exited $?"
inspect=$(in_image s2r inspect /out/push.zarr --json) || fail "s2r inspect in the image exited $?"
grep -q '"episodes": 32,' <<<"$inspect" || fail "s2r inspect does not report 32 episodes: $(head -c 400 <<<"$inspect")"
[ -f "$out/push.zarr/zarr.json" ] || fail "no store on the mounted folder"

# sysid with --plot: Ceres' libraries and gnuplot (pngcairo, fonts) in the runtime image
cat > "$out/fit.yaml" <<'EOF'
scene: builtin:box_push
parameters:
  - name: box_mass
    targets: ["body_mass[box]"]
    initial: 1.0
    bounds: [0.2, 3]
data: {store: push.zarr, train_episodes: [0, 1], held_out_episodes: [2]}
observations:
  - quantity: "body_pos[box].x"
    noise: 0.001
solver: {max_iterations: 5}
EOF
in_image sh -c 'cd /out && s2r sysid fit.yaml --out fit.json --plot fit.png' >/dev/null 2>&1 \
  || fail "s2r sysid --plot in the image exited $?"
[ -s "$out/fit.json" ] || fail "sysid wrote no fit.json"
[ "$(head -c 4 "$out/fit.png" | tail -c 3)" = PNG ] || fail "sysid --plot wrote no PNG"
echo "test_image: passed ($image: sweep, inspect, sysid --plot)"
