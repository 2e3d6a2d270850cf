#!/usr/bin/env bash
# Asserts what fleetsched's ServiceAccounts may and may not do in an installed cluster, through
# `kubectl auth can-i` (SubjectAccessReviews; nothing is changed). Run it after applying
# kubernetes/sidecar.yaml, kubernetes/standalone.yaml or the chart.
#
#   deploy/rbac-check.sh sidecar    [NAMESPACE] [SERVICEACCOUNT]   (defaults: kube-system fleetsched-scheduler)
#   deploy/rbac-check.sh standalone [NAMESPACE] [SERVICEACCOUNT]   (defaults: kube-system fleetsched)
#   deploy/rbac-check.sh plugin     [NAMESPACE] [SERVICEACCOUNT]   (defaults: kube-system fleetsched)
#   LEASE=<name> names the leader-election Lease (default fleetsched): kube-scheduler's in the sidecar
#   and plugin shapes, fleetsched's own (serve --leader-elect) in the standalone shape.
# For the chart, the ServiceAccount is the release's full name (`fleetsched` for release fleetsched).
set -euo pipefail

shape=${1:?usage: rbac-check.sh sidecar|standalone|plugin [NAMESPACE] [SERVICEACCOUNT]}
ns=${2:-kube-system}
case $shape in
  sidecar) sa=${3:-fleetsched-scheduler} ;;
  standalone|plugin) sa=${3:-fleetsched} ;;
  *) echo "rbac-check.sh: shape must be sidecar, standalone or plugin" >&2; exit 2 ;;
esac
lease=${LEASE:-fleetsched}
kubectl=${KUBECTL:-kubectl}
as=system:serviceaccount:$ns:$sa
failures=0

expect() { # expect yes|no VERB RESOURCE [kubectl auth can-i flags...]
  local want=$1; shift
  local got
  got=$("$kubectl" auth can-i "$@" --as="$as" 2>/dev/null || true)
  if [ "$got" = "$want" ]; then
    printf 'ok    %-3s %s\n' "$want" "$*"
  else
    printf 'FAIL  want %s, got %s: %s\n' "$want" "${got:-error}" "$*"
    failures=$((failures + 1))
  fi
}

echo "rbac-check: $shape, $as"
# fleetsched itself (every shape; in the plugin shape kube-scheduler's role grants these).
expect yes list nodes
expect yes watch nodes
expect yes watch pods
expect yes create pods --subresource=binding
expect yes create events
# fleetsched never patches: the GPU-index annotations ride on the Binding.
expect no patch pods
# Never: secrets, node writes, creating pods.
expect no get secrets -n "$ns"
expect no update nodes
expect no create pods
if [ "$shape" != standalone ]; then
  # kube-scheduler's built-in roles, its authentication config map and its own Lease.
  expect yes list csinodes.storage.k8s.io
  expect yes list persistentvolumeclaims
  expect yes create tokenreviews.authentication.k8s.io
  expect yes get configmaps/extension-apiserver-authentication -n kube-system
  expect yes update "leases/$lease" -n "$ns"
  expect no update leases/some-other-lease -n "$ns"
else
  # No scheduler in this shape: no preemption (pod deletes) and no scheduler-wide reads. (In the
  # sidecar shape kube-scheduler's own role patches events; fleetsched only creates them.)
  expect no patch events
  expect no patch events.events.k8s.io
  expect no delete pods
  expect no list csinodes.storage.k8s.io
  # serve --leader-elect: read, create and renew its own Lease; nothing else of leases.
  expect yes get "leases/$lease" -n "$ns"
  expect yes update "leases/$lease" -n "$ns"
  expect yes create leases.coordination.k8s.io -n "$ns"
  expect no patch "leases/$lease" -n "$ns"
  expect no update leases/some-other-lease -n "$ns"
fi
[ $failures -eq 0 ] && echo "rbac-check: OK" || { echo "rbac-check: $failures unexpected" >&2; exit 1; }
