#!/usr/bin/env bash
# Installs every Debian 12 package fleetsched's build and tests need. Safe to run again: it only
# calls apt-get when something is missing.
set -euo pipefail

packages=(
  build-essential pkg-config cmake meson ninja-build ccache
  libuv1-dev libsimdjson-dev libmimalloc-dev libyaml-cpp-dev libcli11-dev
  libcurl4-openssl-dev libssl-dev node-llhttp
  libgtest-dev libgmock-dev libbenchmark-dev
  curl ca-certificates openssl python3 python3-yaml
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "bootstrap: installing ${missing[*]}" >&2
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
