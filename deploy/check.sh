#!/usr/bin/env bash
# Checks everything under deploy/ without a cluster: `helm lint --strict` and `helm template` of the
# chart in its three installation shapes (sidecar, standalone, plugin), offline checks of the
# manifests and the rendered chart (lint_manifests.py: hardening, probes, scheduler config rules),
# and the Grafana dashboard.
# helm is built once from the Go module proxy and cached under ${XDG_CACHE_HOME:-$HOME/.cache}/fleetsched/.
#
#   deploy/check.sh                        offline checks (CI)
#   deploy/check.sh --render-dir DIR       also keep the rendered chart: DIR/chart-sidecar.yaml,
#                                          DIR/chart-standalone.yaml, DIR/chart-plugin.yaml
#   deploy/check.sh --server-dry-run       also `kubectl apply --dry-run=server` deploy/kubernetes/*.yaml
#                                          and the three rendered shapes against kubectl's current context
#   deploy/check.sh -f my-values.yaml      also lint, render and check the chart with these values
#                                          (repeatable, as with helm; DIR/chart-values.yaml)
#   deploy/check.sh --print-helm           build helm if needed and print its path
#
# When a kube-scheduler binary is at hand (KUBE_SCHEDULER, or the one tests/e2e/build-components.sh
# caches), every embedded KubeSchedulerConfiguration is also loaded and validated by it
# (--write-config-to: it parses strictly, validates, builds the profiles and exits; nothing connects).
# Those of the plugin shape are loaded by fleetsched-scheduler (FLEETSCHED_SCHEDULER_BIN, or
# build/scheduler/fleetsched-scheduler), which must not log that it disables signatures.
#
# Environment: HELM (use this helm binary), FLEETSCHED_HELM_VERSION (default v3.22.0),
# FLEETSCHED_KUBE_VERSION (Kubernetes version to render and lint for; default 1.36.3),
# KUBECTL (default kubectl), FLEETSCHED_NAMESPACE (release namespace; default kube-system).
set -euo pipefail

deploy=$(cd "$(dirname "$0")" && pwd)
helm_version=${FLEETSCHED_HELM_VERSION:-v3.22.0}
kube_version=${FLEETSCHED_KUBE_VERSION:-1.36.3}
namespace=${FLEETSCHED_NAMESPACE:-kube-system}
kubectl=${KUBECTL:-kubectl}
render_dir=""
server_dry_run=0
print_helm=0
values=()

while [ $# -gt 0 ]; do
  case $1 in
    --render-dir) render_dir=$2; shift 2 ;;
    --server-dry-run) server_dry_run=1; shift ;;
    --print-helm) print_helm=1; shift ;;
    -f|--values) values+=(-f "$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"); shift 2 ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    *) echo "check.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

# helm from the Go module proxy: `go install pkg@version` ignores the repository's Makefile, so the
# ldflags it would set (version, default Kubernetes version) are given here.
buildHelm() {
  local dir=${XDG_CACHE_HOME:-$HOME/.cache}/fleetsched/helm/$helm_version
  if [ ! -x "$dir/helm" ]; then
    . "$deploy/../scripts/go-env.sh"
    fleetsched_go_env || { echo "check.sh: needs Go (1.26) to build helm, or set HELM" >&2; exit 1; }
    local major=${kube_version%%.*} minor=${kube_version#*.}
    minor=${minor%%.*}
    echo "check.sh: building helm $helm_version into $dir (a few minutes, once)" >&2
    mkdir -p "$dir"
    GOBIN=$dir CGO_ENABLED=0 GOFLAGS=-trimpath nice -n 15 go install -ldflags "-s -w \
      -X helm.sh/helm/v3/internal/version.version=$helm_version \
      -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=$major \
      -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=$minor \
      -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=$major \
      -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=$minor" \
      "helm.sh/helm/v3/cmd/helm@$helm_version" >&2
  fi
  echo "$dir/helm"
}

helm=${HELM:-$(buildHelm)}
if [ $print_helm = 1 ]; then echo "$helm"; exit 0; fi

out=${render_dir:-$(mktemp -d)}
mkdir -p "$out"
[ -n "$render_dir" ] || trap 'rm -rf "$out"' EXIT
chart=$deploy/helm/fleetsched

# Standalone binds over HTTPS with client certificates (server.tls): the chart refuses it otherwise.
# kube-scheduler loads the extender's tlsConfig files when it builds the extender: point them at a
# throwaway pair openssl makes here.
tls_values=(--set server.tls.enabled=true --set server.tls.secretName=fleetsched-tls)
if command -v openssl >/dev/null; then
  mkdir -p "$out/tls"
  for n in ca client; do
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj "/CN=check-$n" \
      -keyout "$out/tls/$n.key" -out "$out/tls/$n.crt" 2>/dev/null
  done
  tls_values+=(--set "server.tls.scheduler.certFile=$out/tls/client.crt"
    --set "server.tls.scheduler.keyFile=$out/tls/client.key" --set "server.tls.scheduler.caFile=$out/tls/ca.crt"
    --set server.tls.scheduler.serverName=fleetsched.kube-system.svc)
fi
for mode in sidecar standalone plugin; do
  modeValues=(--set mode="$mode")
  [ "$mode" != standalone ] || modeValues+=("${tls_values[@]}")
  echo "check.sh: helm lint --strict ($mode)"
  "$helm" lint --strict "$chart" --kube-version "$kube_version" --namespace "$namespace" \
    "${modeValues[@]}" --set serviceMonitor.enabled=true >/dev/null
  echo "check.sh: helm template ($mode)"
  "$helm" template fleetsched "$chart" --kube-version "$kube_version" --namespace "$namespace" \
    "${modeValues[@]}" >"$out/chart-$mode.yaml"
done
# Standalone binding over plain HTTP is refused, with the way out in the message.
if "$helm" template fleetsched "$chart" --kube-version "$kube_version" --namespace "$namespace" \
  --set mode=standalone >/dev/null 2>"$out/plain-bind.err" || ! grep -q "enable server.tls" "$out/plain-bind.err"; then
  echo "check.sh: the chart must refuse mode=standalone with bind over plain HTTP" >&2
  exit 1
fi
# The optional pieces render too (not dry-run: the ServiceMonitor CRD may be absent).
"$helm" template fleetsched "$chart" --kube-version "$kube_version" --namespace "$namespace" \
  --set serviceMonitor.enabled=true --set mode=standalone --set replicaCount=2 \
  --set server.urlPrefix=/scheduler --set extender.verbs.bind= >"$out/chart-options.yaml"
# The plugin shape with Fleetsched scoring alone ("*": it is enabled again by name) and 3 replicas.
"$helm" template fleetsched "$chart" --kube-version "$kube_version" --namespace "$namespace" \
  --set serviceMonitor.enabled=true --set mode=plugin --set replicaCount=3 \
  --set 'plugin.disabledScorePlugins={*}' >"$out/chart-plugin-options.yaml"
rendered=("$out/chart-sidecar.yaml" "$out/chart-standalone.yaml" "$out/chart-plugin.yaml"
  "$out/chart-options.yaml" "$out/chart-plugin-options.yaml")
if [ ${#values[@]} -gt 0 ]; then
  echo "check.sh: helm lint --strict, helm template (${values[*]})"
  "$helm" lint --strict "$chart" --kube-version "$kube_version" --namespace "$namespace" "${values[@]}" >/dev/null
  "$helm" template fleetsched "$chart" --kube-version "$kube_version" --namespace "$namespace" \
    "${values[@]}" >"$out/chart-values.yaml"
  rendered+=("$out/chart-values.yaml")
fi

if ! python3 -c 'import yaml' 2>/dev/null; then
  echo "check.sh: python3-yaml is missing (apt-get install python3-yaml)" >&2
  exit 1
fi
echo "check.sh: lint_manifests.py"
rm -rf "$out/scheduler-configs"
python3 "$deploy/lint_manifests.py" --write-scheduler-configs "$out/scheduler-configs" \
  --dashboard "$deploy/grafana/fleetsched.json" \
  --metric-sources "$deploy/../engine" --metric-sources "$deploy/../cache" --metric-sources "$deploy/../cmd" \
  "$deploy"/kubernetes/*.yaml "$deploy"/kubernetes/optional/*.yaml \
  "${rendered[@]}"

cache=${FLEETSCHED_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fleetsched}
kube_scheduler=${KUBE_SCHEDULER:-$(ls -1 "$cache"/k8s-v*/bin/kube-scheduler 2>/dev/null | sort -V | tail -n 1)}
if [ -n "$kube_scheduler" ] && [ -x "$kube_scheduler" ]; then
  echo "check.sh: $("$kube_scheduler" --version) loads every KubeSchedulerConfiguration"
  for f in "$out"/scheduler-configs/*.yaml; do
    # deploy/kubernetes/standalone.yaml's extender tlsConfig names files on kube-scheduler's host:
    # the throwaway pair above stands in for them.
    [ ! -d "$out/tls" ] || sed -i "s#/etc/kubernetes/fleetsched/#$out/tls/#" "$f"
    if ! timeout 60 "$kube_scheduler" --config="$f" --master=http://127.0.0.1:1 \
        --write-config-to="${f%.yaml}.effective" >"${f%.yaml}.log" 2>&1; then
      echo "check.sh: kube-scheduler rejects ${f##*/}:" >&2
      grep -E '^E|error' "${f%.yaml}.log" >&2 || tail -n 5 "${f%.yaml}.log" >&2
      exit 1
    fi
  done
else
  echo "check.sh: no kube-scheduler binary (KUBE_SCHEDULER; tests/e2e/build-components.sh builds one):" \
    "skipping its config validation"
fi

# The plugin shape's configs: only fleetsched-scheduler knows the Fleetsched plugin. Building the
# profiles also decides kube-scheduler's signatures (opportunistic batching); it logs when it turns
# them off (an extender, or a plugin that cannot sign pods).
plugin_scheduler=${FLEETSCHED_SCHEDULER_BIN:-$deploy/../build/scheduler/fleetsched-scheduler}
if [ -x "$plugin_scheduler" ]; then
  echo "check.sh: fleetsched-scheduler $("$plugin_scheduler" --version) loads the plugin shape's configs"
  for f in "$out"/scheduler-configs/plugin/*.yaml; do
    [ -e "$f" ] || continue
    if ! timeout 60 "$plugin_scheduler" --config="$f" --master=http://127.0.0.1:1 \
        --write-config-to="${f%.yaml}.effective" >"${f%.yaml}.log" 2>&1; then
      echo "check.sh: fleetsched-scheduler rejects plugin/${f##*/}:" >&2
      grep -E '^E|error' "${f%.yaml}.log" >&2 || tail -n 5 "${f%.yaml}.log" >&2
      exit 1
    fi
    if grep -q 'Disabling signatures' "${f%.yaml}.log"; then
      echo "check.sh: fleetsched-scheduler turns signatures off with plugin/${f##*/}:" >&2
      grep 'Disabling signatures' "${f%.yaml}.log" >&2
      exit 1
    fi
  done
else
  echo "check.sh: no fleetsched-scheduler (FLEETSCHED_SCHEDULER_BIN; scripts/build-scheduler.sh builds" \
    "one): skipping the plugin shape's config validation"
fi

if [ $server_dry_run = 1 ]; then
  for f in "$deploy"/kubernetes/*.yaml "$out/chart-sidecar.yaml" "$out/chart-standalone.yaml" \
      "$out/chart-plugin.yaml"; do
    echo "check.sh: kubectl apply --dry-run=server -f ${f#"$deploy/"}"
    "$kubectl" apply --dry-run=server -f "$f" >/dev/null
  done
fi
echo "check.sh: OK"
