#!/usr/bin/env bash
# Prints, one a line, the Debian/Ubuntu packages that hold the shared libraries BINARY loads (ldd),
# so docker/Dockerfile's runtime stage installs exactly those, whatever the distribution names them
# (libyaml-cpp0.7 on bookworm, libyaml-cpp0.8 on Ubuntu 24.04, ...).
#   bash docker/runtime_packages.sh build/s2r > runtime-packages.txt
# Libraries under /usr/local/cuda (libcudart) are left to the runtime base (nvidia/cuda:*-runtime).
# Fails, naming the library, when ldd reports one missing or no package holds one; the C library
# and the loader (libc6, libgcc-s1, libstdc++6 come with any base image) are listed too: harmless.
set -euo pipefail
bin=${1:?usage: runtime_packages.sh BINARY}
ldd_out=$(ldd "$bin")
if grep -q "not found" <<<"$ldd_out"; then
  echo "runtime_packages: $bin: missing libraries:" >&2
  grep "not found" <<<"$ldd_out" >&2
  exit 1
fi
# the resolved paths of every library (the "=> /path" column; the loader has no arrow)
mapfile -t libs < <(awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}' <<<"$ldd_out" | sort -u)
declare -A pkgs=()
for lib in "${libs[@]}"; do
  case "$(readlink -f "$lib")" in
    /usr/local/cuda*) echo "runtime_packages: $lib: from the CUDA toolkit, the CUDA runtime base image has it" >&2
                      continue ;;
  esac
  found=""
  # dpkg records the path a package shipped; with merged /usr that may be /lib/... or /usr/lib/...,
  # and the file itself may be a symlink to a versioned name (or an alternative, e.g. liblapack.so.3)
  for cand in "$lib" "$(readlink -f "$lib")"; do
    for p in "$cand" "${cand#/usr}" "/usr$cand"; do
      if owner=$(dpkg-query -S "$p" 2>/dev/null | head -n1) && [ -n "$owner" ]; then
        found=${owner%%:*}
        found=${found%%,*}
        break 2
      fi
    done
  done
  if [ -z "$found" ]; then
    echo "runtime_packages: no package holds $lib" >&2
    exit 1
  fi
  pkgs[$found]=1
done
printf '%s\n' "${!pkgs[@]}" | sort
