#!/usr/bin/env bash
# One command for the live replay (bench/replay/live.py): builds what it needs, then replays the
# default trace's seed-42 experiment through a real kube-scheduler and fleetsched serving
# deploy/profiles/fragmentation-aware.yaml, with the kube-scheduler stanza that profile needs,
# and compares with the replay of the same profile and of the built-in fleet policy.
# About 5 minutes on two cores once the control plane is built (the first run builds
# kube-apiserver, kube-scheduler and etcd from the Go module proxy: ~15 minutes).
#
#   bench/replay/live.sh                       # the fragmentation-aware profile
#   bench/replay/live.sh --seed 43 --out r.json # more arguments go to live.py, overriding these
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/bootstrap.sh
. scripts/go-env.sh
fleetsched_go_env
tests/e2e/build-components.sh >/dev/null
[ -f build/build.ninja ] || meson setup build --buildtype=release >/dev/null
ninja -C build cmd/fleetsched/fleetsched >/dev/null
# The fragmentation-aware setup; later arguments override (argparse keeps the last value).
exec python3 bench/replay/live.py --config deploy/profiles/fragmentation-aware.yaml --policy fleet \
  --gpu-fit ignore --no-scheduler-scores --extender-weight 10 "$@"
