#!/usr/bin/env bash
# Builds the Go peer extenders into OUT (default bench/peers/build, git-ignored).
# Needs Go >= 1.26; modules come from the Go module proxy on first build.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/../../scripts/go-env.sh"
fleetsched_go_env
out="$(mkdir -p "${1:-$here/build}" && cd "${1:-$here/build}" && pwd)"
for peer in go-seed-extender go-nodenames-extender; do
  (cd "$here/$peer" && go build -trimpath -o "$out/$peer" .)
done
echo "peers: built $out/go-seed-extender $out/go-nodenames-extender" >&2
