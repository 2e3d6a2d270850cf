#!/usr/bin/env bash
# CI entry point of the end-to-end suite: builds the control-plane components
# (cached per machine, see build-components.sh), builds fleetsched, starts etcd,
# kube-apiserver, fleetsched and kube-scheduler on loopback and runs the
# scenarios. Exits non-zero on any failure; pytest prints the summary line.
#
# Extra arguments go to pytest (e.g. -k spot, -x). Environment:
#   FLEETSCHED_BIN          use this fleetsched binary instead of building build/
#   FLEETSCHED_SCHEDULER_BIN use this fleetsched-scheduler instead of building it
#   FLEETSCHED_E2E_EXTENDER stub = run against the accept-everything stand-in
#   FLEETSCHED_CACHE        component cache root (default ~/.cache/fleetsched)
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD

# Go >= 1.26 first on PATH (scripts/go-env.sh).
. scripts/go-env.sh
fleetsched_go_env

start=$SECONDS
envLines=$(tests/e2e/build-components.sh)  # a failed build stops here (set -e)
eval "$envLines"
export FLEETSCHED_E2E_K8S_BIN FLEETSCHED_E2E_ETCD_BIN
echo "e2e: components ready in $((SECONDS - start)) s (k8s $FLEETSCHED_E2E_K8S_VERSION, etcd $FLEETSCHED_E2E_ETCD_VERSION)" >&2

if [[ ${FLEETSCHED_E2E_EXTENDER:-fleetsched} == fleetsched && -z ${FLEETSCHED_BIN:-} ]]; then
  scripts/bootstrap.sh
  [[ -f build/build.ninja ]] || nice -n 10 meson setup build --buildtype=release >/dev/null
  nice -n 10 ninja -C build cmd/fleetsched/fleetsched >/dev/null
  export FLEETSCHED_BIN="$root/build/cmd/fleetsched/fleetsched"
fi
# The plugin deployment (FLEETSCHED_E2E_SOURCE=plugin, or every run by default):
# fleetsched-scheduler, kube-scheduler with the engine compiled in.
if [[ ${FLEETSCHED_E2E_EXTENDER:-fleetsched} == fleetsched && -z ${FLEETSCHED_SCHEDULER_BIN:-} &&
      ${FLEETSCHED_E2E_SOURCE:-plugin} == plugin ]]; then
  nice -n 10 scripts/build-scheduler.sh build
  export FLEETSCHED_SCHEDULER_BIN="$root/build/scheduler/fleetsched-scheduler"
fi

# pytest comes from Debian (python3-pytest, which scripts/bootstrap.sh installs); nothing is
# installed here at run time. The python3 on PATH may be another installation (pyenv, a venv)
# without it; Debian's own is the fallback.
python=""
for py in python3 /usr/bin/python3; do
  if "$py" -c 'import pytest, yaml' 2>/dev/null; then python=$py; break; fi
done
if [[ -z $python ]]; then
  echo "e2e: pytest is missing for $(command -v python3): install the Debian packages python3-pytest" \
    "and python3-yaml (scripts/bootstrap.sh does)" >&2
  exit 1
fi
exec "$python" -m pytest tests/e2e -p no:cacheprovider "$@"
