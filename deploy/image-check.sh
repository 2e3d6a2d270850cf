#!/usr/bin/env bash
# Repeats deploy/Dockerfile's steps without a container engine: the build stages in one Debian 12
# (bookworm, minbase) chroot, each target's runtime stage in another, all made by debootstrap. It
# builds a fresh clone of the committed HEAD, runs each binary's version as the image's non-root
# user and compares the libraries `ldd` resolves with the target's package list:
#   fleetsched             (default target)   deploy/runtime-packages.txt
#   fleetsched-scheduler   (--target ...)     deploy/runtime-packages-scheduler.txt
#
#   sudo deploy/image-check.sh [--target NAME]... [WORKDIR]   (default: both targets,
#                                                              WORKDIR /tmp/fleetsched-image-check)
#
# Needs root, debootstrap and git on the host, and a Debian package mirror (debootstrap's default, or
# FLEETSCHED_DEBIAN_MIRROR).
# The chroots are kept in WORKDIR and reused; delete it to start from scratch.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
targets=()
while [ $# -gt 0 ]; do
  case $1 in
    --target)
      case ${2:-} in
        fleetsched|fleetsched-scheduler) targets+=("$2"); shift 2 ;;
        *) echo "image-check: --target fleetsched or fleetsched-scheduler" >&2; exit 2 ;;
      esac ;;
    *) break ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || targets=(fleetsched fleetsched-scheduler)
wants() { [[ " ${targets[*]} " == *" $1 "* ]]; }
work=${1:-/tmp/fleetsched-image-check}
mirror=${FLEETSCHED_DEBIAN_MIRROR:-}  # empty: debootstrap's default mirror
release=bookworm
build_root=$work/build-root
runtime_root=$work/runtime-root
scheduler_root=$work/scheduler-runtime-root

[ "$(id -u)" -eq 0 ] || { echo "image-check: needs root (debootstrap, chroot)" >&2; exit 1; }
command -v debootstrap >/dev/null || { echo "image-check: apt-get install debootstrap" >&2; exit 1; }

mounted=()
cleanup() {
  for m in "${mounted[@]}"; do umount "$m" 2>/dev/null || true; done
}
trap cleanup EXIT

# The official debian:bookworm and debian:bookworm-slim images are minbase systems too.
makeRoot() {
  local root=$1
  if [ ! -x "$root/usr/bin/apt-get" ]; then
    echo "image-check: debootstrap $release into $root" >&2
    debootstrap --variant=minbase "$release" "$root" ${mirror:+"$mirror"} >"$work/debootstrap-$(basename "$root").log"
  fi
  cp /etc/resolv.conf "$root/etc/resolv.conf"
  # The host's own CAs (none on a plain Debian), as scripts/check-fresh.sh copies them: on a network
  # that intercepts TLS the root must trust what the host trusts, or the Go module proxy is
  # unreachable. ca-certificates (bootstrap.sh installs it) adds them to the root's bundle.
  if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
    mkdir -p "$root/usr/local/share/ca-certificates"
    cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
    if [ -x "$root/usr/sbin/update-ca-certificates" ]; then
      chroot "$root" update-ca-certificates >/dev/null
    fi
  fi
  mountpoint -q "$root/proc" || { mount -t proc proc "$root/proc"; mounted+=("$root/proc"); }
}

mkdir -p "$work"
makeRoot "$build_root"
if wants fleetsched; then makeRoot "$runtime_root"; fi
if wants fleetsched-scheduler; then makeRoot "$scheduler_root"; fi

# --- build stage -------------------------------------------------------------------------------
commit=$(git -C "$repo" rev-parse HEAD)
rm -rf "$build_root/src"
git clone --quiet --no-checkout "$(git -C "$repo" rev-parse --path-format=absolute --git-common-dir)" \
  "$build_root/src"
git -C "$build_root/src" checkout --quiet "$commit"
# Docker sends only what .dockerignore lets through; drop the same paths so that a build which
# needs an ignored file fails here too.
(
  cd "$build_root/src"
  shopt -s globstar nullglob dotglob
  while read -r pattern; do
    pattern=${pattern%%#*}
    pattern=${pattern%/}
    pattern=$(echo "$pattern" | xargs)
    [ -n "$pattern" ] || continue
    for path in $pattern; do rm -rf -- "$path"; done
  done < "$repo/.dockerignore"
)
echo "image-check: build stage, commit $commit" >&2
# Same commands, same order as the Dockerfile's build stages (scheduler-build after build).
build_scheduler=""
if wants fleetsched-scheduler; then
  build_scheduler='GO_PARALLEL=$(nproc) scripts/build-scheduler.sh build
  build/scheduler/fleetsched-scheduler --version'
fi
chroot "$build_root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root bash -euc "
  bash /src/scripts/bootstrap.sh
  cd /src
  meson setup build --buildtype=release >/dev/null
  ninja -C build cmd/fleetsched/fleetsched >/dev/null
  build/cmd/fleetsched/fleetsched version
  $build_scheduler"

# --- runtime stages ----------------------------------------------------------------------------
# checkRuntime ROOT PACKAGE_LIST BINARY VERSION_ARG: the runtime stage of one target.
checkRuntime() {
  local root=$1 list=$2 binary=$3 versionArg=$4 name
  name=$(basename "$binary")
  echo "image-check: runtime stage of $name" >&2
  cp "$repo/deploy/$list" "$root/tmp/runtime-packages.txt"
  chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root sh -euc '
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      $(sed -e "s/#.*//" /tmp/runtime-packages.txt) >/dev/null
    getent group fleetsched >/dev/null || groupadd --gid 65532 fleetsched
    getent passwd fleetsched >/dev/null || useradd --no-log-init --uid 65532 --gid 65532 --no-create-home \
      --home-dir /nonexistent --shell /usr/sbin/nologin fleetsched'
  install -m 0755 "$build_root/src/$binary" "$root/usr/local/bin/$name"

  echo "image-check: ldd /usr/local/bin/$name (runtime stage)" >&2
  chroot "$root" ldd "/usr/local/bin/$name" | tee "$work/ldd-$name.txt"
  if grep -q 'not found' "$work/ldd-$name.txt"; then
    echo "image-check: FAIL: the runtime stage of $name misses a library" >&2
    exit 1
  fi
  chroot --userspec=65532:65532 "$root" "/usr/local/bin/$name" "$versionArg"

  # Which listed packages does the binary really use, and which used ones are not listed (those
  # would only be present by accident, as dependencies of something else)?
  used=$(awk '/=>/ {print $3}' "$work/ldd-$name.txt" | while read -r lib; do
    chroot "$root" dpkg -S "$(chroot "$root" readlink -f "$lib")" 2>/dev/null || \
    chroot "$root" dpkg -S "$lib" 2>/dev/null || true
  done | cut -d: -f1 | sort -u)
  listed=$(sed -e 's/#.*//' "$repo/deploy/$list" | tr -s ' \n' '\n' | sed '/^$/d' | sort -u)
  echo "image-check: $name: packages providing linked libraries: $(echo $used)"
  unlisted=$(comm -13 <(echo "$listed") <(echo "$used") | grep -v -x -e libc6 -e libgcc-s1 || true)
  unused=$(comm -23 <(echo "$listed") <(echo "$used") | grep -v -x -e ca-certificates || true)
  [ -z "$unused" ] || echo "image-check: note: $name: listed but not linked (yet): $(echo $unused)"
  if [ -n "$unlisted" ]; then
    echo "image-check: FAIL: $name links packages not in $list: $(echo $unlisted)" >&2
    exit 1
  fi
}
if wants fleetsched-scheduler; then
  checkRuntime "$scheduler_root" runtime-packages-scheduler.txt build/scheduler/fleetsched-scheduler --version
fi
if ! wants fleetsched; then
  echo "image-check: OK (commit $commit, ${targets[*]})"
  exit 0
fi
checkRuntime "$runtime_root" runtime-packages.txt build/cmd/fleetsched/fleetsched version
# Forward-looking: the runtime package behind each shared library that a -dev package from
# bootstrap.sh offers (test and benchmark libraries aside). The binary may link any of them once the
# code uses it; unlisted ones are reported. (fleetsched-scheduler links exactly the libraries of
# capi/go/engine.go's cgo LDFLAGS, which its ldd check above covers.)
listed=$(sed -e 's/#.*//' "$repo/deploy/runtime-packages.txt" | tr -s ' \n' '\n' | sed '/^$/d' | sort -u)
while read -r dev; do
  for so in $(chroot "$build_root" dpkg -L "$dev" 2>/dev/null | grep -E '/lib[^/]*\.so$'); do
    target=$(chroot "$build_root" readlink -f "$so")
    pkg=$(chroot "$build_root" dpkg -S "$target" 2>/dev/null | cut -d: -f1)
    if [ -n "$pkg" ] && ! grep -qx "$pkg" <(echo "$listed"); then
      echo "image-check: note: $dev offers ${target##*/} ($pkg), not in runtime-packages.txt"
    fi
  done
done < <(sed -n '/^packages=(/,/^)/p' "$repo/scripts/bootstrap.sh" | tr -s ' ' '\n' |
          grep -E '^lib.*-dev$' | grep -v -x -e libgtest-dev -e libgmock-dev -e libbenchmark-dev)
echo "image-check: OK (commit $commit, ${targets[*]})"
