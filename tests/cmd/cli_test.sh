#!/usr/bin/env bash
# Pins fleetsched's command-line contract, the one `fleetsched --help` documents:
#   help:     `fleetsched --help` and `fleetsched help` list the subcommands; `help CMD` shows
#             CMD's help; every subcommand's help has examples;
#   version:  `fleetsched --version`, `fleetsched version`, `fleetsched version -o json`;
#   exit:     0 success, 1 runtime failure, 2 usage error (unknown flag or subcommand included).
# Usage: cli_test.sh PATH-TO-fleetsched
set -uo pipefail
bin=${1:?usage: cli_test.sh PATH-TO-fleetsched}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
subcommands=(serve replay gen-fleet loadgen null-extender version help)

fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

# run WANT_RC ARGS...: runs the binary, keeps stdout/stderr in $out/$err, checks the exit code.
run() {
  local want=$1; shift
  "$bin" "$@" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  out=$(cat "$tmp/out"); err=$(cat "$tmp/err")
  [ "$rc" -eq "$want" ] || fail "fleetsched $* exited $rc, want $want (stderr: ${err:0:300})"
}
has() {  # has TEXT NEEDLE WHAT
  case "$1" in *"$2"*) ;; *) fail "$3: missing '$2'" ;; esac
}
lacks() {  # lacks TEXT NEEDLE WHAT
  case "$1" in *"$2"*) fail "$3: should not show '$2'" ;; esac
}

# --- help ---------------------------------------------------------------------------------------
for args in "--help" "help" "-h"; do
  # shellcheck disable=SC2086
  run 0 $args
  for s in "${subcommands[@]}"; do has "$out" "$s" "fleetsched $args lists subcommands"; done
  has "$out" "Exit status" "fleetsched $args documents exit codes"
done
run 0 help serve
has "$out" "--listen" "fleetsched help serve"
run 2 help bogus
has "$err" "bogus" "fleetsched help bogus names the bad subcommand"

for s in serve replay gen-fleet loadgen null-extender version; do
  run 0 "$s" --help
  has "$out" "Examples:" "fleetsched $s --help"
  has "$out" "fleetsched $s" "fleetsched $s --help examples"
done

run 0 loadgen --help
has "$out" "nodenames|full" "loadgen --mode"
lacks "$out" "ENUM" "loadgen --help"
has "$out" "--connections INT=1" "loadgen shows defaults"
run 0 replay --help
lacks "$out" "{false}" "replay --help"
lacks "$out" "{true}" "replay --help"
has "$out" "--no-shuffle" "replay --help"
run 0 gen-fleet --help
has "$out" "--nodes UINT=1000" "gen-fleet shows defaults"
run 0 serve --help
has "$out" "--listen TEXT=" "serve shows defaults"

# --- version ------------------------------------------------------------------------------------
run 0 --version
has "$out" "fleetsched" "fleetsched --version"
version_line=$out
run 0 version
has "$out" "$version_line" "fleetsched version matches --version"
run 0 version -o json
json=$out
if command -v python3 >/dev/null; then
  printf '%s' "$json" | python3 -c '
import json, sys
v = json.load(sys.stdin)
for key in ("version", "gitCommit", "buildDate", "compiler", "libraries"):
    assert key in v, key
assert v["version"], v
for lib in ("libuv", "simdjson", "yaml-cpp", "CLI11"):
    assert lib in v["libraries"], lib
' || fail "fleetsched version -o json: not the expected JSON: $json"
else
  has "$json" '"gitCommit"' "fleetsched version -o json"
fi
run 2 version -o xml
run 0 version -o yaml
has "$out" "gitCommit:" "fleetsched version -o yaml"

# --- usage errors: exit 2, subcommands listed for an unknown one --------------------------------
run 2
has "$err" "serve" "fleetsched without a command lists the commands"
run 2 bogus
has "$err" "bogus" "fleetsched bogus names it"
for s in serve replay gen-fleet loadgen; do has "$err" "$s" "fleetsched bogus lists subcommands"; done
run 2 --bogus
run 2 serve --bogus
run 2 serve --logging-format xml
has "$err" "--logging-format: xml not in {text,json}" "serve names the logging formats"
run 2 serve -v=-1
run 2 serve --v=x
run 2 serve --listen 127.0.0.1:1 --max-body-bytes 2000 --max-buffered-bytes 1000
has "$err" "--max-buffered-bytes" "a budget below the body limit is refused"
# Leader election: Go durations, validated alone and together (lease > renew > 1.2 x retry).
for d in 1.5ms 15 15x -1s 0s s 1..5s; do
  run 2 serve --leader-elect --leader-elect-lease-duration "$d"
  has "$err" "want a duration" "serve --leader-elect-lease-duration $d is refused"
done
for d in 15s 1.1s 0.013s 1m30s 500ms 2h; do
  run 2 serve --leader-elect --leader-elect-retry-period "$d"   # parsed; refused for want of --bind
  has "$err" "--leader-elect needs --bind" "serve --leader-elect-retry-period $d is parsed"
done
run 2 serve --kubeconfig "$tmp/none" --bind --leader-elect --leader-elect-renew-deadline 20s
has "$err" "must be greater than --leader-elect-renew-deadline" "a renew deadline past the lease is refused"
run 2 serve --kubeconfig "$tmp/none" --bind --leader-elect --leader-elect-retry-period 9s
has "$err" "1.2 × --leader-elect-retry-period" "a retry period too close to the renew deadline is refused"
run 2 serve --kubeconfig "$tmp/none" --bind --leader-elect --leader-elect-resource-name 'a/b?c'
has "$err" "--leader-elect-resource-name" "a Lease name that is not a DNS-1123 subdomain is refused"
run 2 loadgen --mode sideways
run 2 gen-fleet --zones 9
run 2 gen-fleet --nodes notanumber
run 2 null-extender --filter-reply "$tmp/missing-reply.json"
run 2 null-extender 127.0.0.1

# --- runtime failure: exit 1 --------------------------------------------------------------------
run 1 serve --listen 127.0.0.1:1 --nodes "$tmp/missing-nodes.json"
# Logs are klog lines by default, JSON objects with --logging-format=json; -v takes kube's spellings.
[[ "$err" =~ ^E[0-9]{4}\ [0-9:.]{15}\ +[0-9]+\ serve\.cpp:[0-9]+\]\ \" ]] || fail "serve's error is not a klog line: $err"
has "$err" "missing-nodes.json" "serve's klog error names the file"
for v in -v=4 --v=4 "-v 4" -v4; do
  # shellcheck disable=SC2086  # "-v 4" is two arguments
  run 1 serve --logging-format=json $v --listen 127.0.0.1:1 --nodes "$tmp/missing-nodes.json"
  [[ "$err" =~ ^\{\"ts\":[0-9]+\.[0-9]{6},\"caller\":\"serve\.cpp:[0-9]+\",\"msg\":\" ]] ||
    fail "serve --logging-format=json $v: not a JSON line: $err"
done
# HTTPS flags: refused at start-up, before listening, with the reason.
run 1 serve --listen 127.0.0.1:0 --tls-cert-file "$tmp/missing.crt"
has "$err" "--tls-cert-file and --tls-private-key-file go together" "serve with a certificate and no key"
run 1 serve --listen 127.0.0.1:0 --client-ca-file "$tmp/missing-ca.crt"
has "$err" "--client-ca-file needs --tls-cert-file" "serve with a client CA and no certificate"
run 1 serve --listen 127.0.0.1:0 --tls-cert-file "$tmp/missing.crt" --tls-private-key-file "$tmp/missing.key"
has "$err" "missing.crt: cannot read" "serve with an unreadable certificate"
if command -v openssl >/dev/null; then
  for n in a b; do
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$n" -days 1 \
      -keyout "$tmp/$n.key" -out "$tmp/$n.crt" 2>/dev/null || fail "openssl req"
  done
  run 1 serve --listen 127.0.0.1:0 --tls-cert-file "$tmp/a.crt" --tls-private-key-file "$tmp/b.key"
  has "$err" "b.key does not match certificate file" "serve with a key of another certificate"
  run 1 serve --listen 127.0.0.1:0 --tls-cert-file "$tmp/a.crt" --tls-private-key-file "$tmp/a.key" \
    --client-ca-file "$tmp/a.key"
  has "$err" "a.key: no PEM certificate" "serve with a client CA file holding no certificate"
fi

# --- success ------------------------------------------------------------------------------------
run 0 gen-fleet -q -o "$tmp/corpus" -n 3 -p 2

if [ "$failures" -ne 0 ]; then
  echo "$failures check(s) failed" >&2
  exit 1
fi
echo "all CLI checks passed"
