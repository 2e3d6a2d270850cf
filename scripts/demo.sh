#!/usr/bin/env bash
# Builds fleetsched (release) and starts the extender on 127.0.0.1:8888 with the default profile
# and the embedded demo GPU fleet, with /debug/* on (README's "Try it" uses /debug/nodes and
# /debug/pods). Extra arguments go to `fleetsched serve`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
[ -f build/build.ninja ] || meson setup build --buildtype=release >/dev/null
ninja -C build cmd/fleetsched/fleetsched >/dev/null
exec build/cmd/fleetsched/fleetsched serve --enable-debug-handlers "$@"
