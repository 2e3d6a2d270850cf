#!/usr/bin/env bash
# Builds fleetsched-scheduler: kube-scheduler with the Fleetsched plugin (scheduler/), linked
# against the C++ engine archive (capi/) of a meson build folder.
#
# Usage: scripts/build-scheduler.sh [BUILD_DIR]   (default: build)
# Output: BUILD_DIR/scheduler/fleetsched-scheduler. Go's build cache makes a rebuild after a
# C++-only or plugin-only change a link step (~20 s here); the first build on a machine whose
# cache already holds kube-scheduler's packages (tests/e2e/build-components.sh) takes ~3 min.
# Environment: GO_PARALLEL (go build -p, default 2).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
build=${1:-build}
[[ $build = /* ]] || build="$root/$build"

. scripts/go-env.sh
fleetsched_go_env
. scripts/k8s-ldflags.sh

# One Kubernetes release for the e2e suite and the plugin: the scheduler module pins the same one.
e2ePin=$(fleetsched_k8s_pin tests/e2e/components/k8s/go.mod)
ourPin=$(fleetsched_k8s_pin scheduler/go.mod)
if [[ -z $ourPin || $ourPin != "$e2ePin" ]]; then
  echo "build-scheduler: scheduler/go.mod pins k8s.io/kubernetes ${ourPin:-nothing}," \
    "the e2e suite (tests/e2e/components/k8s/go.mod) $e2ePin: make them equal" >&2
  exit 2
fi

[[ -f $build/build.ninja ]] || meson setup "$build" --buildtype=release >/dev/null
ninja -C "$build" capi/libfleetsched_capi.a >/dev/null

mkdir -p "$build/scheduler"
out="$build/scheduler/fleetsched-scheduler"
start=$SECONDS
(cd scheduler && GOTOOLCHAIN=local CGO_ENABLED=1 CGO_LDFLAGS="-L$build/capi" \
  go build -p "${GO_PARALLEL:-2}" -mod=readonly -trimpath -ldflags "$(fleetsched_k8s_ldflags "$ourPin")" \
  -o "$out.tmp" .)
mv -f "$out.tmp" "$out"
echo "build-scheduler: $out ($ourPin) in $((SECONDS - start)) s" >&2
