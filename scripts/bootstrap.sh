#!/usr/bin/env bash
# Installs what fleetsched's build and tests need on Debian 12, from the package registries by
# their ordinary clients, and nothing else:
#   - Debian packages (apt-get): the compilers and libraries, python3-pytest (the end-to-end
#     suite), python3-matplotlib (replay's plot), clang-14 and libclang-rt-14-dev (libFuzzer,
#     for scripts/fuzz.sh);
#   - a Go >= 1.26 toolchain (the Kubernetes components, helm and the Go peers are built with it):
#     the one on PATH or in /usr/local/go when it is new enough; otherwise Go's own toolchain
#     switch fetches it from the Go module proxy into the per-user module cache, run by Debian's
#     golang-go from bookworm-backports (Go >= 1.21; bookworm's own is 1.19). See scripts/go-env.sh.
# Safe to run again: it calls apt-get only when something is missing, and the Go toolchain is
# fetched once.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential pkg-config cmake meson ninja-build ccache
  libuv1-dev libsimdjson-dev libmimalloc-dev libyaml-cpp-dev libcli11-dev
  libcurl4-openssl-dev libssl-dev node-llhttp
  libgtest-dev libgmock-dev libbenchmark-dev clang-14 libclang-rt-14-dev
  curl ca-certificates openssl python3 python3-yaml python3-pytest python3-matplotlib
)

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

missing=()
for p in "${packages[@]}"; do
  installed "$p" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "bootstrap: installing ${missing[*]}" >&2
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# --- Go >= 1.26 ----------------------------------------------------------------------------------
# shellcheck source=scripts/go-env.sh
. scripts/go-env.sh
go_ok() { fleetsched_go_at_least "$1" 26; }
if go_ok "$(command -v go 2>/dev/null || echo go)" || go_ok /usr/local/go/bin/go; then
  exit 0
fi
if ! fleetsched_go_switcher >/dev/null; then
  # Debian 12's golang-go is 1.19, too old to switch toolchains; bookworm-backports has a newer one.
  . /etc/os-release
  codename=${VERSION_CODENAME:-bookworm}
  list=/etc/apt/sources.list.d/$codename-backports.list
  if ! grep -rqs "^[^#]*$codename-backports" /etc/apt/sources.list /etc/apt/sources.list.d/; then
    echo "bootstrap: adding $codename-backports to apt's sources ($list)" >&2
    echo "deb http://deb.debian.org/debian $codename-backports main" | $sudo tee "$list" >/dev/null
  fi
  echo "bootstrap: installing golang-go from $codename-backports" >&2
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends -t "$codename-backports" golang-go >/dev/null
fi
echo "bootstrap: Go $FLEETSCHED_GO_TOOLCHAIN through GOTOOLCHAIN (from the Go module proxy the first time)" >&2
fleetsched_go_env
echo "bootstrap: $(go version) at $(command -v go)" >&2
