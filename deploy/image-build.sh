#!/usr/bin/env bash
# Builds deploy/Dockerfile's images with podman on a Debian 12 host, from the committed HEAD:
#   fleetsched             (default target)   fleetsched:TAG
#   fleetsched-scheduler   (--target ...)     fleetsched-scheduler:TAG
#
#   sudo deploy/image-build.sh [--target NAME]... [WORKDIR]   (default: both targets,
#                                                              WORKDIR /tmp/fleetsched-image-build)
#
# - Installs podman, runc and debootstrap with apt-get when they are missing.
# - Base images: uses debian:bookworm and debian:bookworm-slim when the engine has them, else pulls
#   them, else (no registry reachable) makes them: `debootstrap --variant=minbase bookworm` (the
#   official images are minbase systems too), imported as both tags; the -slim one with the official
#   slim image's dpkg excludes (no docs, man pages or locales).
# - The build context is `git archive HEAD` in WORKDIR, not the working tree: uncommitted changes
#   are left out, so that the image is what its revision label names.
# - Build arguments: COMMIT (HEAD), VERSION (meson.build's project version), SOURCE
#   ($FLEETSCHED_IMAGE_SOURCE, else the remote origin's URL, else empty).
# - When the host trusts extra CAs (/usr/local/share/ca-certificates/*.crt: a network that
#   intercepts TLS), the build stages get that folder mounted read-only, or Go's toolchain and module
#   downloads fail with "certificate signed by unknown authority". The runtime stages are then built
#   in a second command without the mount (the build stages come from the layer cache), so the
#   images never trust those CAs.
# - Checks the result: `fleetsched --version` names the commit, and the labels are set.
#
# Environment: FLEETSCHED_IMAGE_TAG (default: VERSION), FLEETSCHED_IMAGE_SOURCE,
# FLEETSCHED_DEBIAN_MIRROR (debootstrap's mirror), FLEETSCHED_OCI_RUNTIME (default runc; crun
# refuses some hosts' cgroup layouts).
# Needs root (rootful podman, debootstrap) and git.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
targets=()
while [ $# -gt 0 ]; do
  case $1 in
    --target)
      case ${2:-} in
        fleetsched|fleetsched-scheduler) targets+=("$2"); shift 2 ;;
        *) echo "image-build: --target fleetsched or fleetsched-scheduler" >&2; exit 2 ;;
      esac ;;
    *) break ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || targets=(fleetsched fleetsched-scheduler)
wants() { [[ " ${targets[*]} " == *" $1 "* ]]; }
work=${1:-/tmp/fleetsched-image-build}
release=bookworm
mirror=${FLEETSCHED_DEBIAN_MIRROR:-}

[ "$(id -u)" -eq 0 ] || { echo "image-build: needs root (podman, debootstrap)" >&2; exit 1; }
missing=()
for p in podman runc debootstrap; do command -v "$p" >/dev/null || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  echo "image-build: installing ${missing[*]}" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# podman's default limits (nofile 1048576, nproc 32768) may exceed the host's hard limits, and then
# every container fails to start ("error setting rlimit ... operation not permitted").
# atMost LIMIT CAP: the hard limit LIMIT, capped at CAP.
atMost() { if [ "$1" = unlimited ] || [ "$1" -gt "$2" ]; then echo "$2"; else echo "$1"; fi; }
nofile=$(atMost "$(ulimit -Hn)" 1048576)
nproc=$(atMost "$(ulimit -Hu)" 4096)
limits=(--ulimit "nofile=$nofile:$nofile" --ulimit "nproc=$nproc:$nproc")
podman=(podman --runtime "${FLEETSCHED_OCI_RUNTIME:-runc}")

mkdir -p "$work"

# --- base images ---------------------------------------------------------------------------------
baseImage() {
  local image=$1 root=$work/rootfs-$release
  "${podman[@]}" image exists "$image" && return 0
  echo "image-build: pulling $image" >&2
  timeout 300 "${podman[@]}" pull -q "$image" >/dev/null 2>"$work/pull.log" && return 0
  echo "image-build: cannot pull $image ($(tail -1 "$work/pull.log")); making it with debootstrap" >&2
  if [ ! -x "$root/usr/bin/apt-get" ]; then
    rm -rf "$root"
    debootstrap --variant=minbase "$release" "$root" ${mirror:+"$mirror"} >"$work/debootstrap.log"
    if [ -z "$mirror" ]; then
      # The official images' sources: the release, its updates and its security updates.
      printf '%s\n' "deb http://deb.debian.org/debian $release main" \
        "deb http://deb.debian.org/debian $release-updates main" \
        "deb http://deb.debian.org/debian-security $release-security main" >"$root/etc/apt/sources.list"
    fi
    rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
  fi
  if [[ $image == *-slim ]]; then
    local slim=$work/rootfs-$release-slim
    rm -rf "$slim"
    cp -a "$root" "$slim"
    # As the official slim image's /etc/dpkg/dpkg.cfg.d/docker: later installs skip these too.
    printf '%s\n' 'path-exclude /usr/share/doc/*' 'path-include /usr/share/doc/*/copyright' \
      'path-exclude /usr/share/man/*' 'path-exclude /usr/share/groff/*' \
      'path-exclude /usr/share/info/*' 'path-exclude /usr/share/lintian/*' \
      'path-exclude /usr/share/linda/*' 'path-exclude /usr/share/locale/*' \
      >"$slim/etc/dpkg/dpkg.cfg.d/docker"
    find "$slim/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
    rm -rf "$slim"/usr/share/{man,groff,info,lintian,linda,locale}/*
    root=$slim
  fi
  tar -C "$root" -c . | "${podman[@]}" import -q - "$image" >/dev/null
  echo "image-build: imported $image from debootstrap $release" >&2
}
baseImage "debian:$release"
baseImage "debian:$release-slim"

# --- context and build arguments -----------------------------------------------------------------
commit=$(git -C "$repo" rev-parse HEAD)
version=$(git -C "$repo" show HEAD:meson.build | sed -n "s/^ *version: *'\([^']*\)'.*/\1/p" | head -1)
source=${FLEETSCHED_IMAGE_SOURCE-$(git -C "$repo" remote get-url origin 2>/dev/null || true)}
source=$(echo "$source" | sed -e 's#^git@\([^:]*\):#https://\1/#' -e 's#://[^/@]*@#://#')
tag=${FLEETSCHED_IMAGE_TAG:-$version}
if [ -n "$(git -C "$repo" status --porcelain --untracked-files=no)" ]; then
  echo "image-build: note: uncommitted changes are not built (the context is HEAD, $commit)" >&2
fi
context=$work/context
rm -rf "$context"
mkdir -p "$context"
git -C "$repo" archive --format=tar HEAD | tar -x -C "$context"
args=(--pull=never "${limits[@]}" -f deploy/Dockerfile --build-arg "DEBIAN_RELEASE=$release"
      --build-arg "VERSION=$version" --build-arg "COMMIT=$commit" --build-arg "SOURCE=$source")
echo "image-build: commit $commit, version $version, source '${source}', tag $tag" >&2

# --- build stages (with the host's extra CAs), then each target ----------------------------------
if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
  stage=build
  wants fleetsched-scheduler && stage=scheduler-build
  echo "image-build: build stages up to $stage, with the host's CAs mounted" >&2
  start=$SECONDS
  (cd "$context" && "${podman[@]}" build "${args[@]}" --target "$stage" \
     -v /usr/local/share/ca-certificates:/usr/local/share/ca-certificates:ro .) >"$work/build-$stage.log" 2>&1 ||
    { tail -30 "$work/build-$stage.log" >&2; exit 1; }
  echo "image-build: $stage in $((SECONDS - start)) s (log: $work/build-$stage.log)" >&2
fi
for target in fleetsched-scheduler fleetsched; do
  wants "$target" || continue
  start=$SECONDS
  # The labels again as --label: buildah (1.28) keys its layer cache on a LABEL's text before the
  # ARGs in it are expanded, so a build differing only in SOURCE would reuse the old label.
  (cd "$context" && "${podman[@]}" build "${args[@]}" --target "$target" -t "$target:$tag" \
     --label "org.opencontainers.image.version=$version" --label "org.opencontainers.image.revision=$commit" \
     --label "org.opencontainers.image.source=$source" .) \
    >"$work/build-$target.log" 2>&1 || { tail -30 "$work/build-$target.log" >&2; exit 1; }
  size=$("${podman[@]}" image inspect --format '{{.Size}}' "$target:$tag")
  echo "image-build: $target:$tag in $((SECONDS - start)) s, $((size / 1000000)) MB (log: $work/build-$target.log)" >&2

  labels=$("${podman[@]}" image inspect --format \
    '{{index .Labels "org.opencontainers.image.revision"}} {{index .Labels "org.opencontainers.image.version"}} {{index .Labels "org.opencontainers.image.source"}}' \
    "$target:$tag")
  [ "$labels" = "$commit $version $source" ] ||
    { echo "image-build: FAIL: $target:$tag labels revision, version, source: $labels" >&2; exit 1; }
  out=$("${podman[@]}" run --rm "${limits[@]}" "$target:$tag" --version)
  echo "$target:$tag --version: $out"
  if [ "$target" = fleetsched ] && [[ $out != *"commit ${commit:0:12}"* ]]; then
    echo "image-build: FAIL: fleetsched --version does not name commit $commit" >&2
    exit 1
  fi
done
echo "image-build: OK (commit $commit, ${targets[*]})"
