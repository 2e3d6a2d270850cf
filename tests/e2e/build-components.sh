#!/usr/bin/env bash
# Builds the control-plane components the end-to-end tests run against
# (kube-apiserver, kube-scheduler, kubectl and etcd) from the Go module proxy,
# at the versions pinned by the wrapper modules in tests/e2e/components/.
#
# Binaries land in a per-machine cache keyed by version so that CI reruns and
# other worktrees reuse them:
#   ${FLEETSCHED_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fleetsched}/k8s-<version>/bin
#   ${FLEETSCHED_CACHE:-...}/etcd-<version>/bin
# A binary that already exists is not rebuilt. GOMODCACHE and GOCACHE stay at
# their defaults so that a rebuild after a version bump is incremental.
#
# Usage: build-components.sh            build what is missing, then print the env
#        build-components.sh --print-env only print the env lines (no build)
# The env lines (FLEETSCHED_E2E_K8S_BIN=..., FLEETSCHED_E2E_ETCD_BIN=...) go to
# stdout; everything else goes to stderr, so `eval "$(build-components.sh)"` works.
#
# Environment: FLEETSCHED_CACHE, E2E_GO_PARALLEL (go build -p, default 2),
# E2E_NICE (niceness of the Go builds, default 15), GO (go binary, default go).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
components="$here/components"
cache=${FLEETSCHED_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fleetsched}
go=${GO:-go}
parallel=${E2E_GO_PARALLEL:-2}
niceness=${E2E_NICE:-15}

# The versions come from the committed wrapper modules, the single source of truth.
moduleVersion() { # moduleVersion GO_MOD MODULE_PATH
  awk -v m="$2" '$1 == m && $2 ~ /^v/ {print $2; exit} $1 == "require" && $2 == m {print $3; exit}' "$1"
}
k8sVersion=$(moduleVersion "$components/k8s/go.mod" k8s.io/kubernetes)
etcdVersion=$(moduleVersion "$components/etcd/go.mod" go.etcd.io/etcd/server/v3)
[[ -n $k8sVersion && -n $etcdVersion ]] || { echo "build-components: cannot read pinned versions" >&2; exit 2; }
k8sBin="$cache/k8s-$k8sVersion/bin"
etcdBin="$cache/etcd-$etcdVersion/bin"

printEnv() {
  echo "FLEETSCHED_E2E_K8S_VERSION=$k8sVersion"
  echo "FLEETSCHED_E2E_ETCD_VERSION=$etcdVersion"
  echo "FLEETSCHED_E2E_K8S_BIN=$k8sBin"
  echo "FLEETSCHED_E2E_ETCD_BIN=$etcdBin"
}
if [[ ${1:-} == --print-env ]]; then printEnv; exit 0; fi

if [[ -z ${GO:-} ]]; then
  # Go >= 1.26 first on PATH (scripts/go-env.sh); GO names another binary instead.
  . "$here/../../scripts/go-env.sh"
  fleetsched_go_env || exit 2
fi
command -v "$go" >/dev/null || { echo "build-components: no Go toolchain ($go) on PATH" >&2; exit 2; }
# Build with the installed Go; never let a go.mod line download another toolchain.
export GOTOOLCHAIN=local CGO_ENABLED=0
goVersion=$("$go" env GOVERSION)
case $goVersion in
  go1.2[6-9]* | go1.[3-9]*) ;;
  *) echo "build-components: need Go >= 1.26, found $goVersion" >&2; exit 2 ;;
esac

mkdir -p "$k8sBin" "$etcdBin"
# Two CI jobs or worktrees building at once would race on the same outputs.
exec 9>"$cache/.build.lock"
flock 9

buildOne() { # buildOne MODULE_DIR OUT_DIR NAME PACKAGE LDFLAGS
  local dir=$1 out=$2 name=$3 pkg=$4 ldflags=$5
  if [[ -x $out/$name ]]; then
    echo "build-components: $name: cached ($out/$name)" >&2
    return
  fi
  echo "build-components: building $name from $pkg ..." >&2
  local start=$SECONDS
  # Write to a temporary name first: an interrupted build must not leave a
  # half-written binary that the cache check would then accept.
  (cd "$dir" && nice -n "$niceness" "$go" build -p "$parallel" -mod=readonly -trimpath \
    -ldflags "$ldflags" -o "$out/.$name.tmp" "$pkg") >&2
  mv -f "$out/.$name.tmp" "$out/$name"
  echo "build-components: $name built in $((SECONDS - start)) s" >&2
}

. "$here/../../scripts/k8s-ldflags.sh"
k8sLdflags=$(fleetsched_k8s_ldflags "$k8sVersion")

total=$SECONDS
# etcd first: it is the smallest, so a broken toolchain shows up early.
buildOne "$components/etcd" "$etcdBin" etcd go.etcd.io/etcd/server/v3 "-s -w"
buildOne "$components/k8s" "$k8sBin" kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver "$k8sLdflags"
buildOne "$components/k8s" "$k8sBin" kube-scheduler k8s.io/kubernetes/cmd/kube-scheduler "$k8sLdflags"
buildOne "$components/k8s" "$k8sBin" kubectl k8s.io/kubernetes/cmd/kubectl "$k8sLdflags"
echo "build-components: done in $((SECONDS - total)) s" >&2
printEnv
