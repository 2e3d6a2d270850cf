#!/usr/bin/env bash
# Proves the README's quick start on a bare Debian 12: builds a minimal bookworm root with
# debootstrap (Debian's packages only, plus git, which whoever cloned the repository has), copies a
# clean clone of the committed HEAD in, and runs exactly the README's two commands inside it:
#   1. ./scripts/demo.sh in the background; waits for /readyz, sends the README's filter example
#      (read from README.md) and compares the reply with the README's, as JSON;
#   2. ./scripts/test.sh, in full.
# Prints, and writes to WORKDIR/result.txt, how long each took and the disk the root grew to: the
# numbers the README quotes. Long (a cold test.sh builds everything, Kubernetes included) and
# not part of the default test run.
#
#   sudo scripts/check-fresh.sh [--root-only] [--skip-test] [WORKDIR]
#       WORKDIR      default /tmp/fleetsched-check-fresh; its root is rebuilt from scratch each run
#       --root-only  stop after building the Debian root (checks debootstrap and the mirror)
#       --skip-test  stop after the demo
#
# Needs root (debootstrap, chroot, mounts), debootstrap and git on the host, a Debian mirror
# (debootstrap's default, or FLEETSCHED_DEBIAN_MIRROR) and the Go module proxy. The chroot shares
# the host's network (and its local CAs, see below): port 8888 must be free.
set -euo pipefail

rootOnly=0
skipTest=0
work=/tmp/fleetsched-check-fresh
while [ $# -gt 0 ]; do
  case $1 in
    --root-only) rootOnly=1 ;;
    --skip-test) skipTest=1 ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "check-fresh: unknown flag $1" >&2; exit 2 ;;
    *) work=$1 ;;
  esac
  shift
done

repo=$(cd "$(dirname "$0")/.." && pwd)
mirror=${FLEETSCHED_DEBIAN_MIRROR:-}  # empty: debootstrap's default mirror
release=bookworm
root=$work/root
src=/root/fleetsched  # the clone, inside the root
port=8888

say() { printf 'check-fresh: %s\n' "$*" >&2; }
die() { say "FAIL: $*"; exit 1; }
minutes() { awk -v s="$1" 'BEGIN { printf "%.1f", s / 60 }'; }

[ "$(id -u)" -eq 0 ] || die "needs root (debootstrap, chroot, mounts)"
command -v debootstrap >/dev/null || die "needs debootstrap (apt-get install debootstrap)"
command -v git >/dev/null || die "needs git"
command -v curl >/dev/null || die "needs curl"
command -v python3 >/dev/null || die "needs python3 (to compare the demo's reply with the README's)"

mounted=()
demoPid=""
cleanup() {
  if [ -n "$demoPid" ]; then kill -TERM -- "-$demoPid" 2>/dev/null || true; wait "$demoPid" 2>/dev/null || true; fi
  local i
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount "${mounted[i]}" 2>/dev/null || umount -l "${mounted[i]}" || true; done
}
trap cleanup EXIT

mountIn() { # mountIn TARGET MOUNT-ARGS...
  local target=$1; shift
  mkdir -p "$target"
  mountpoint -q "$target" || { mount "$@" "$target"; mounted+=("$target"); }
}

# inRoot COMMAND: runs COMMAND with bash in the root, in the clone, with a clean environment.
inRoot() {
  chroot "$root" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    HOME=/root LANG=C.UTF-8 TERM=dumb bash -c "cd $src && $1"
}

# --- a bare Debian 12 root ------------------------------------------------------------------------
mkdir -p "$work"
if [ -d "$root" ]; then
  for m in dev/pts dev sys proc; do mountpoint -q "$root/$m" && umount -l "$root/$m"; done
  rm -rf --one-file-system "$root"
fi
say "debootstrap $release (minbase + git) into $root"
start=$SECONDS
debootstrap --variant=minbase --include=git "$release" "$root" ${mirror:+"$mirror"} \
  >"$work/debootstrap.log" 2>&1 || die "debootstrap failed; see $work/debootstrap.log"
rootSecs=$((SECONDS - start))
say "root ready in ${rootSecs} s, $(du -sh --one-file-system "$root" | cut -f1)"
[ "$rootOnly" -eq 1 ] && { echo "root: ${rootSecs} s" >"$work/result.txt"; exit 0; }

cp /etc/resolv.conf "$root/etc/resolv.conf"
# The host's own CAs (none on a plain Debian): on a network that intercepts TLS the root must trust
# what the host trusts, or the Go module proxy is unreachable. ca-certificates, which bootstrap.sh
# installs in the root, adds them to the root's bundle.
if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
  mkdir -p "$root/usr/local/share/ca-certificates"
  cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
  say "copied the host's local CAs ($(ls /usr/local/share/ca-certificates/*.crt | wc -l)) into the root"
fi
mountIn "$root/proc" -t proc proc
mountIn "$root/sys" -t sysfs sys
mountIn "$root/dev" --bind /dev
mountIn "$root/dev/pts" --bind /dev/pts

# --- a clean clone of HEAD ------------------------------------------------------------------------
commit=$(git -C "$repo" rev-parse HEAD)
git clone --quiet --no-checkout "$(git -C "$repo" rev-parse --path-format=absolute --git-common-dir)" "$root$src"
git -C "$root$src" checkout --quiet "$commit"
say "clone of $commit in $src"

# --- the README's first command: ./scripts/demo.sh --------------------------------------------------
if curl -s -o /dev/null "http://127.0.0.1:$port/readyz"; then die "port $port is already in use on this host"; fi
say "./scripts/demo.sh (bootstraps and builds first)"
start=$SECONDS
setsid bash -c "$(declare -f inRoot); root='$root' src='$src' inRoot ./scripts/demo.sh" >"$work/demo.log" 2>&1 &
demoPid=$!
ready=0
for ((i = 0; i < 3600; i += 5)); do
  kill -0 "$demoPid" 2>/dev/null || break
  if curl -sf -o /dev/null "http://127.0.0.1:$port/readyz"; then
    ready=1
    break
  fi
  sleep 5
done
[ "$ready" -eq 1 ] || die "demo.sh never became ready; see $work/demo.log"
demoSecs=$((SECONDS - start))
say "demo ready in $(minutes "$demoSecs") min"

# The request and the reply exactly as README.md shows them.
python3 - "$root$src/README.md" "$work" <<'PY'
import json, re, sys
readme, work = open(sys.argv[1]).read(), sys.argv[2]
m = re.search(r"curl -s -XPOST localhost:8888/filter -d '(.*?)'", readme, re.S)
r = re.search(r"The reply keeps the A100 node and explains the rest:\n\n(.*?)\n\n", readme, re.S)
if not m or not r:
    sys.exit("check-fresh: cannot find the filter example and its reply in README.md")
open(f"{work}/filter-request.json", "w").write(m.group(1))
json.dump(json.loads(r.group(1)), open(f"{work}/filter-expected.json", "w"), sort_keys=True)
PY
curl -s -XPOST "localhost:$port/filter" -d @"$work/filter-request.json" >"$work/filter-reply.json" ||
  die "the filter request failed"
python3 - "$work" <<'PY' || die "the demo's filter reply differs from the README's (see $work/filter-*.json)"
import json, sys
work = sys.argv[1]
got = json.load(open(f"{work}/filter-reply.json"))
want = json.load(open(f"{work}/filter-expected.json"))
if got != want:
    print("got:  " + json.dumps(got, sort_keys=True), file=sys.stderr)
    print("want: " + json.dumps(want, sort_keys=True), file=sys.stderr)
    sys.exit(1)
PY
say "demo: the filter reply matches the README"
kill -TERM -- "-$demoPid" 2>/dev/null || true
wait "$demoPid" 2>/dev/null || true
demoPid=""

result="demo ready in $(minutes "$demoSecs") min cold (bootstrap and build included), reply as in the README"
if [ "$skipTest" -eq 0 ]; then
  # --- the README's second command: ./scripts/test.sh ---------------------------------------------
  say "./scripts/test.sh (log: $work/test.log)"
  start=$SECONDS
  inRoot ./scripts/test.sh >"$work/test.log" 2>&1 || die "test.sh failed after $(minutes $((SECONDS - start))) min; see $work/test.log"
  testSecs=$((SECONDS - start))
  result="$result; test.sh passed in $(minutes "$testSecs") min"
fi
disk=$(du -s --block-size=1M --one-file-system "$root" | cut -f1)
result="checked on a bare Debian 12 ($commit, $(nproc) cores): $result; disk $(awk -v m="$disk" 'BEGIN { printf "%.1f", m / 1024 }') GB"
echo "$result" | tee "$work/result.txt"
