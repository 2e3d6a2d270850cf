#!/usr/bin/env bash
# Scale run (not part of the default test run): N fake nodes, M pods, four
# configurations each on a fresh control plane (kube-scheduler alone,
# fleetsched as extender, fleetsched-scheduler with the in-process plugin, the
# Go seed extender in full-Nodes mode). Prints a table and writes JSON (--json,
# default scale-results.json). See README.md.
#
#   tests/e2e/scale.sh --nodes 1000 --pods 10000
#   tests/e2e/scale.sh --nodes 5000 --pods 10000 --configs none,fleetsched,go-seed
#
# Environment: FLEETSCHED_BIN (skip the meson build), FLEETSCHED_SCHEDULER_BIN
# (skip building fleetsched-scheduler), FLEETSCHED_GO_SEED and
# FLEETSCHED_GO_NODENAMES (skip the peer build), FLEETSCHED_CACHE (component
# cache root).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD

# Go >= 1.26 first on PATH (scripts/go-env.sh).
. scripts/go-env.sh
fleetsched_go_env

eval "$(tests/e2e/build-components.sh)"
export FLEETSCHED_E2E_K8S_BIN FLEETSCHED_E2E_ETCD_BIN

if [[ -z ${FLEETSCHED_BIN:-} ]]; then
  scripts/bootstrap.sh
  [[ -f build/build.ninja ]] || nice -n 10 meson setup build --buildtype=release >/dev/null
  nice -n 10 ninja -C build cmd/fleetsched/fleetsched >/dev/null
  export FLEETSCHED_BIN="$root/build/cmd/fleetsched/fleetsched"
fi
if [[ -z ${FLEETSCHED_SCHEDULER_BIN:-} ]]; then
  [[ -f build/build.ninja ]] || nice -n 10 meson setup build --buildtype=release >/dev/null
  nice -n 10 scripts/build-scheduler.sh build >/dev/null
  export FLEETSCHED_SCHEDULER_BIN="$root/build/scheduler/fleetsched-scheduler"
fi
if [[ -z ${FLEETSCHED_GO_SEED:-} || -z ${FLEETSCHED_GO_NODENAMES:-} ]]; then
  [[ -x build/peers/go-seed-extender && -x build/peers/go-nodenames-extender ]] ||
    nice -n 10 bench/peers/build.sh "$root/build/peers"
  export FLEETSCHED_GO_SEED="${FLEETSCHED_GO_SEED:-$root/build/peers/go-seed-extender}"
  export FLEETSCHED_GO_NODENAMES="${FLEETSCHED_GO_NODENAMES:-$root/build/peers/go-nodenames-extender}"
fi

exec python3 tests/e2e/scale.py "$@"
