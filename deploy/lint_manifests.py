#!/usr/bin/env python3
"""Offline checks of fleetsched's deployment files: the promises the manifests make to users.

Usage: lint_manifests.py [--dashboard FILE] [--metric-sources DIR]... [--write-scheduler-configs DIR]
                         MANIFEST.yaml ...

Each manifest may hold several documents. Checked without a cluster:
  - every object has apiVersion, kind, metadata.name, and a namespace unless cluster-scoped;
  - fleetsched's ClusterRole, and in the standalone shape its leader-election Role: only the verbs
    its API client sends (CLIENT_REQUESTS); a fleetsched started with --leader-elect needs a Role
    granting every Lease verb it sends;
  - sidecar shape: fleetsched's --listen on loopback (the verbs are for the kube-scheduler beside it);
  - fleetsched with --bind listening off loopback: HTTPS with client certificates (--tls-cert-file,
    --client-ca-file), so only kube-scheduler can make it post Bindings;
  - plugin shape (a fleetsched-scheduler container): kube-scheduler's probes on /healthz and /readyz,
    and no fleetsched container beside it;
  - Deployments: hardened pod and container security contexts, requests and limits on every
    container, fleetsched probes on /healthz and /readyz, and a terminationGracePeriodSeconds above
    fleetsched's preStop sleep plus its --shutdown-grace (kubelet must not kill it mid-drain);
  - KubeSchedulerConfiguration inside ConfigMaps: only known extender keys (a misspelt key such as
    enableHttps is silently ignored by kube-scheduler's lenient paths and by older decoders), the
    extender rules kube-scheduler validates, the settings fleetsched relies on, and the extender port
    matching fleetsched's --listen port;
  - a KubeSchedulerConfiguration that enables the Fleetsched plugin (plugin shape): no extenders
    (one turns kube-scheduler's signatures off), Fleetsched at every extension point and bound before
    DefaultBinder, every default filter kept, the spreading default scores off, its args a valid
    FleetschedConfiguration;
  - schedulers the manifest runs (sidecar, plugin): leader election on, on a Lease of their own;
  - FleetschedConfiguration inside ConfigMaps: shape of profiles and plugins;
  - the Grafana dashboard: valid JSON, unique panel ids, only known fleetsched_ metric names, every
    known metric shown; with --metric-sources, a warning for names the sources do not mention.
With --write-scheduler-configs, each embedded KubeSchedulerConfiguration is also written to DIR (one
file each) so that a real kube-scheduler can load and validate it (check.sh does); those that enable
the Fleetsched plugin go to DIR/plugin/, for fleetsched-scheduler (stock kube-scheduler lacks it).
Exit status 1 on any error.
"""
import argparse
import json
import os
import re
import sys

import yaml

CLUSTER_SCOPED = {"ClusterRole", "ClusterRoleBinding", "Namespace", "PriorityClass"}
EXTENDER_KEYS = {
    "urlPrefix", "filterVerb", "preemptVerb", "prioritizeVerb", "weight", "bindVerb", "enableHTTPS",
    "tlsConfig", "httpTimeout", "nodeCacheCapable", "managedResources", "ignorable",
}
# The names the engine and cache publish (design.md section 6, deploy task brief).
KNOWN_METRICS = {
    "fleetsched_http_requests_total", "fleetsched_http_request_duration_seconds_bucket",
    "fleetsched_http_errors_total", "fleetsched_phase_duration_seconds_bucket",
    "fleetsched_cache_nodes", "fleetsched_cache_pods", "fleetsched_watch_lag_seconds",
    "fleetsched_relists_total", "fleetsched_reservations", "fleetsched_gpu_allocated",
    "fleetsched_gpu_free",
}

# Every request fleetsched's API client sends (engine/ingest/): list+watch of nodes and
# pods, a GET of one pod (a bind of a pod another replica filtered), the bind verb's Binding, the core/v1 Event reporting a failed binding, and with --leader-elect
# the Lease (leader_election.cpp). fleetsched's own
# ClusterRole grants exactly these and nothing more (no patch: GPU-index annotations ride on the
# Binding).
CLIENT_REQUESTS = {
    ("", "nodes"): {"get", "list", "watch"},
    ("", "pods"): {"get", "list", "watch"},
    ("", "pods/binding"): {"create"},
    ("", "events"): {"create"},
    # serve --leader-elect: GET the Lease, POST it when missing, PUT it to renew or take over.
    ("coordination.k8s.io", "leases"): {"get", "create", "update"},
}

# The plugin fleetsched-scheduler registers (scheduler/plugin), and the default score plugins that
# work against its placement: LeastAllocated spreads pods over the emptiest nodes, BalancedAllocation
# evens out CPU and memory; both undo GPU binpacking.
PLUGIN = "Fleetsched"
SPREADING_SCORES = {"NodeResourcesFit", "NodeResourcesBalancedAllocation"}
# The extension points whose default plugins filter: the plugin shape keeps all of them.
FILTER_POINTS = ("multiPoint", "preFilter", "filter")

errors = []


def error(where, message):
    errors.append(f"{where}: {message}")


def checkContainerSecurity(where, container, podSecurity):
    sc = container.get("securityContext") or {}
    if sc.get("allowPrivilegeEscalation") is not False:
        error(where, "allowPrivilegeEscalation must be false")
    if sc.get("readOnlyRootFilesystem") is not True:
        error(where, "readOnlyRootFilesystem must be true")
    if "ALL" not in ((sc.get("capabilities") or {}).get("drop") or []):
        error(where, "capabilities must drop ALL")
    if not (sc.get("runAsNonRoot") or podSecurity.get("runAsNonRoot")):
        error(where, "runAsNonRoot must be true")
    resources = container.get("resources") or {}
    for kind in ("requests", "limits"):
        if not resources.get(kind):
            error(where, f"resources.{kind} missing")


def probePath(container, probe):
    return (((container.get(probe) or {}).get("httpGet")) or {}).get("path")


def flagValue(container, name):
    """The value of `--name=VALUE` among the container's args, or None."""
    for arg in container.get("args") or []:
        m = re.fullmatch(rf"--{name}=(\S*)", str(arg))
        if m:
            return m.group(1)
    return None


def hasFlag(container, name):
    """Whether `--name` or `--name=...` is among the container's args."""
    return any(str(a) == f"--{name}" or str(a).startswith(f"--{name}=") for a in container.get("args") or [])


LOOPBACK = ("127.0.0.1", "localhost", "[::1]")


def listenAddress(container):
    m = re.fullmatch(r"(\S*):(\d+)", flagValue(container, "listen") or "")
    return (m.group(1), int(m.group(2))) if m else ("127.0.0.1", 8888)  # fleetsched serve's default


def listenPort(container):
    return listenAddress(container)[1]


def listenHost(container):
    return listenAddress(container)[0]


def shutdownGrace(container):
    value = flagValue(container, "shutdown-grace")
    return int(value) if value and value.isdigit() else 20  # fleetsched serve's default


def preStopSleep(container):
    sleep = (((container.get("lifecycle") or {}).get("preStop") or {}).get("sleep")) or {}
    return int(sleep.get("seconds") or 0)


def checkDeployment(where, obj, context):
    pod = obj["spec"]["template"]["spec"]
    podSecurity = pod.get("securityContext") or {}
    if (podSecurity.get("seccompProfile") or {}).get("type") != "RuntimeDefault":
        error(where, "pod seccompProfile must be RuntimeDefault")
    if not podSecurity.get("runAsNonRoot"):
        error(where, "pod runAsNonRoot must be true")
    names = [c["name"] for c in pod["containers"]]
    for c in pod["containers"]:
        checkContainerSecurity(f"{where} container {c['name']}", c, podSecurity)
    plugin = [c for c in pod["containers"] if c["name"] == "fleetsched-scheduler"]
    if plugin:
        # Plugin shape: kube-scheduler with the engine in process; nothing to call over HTTP.
        context["plugin"] = True
        c = plugin[0]
        if probePath(c, "livenessProbe") != "/healthz":
            error(where, "fleetsched-scheduler livenessProbe must be GET /healthz")
        if probePath(c, "readinessProbe") != "/readyz":
            error(where, "fleetsched-scheduler readinessProbe must be GET /readyz")
        if "fleetsched" in names:
            error(where, "the plugin shape runs no fleetsched extender beside fleetsched-scheduler")
        return
    fleetsched = [c for c in pod["containers"] if c["name"] == "fleetsched"]
    if not fleetsched:
        error(where, f"no fleetsched container (containers: {names})")
        return
    c = fleetsched[0]
    if probePath(c, "livenessProbe") != "/healthz":
        error(where, "fleetsched livenessProbe must be GET /healthz")
    if probePath(c, "readinessProbe") != "/readyz":
        error(where, "fleetsched readinessProbe must be GET /readyz")
    grace = pod.get("terminationGracePeriodSeconds", 30)  # Kubernetes' default
    if grace <= preStopSleep(c) + shutdownGrace(c):
        error(where, f"terminationGracePeriodSeconds {grace} must exceed fleetsched's preStop sleep "
                     f"({preStopSleep(c)} s) plus --shutdown-grace ({shutdownGrace(c)} s): kubelet would kill "
                     "it mid-drain")
    # Off loopback, a /bind any caller can send would make fleetsched post Bindings with its own
    # token: only over HTTPS with client certificates (kube-scheduler's extender tlsConfig).
    if hasFlag(c, "bind") and listenHost(c) not in LOOPBACK and not (
            flagValue(c, "tls-cert-file") and flagValue(c, "client-ca-file")):
        error(where, f"fleetsched --bind with --listen on {listenHost(c)} needs --tls-cert-file and "
                     "--client-ca-file: anyone who reaches the port could have it bind pods")
    if "--leader-elect" in (c.get("args") or []):
        context["leaderElect"].append(where)
    context["listenPorts"].append(listenPort(c))
    context["listenHosts"].append((where, listenHost(c)))
    context["sidecar"] |= "kube-scheduler" in names


def enablesPlugin(cfg):
    """Whether any profile of the KubeSchedulerConfiguration enables the Fleetsched plugin."""
    for p in cfg.get("profiles") or []:
        for point in (p.get("plugins") or {}).values():
            if any(e.get("name") == PLUGIN for e in (point or {}).get("enabled") or []):
                return True
    return False


def pointNames(plugins, point, key):
    return [e.get("name") for e in ((plugins.get(point) or {}).get(key) or [])]


def checkPluginConfig(where, cfg, context):
    """A KubeSchedulerConfiguration that runs the Fleetsched plugin (fleetsched-scheduler)."""
    if cfg.get("apiVersion") != "kubescheduler.config.k8s.io/v1":
        error(where, "apiVersion must be kubescheduler.config.k8s.io/v1")
    if cfg.get("extenders"):
        error(where, "no extenders with the Fleetsched plugin: kube-scheduler turns its signatures "
                     "(opportunistic batching) off for every profile as soon as one is configured")
    if cfg.get("percentageOfNodesToScore") != 100:
        error(where, "percentageOfNodesToScore should be 100 (Fleetsched ranks every feasible node)")
    for i, p in enumerate(cfg.get("profiles") or []):
        at = f"{where} profiles[{i}] ({p.get('schedulerName', 'default-scheduler')})"
        context["schedulerNames"].add(p.get("schedulerName", "default-scheduler"))
        plugins = p.get("plugins") or {}
        enabled = pointNames(plugins, "multiPoint", "enabled")
        if PLUGIN not in enabled:
            error(at, f"{PLUGIN} must be enabled in multiPoint (every extension point it implements)")
            continue
        for point in FILTER_POINTS:
            if pointNames(plugins, point, "disabled"):
                error(at, f"{point}.disabled {pointNames(plugins, point, 'disabled')}: keep every default "
                          f"filter ({PLUGIN} adds GPU, spot and zone filters, it replaces none)")
        filters = pointNames(plugins, "filter", "enabled")
        if not filters or filters[0] != PLUGIN:
            error(at, f"filter.enabled must name {PLUGIN} first: kube-scheduler then runs its Filter (a "
                      f"lookup of PreFilter's verdict) before the default filters, and stops at the first "
                      f"that fails (filter.enabled is {filters})")
        for point in ("preScore", "score"):
            disabled = pointNames(plugins, point, "disabled")
            if ("*" in disabled or PLUGIN in disabled) and PLUGIN not in pointNames(plugins, point, "enabled"):
                error(at, f"{point}.disabled {disabled} turns {PLUGIN} off there; enable it in "
                          f"{point}.enabled")
        missing = SPREADING_SCORES - set(pointNames(plugins, "score", "disabled"))
        if missing and "*" not in pointNames(plugins, "score", "disabled"):
            error(at, f"score.disabled lacks {sorted(missing)}: their spreading scores work against "
                      f"{PLUGIN}'s GPU packing")
        binders = pointNames(plugins, "bind", "enabled")
        if ("*" not in pointNames(plugins, "bind", "disabled") or PLUGIN not in binders
                or "DefaultBinder" not in binders or binders.index(PLUGIN) > binders.index("DefaultBinder")):
            error(at, f"bind must disable '*' and enable {PLUGIN} before DefaultBinder (GPU pods are "
                      f"bound with their fleetsched.io/gpu-index; bind is {plugins.get('bind')})")
        args = [c.get("args") for c in p.get("pluginConfig") or [] if c.get("name") == PLUGIN]
        if len(args) > 1:
            error(at, f"pluginConfig names {PLUGIN} {len(args)} times")
        if args and isinstance(args[0], dict):
            checkProfile(f"{at} pluginConfig {PLUGIN}", args[0])
        elif args:
            error(at, f"pluginConfig {PLUGIN} args must be a FleetschedConfiguration")


def checkSchedulerConfig(where, cfg, context):
    if enablesPlugin(cfg):
        checkPluginConfig(where, cfg, context)
        return
    if cfg.get("apiVersion") != "kubescheduler.config.k8s.io/v1":
        error(where, "apiVersion must be kubescheduler.config.k8s.io/v1")
    if cfg.get("kind") != "KubeSchedulerConfiguration":
        error(where, "kind must be KubeSchedulerConfiguration")
    if cfg.get("percentageOfNodesToScore") != 100:
        error(where, "percentageOfNodesToScore should be 100 (extender sees every feasible node)")
    extenders = cfg.get("extenders") or []
    if len(extenders) != 1:
        error(where, f"expected one extender, found {len(extenders)}")
    if sum(1 for e in extenders if e.get("bindVerb")) > 1:
        error(where, "at most one extender may set bindVerb")
    for e in extenders:
        unknown = set(e) - EXTENDER_KEYS
        if unknown:
            error(where, f"unknown extender keys {sorted(unknown)}")
        if e.get("prioritizeVerb") and not (isinstance(e.get("weight"), int) and e["weight"] > 0):
            error(where, "weight must be a positive integer when prioritizeVerb is set")
        if e.get("nodeCacheCapable") is not True:
            error(where, "nodeCacheCapable must be true (fleetsched answers with NodeNames)")
        if not re.fullmatch(r"\d+(ms|s|m)", str(e.get("httpTimeout", ""))):
            error(where, f"httpTimeout {e.get('httpTimeout')!r} is not a duration")
        managed = [m.get("name") for m in e.get("managedResources") or []]
        if "nvidia.com/gpu" not in managed:
            error(where, "managedResources must include nvidia.com/gpu")
        if len(set(managed)) != len(managed):
            error(where, "duplicate managedResources")
        for verb in ("filterVerb", "prioritizeVerb", "preemptVerb", "bindVerb"):
            if e.get(verb) and "/" in e[verb]:
                error(where, f"{verb} is appended to urlPrefix and must not contain '/'")
        # enableHTTPS with an http:// URL would still speak plain HTTP; tlsConfig without
        # enableHTTPS is ignored; HTTPS without a client certificate lets anyone call bind.
        https = str(e.get("urlPrefix", "")).startswith("https://")
        if bool(e.get("enableHTTPS")) != https:
            error(where, f"enableHTTPS {e.get('enableHTTPS')!r} does not match urlPrefix {e.get('urlPrefix')!r}")
        tls = e.get("tlsConfig") or {}
        if tls and not e.get("enableHTTPS"):
            error(where, "tlsConfig is ignored without enableHTTPS: true")
        if e.get("enableHTTPS") and e.get("bindVerb") and not (tls.get("certFile") and tls.get("keyFile")):
            error(where, "enableHTTPS with bindVerb needs tlsConfig certFile and keyFile (fleetsched's "
                         "--client-ca-file refuses a kube-scheduler without a client certificate)")
        if e.get("enableHTTPS") and tls.get("insecure"):
            error(where, "tlsConfig.insecure skips checking fleetsched's certificate: give caFile")
        m = re.fullmatch(r"https?://([^/:]+)(?::(\d+))?(/.*)?", str(e.get("urlPrefix", "")))
        if not m:
            error(where, f"urlPrefix {e.get('urlPrefix')!r} is not an http(s) URL")
        else:
            context["extenderURLs"].append((where, m.group(1), int(m.group(2) or 80)))
    for p in cfg.get("profiles") or []:
        if p.get("schedulerName"):
            context["schedulerNames"].add(p["schedulerName"])


def checkProfile(where, cfg):
    if cfg.get("apiVersion") != "fleetsched.io/v1alpha1" or cfg.get("kind") != "FleetschedConfiguration":
        error(where, "expected apiVersion fleetsched.io/v1alpha1, kind FleetschedConfiguration")
    profiles = cfg.get("profiles") or []
    if not any(p.get("name") == "default" for p in profiles):
        error(where, "a profile named default is required (the fallback for every pod)")
    for p in profiles:
        for plugin in p.get("plugins") or []:
            if not plugin.get("name") or not isinstance(plugin.get("weight", 1), int):
                error(where, f"plugin entry {plugin!r} needs a name and an integer weight")


def grantedLeaseVerbs(obj):
    verbs = set()
    for rule in obj.get("rules") or []:
        if "coordination.k8s.io" in (rule.get("apiGroups") or []) and "leases" in (rule.get("resources") or []):
            verbs |= set(rule.get("verbs") or [])
    return verbs


def checkClusterRole(where, obj):
    """fleetsched's own ClusterRole (or Role) may grant only what CLIENT_REQUESTS lists."""
    for rule in obj.get("rules") or []:
        for group in rule.get("apiGroups") or []:
            for resource in rule.get("resources") or []:
                allowed = CLIENT_REQUESTS.get((group, resource), set())
                extra = sorted(set(rule.get("verbs") or []) - allowed)
                if extra:
                    error(where, f"grants {extra} on {group or 'core'}/{resource}, which fleetsched never "
                                 f"sends (allowed: {sorted(allowed) or 'nothing'})")


def checkManifest(path, context):
    with open(path) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    for i, obj in enumerate(docs):
        kind = obj.get("kind")
        name = (obj.get("metadata") or {}).get("name")
        where = f"{path}#{i} {kind}/{name}"
        if not obj.get("apiVersion") or not kind or not name:
            error(where, "apiVersion, kind and metadata.name are required")
            continue
        if kind not in CLUSTER_SCOPED and not obj["metadata"].get("namespace"):
            error(where, "namespaced object without metadata.namespace")
        if kind == "Deployment":
            checkDeployment(where, obj, context)
        elif kind == "ClusterRole" and "fleetsched" in name:
            checkClusterRole(where, obj)
        elif kind == "Role":
            context["roles"].append((where, obj))
        elif kind == "ConfigMap":
            for key, text in (obj.get("data") or {}).items():
                embedded = yaml.safe_load(text)
                if not isinstance(embedded, dict):
                    continue
                if embedded.get("kind") == "KubeSchedulerConfiguration":
                    checkSchedulerConfig(f"{where} {key}", embedded, context)
                    context["schedulerConfigs"].append((f"{where} {key}", embedded, text))
                elif embedded.get("kind") == "FleetschedConfiguration":
                    checkProfile(f"{where} {key}", embedded)
        elif kind == "Pod":
            scheduler = obj["spec"].get("schedulerName")
            if scheduler:
                context["podSchedulers"].append((where, scheduler))


def checkDashboard(path, sources):
    with open(path) as f:
        dash = json.load(f)
    panels = []

    def walk(items):
        for p in items:
            panels.append(p)
            walk(p.get("panels") or [])
    walk(dash.get("panels") or [])
    ids = [p.get("id") for p in panels]
    if len(ids) != len(set(ids)):
        error(path, "panel ids are not unique")
    used = set()
    for p in panels:
        for t in p.get("targets") or []:
            names = set(re.findall(r"\bfleetsched_[a-z_]+", t.get("expr", "")))
            unknown = names - KNOWN_METRICS
            if unknown:
                error(path, f"panel {p.get('title')!r} uses unknown metrics {sorted(unknown)}")
            used |= names
    missing = KNOWN_METRICS - used
    if missing:
        error(path, f"metrics not shown on any panel: {sorted(missing)}")
    if sources:
        text = ""
        for d in sources:
            for root, _, files in os.walk(d):
                for fn in files:
                    if fn.endswith((".cpp", ".h", ".cc")):
                        with open(os.path.join(root, fn), errors="replace") as f:
                            text += f.read()
        if "fleetsched_" in text:
            for name in sorted(used):
                base = re.sub(r"_(bucket|sum|count)$", "", name)
                # Registered as a quoted string, with or without the prefix (exact, so that
                # "http_requests_total" does not vouch for "requests_total").
                short = base.replace("fleetsched_", "", 1)
                if f'"{base}"' not in text and f'"{short}"' not in text:
                    print(f"lint_manifests: warning: {name} not found in {', '.join(sources)}",
                          file=sys.stderr)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dashboard")
    ap.add_argument("--metric-sources", action="append", default=[], metavar="DIR")
    ap.add_argument("--write-scheduler-configs")
    ap.add_argument("manifests", nargs="*")
    args = ap.parse_args()
    for path in args.manifests:
        context = {"listenPorts": [], "listenHosts": [], "extenderURLs": [], "schedulerNames": set(),
                   "podSchedulers": [], "sidecar": False, "plugin": False, "schedulerConfigs": [],
                   "roles": [], "leaderElect": []}
        try:
            checkManifest(path, context)
        except (yaml.YAMLError, KeyError, TypeError, AttributeError) as e:
            error(path, f"cannot read: {e}")
            continue
        # Sidecar: kube-scheduler must reach the fleetsched in its own pod.
        if context["sidecar"]:
            # The verbs (bind posts Bindings) only for the kube-scheduler in the same pod.
            for where, host in context["listenHosts"]:
                if host not in LOOPBACK:
                    error(where, f"sidecar fleetsched must --listen on loopback, not {host} "
                                 "(probes and metrics go to --probe-listen)")
            for where, host, port in context["extenderURLs"]:
                if host not in ("127.0.0.1", "localhost"):
                    error(where, f"sidecar extender must be on loopback, not {host}")
                if port not in context["listenPorts"]:
                    error(where, f"extender port {port} is not fleetsched's listen port "
                                 f"{context['listenPorts']}")
        # Standalone: the Roles are fleetsched's own (leader election), held to what it sends; in
        # the scheduler shapes they are kube-scheduler's, whose requests are its own business.
        if not (context["sidecar"] or context["plugin"]):
            for where, role in context["roles"]:
                checkClusterRole(where, role)
        for where in context["leaderElect"]:
            granted = set().union(*(grantedLeaseVerbs(r) for _, r in context["roles"]))
            missing = sorted(CLIENT_REQUESTS[("coordination.k8s.io", "leases")] - granted)
            if missing:
                error(where, f"fleetsched runs with --leader-elect, but no Role grants {missing} on leases")
        # A scheduler this manifest runs (a second one beside the cluster's): one active replica,
        # elected on a Lease of its own. The default resourceName is the cluster scheduler's Lease,
        # which the two would then take turns holding.
        if context["sidecar"] or context["plugin"]:
            for where, cfg, _ in context["schedulerConfigs"]:
                election = cfg.get("leaderElection") or {}
                if election.get("leaderElect") is False:
                    error(where, "leaderElection.leaderElect must be true: replicas of a scheduler "
                                 "must not place pods at the same time")
                if election.get("resourceName", "kube-scheduler") == "kube-scheduler":
                    error(where, "leaderElection.resourceName must name a Lease of its own, not the "
                                 "cluster scheduler's kube-scheduler")
        if args.write_scheduler_configs:
            for i, (_, cfg, text) in enumerate(context["schedulerConfigs"]):
                stem = os.path.splitext(os.path.basename(path))[0]
                out = os.path.join(args.write_scheduler_configs, "plugin" if enablesPlugin(cfg) else "")
                os.makedirs(out, exist_ok=True)
                with open(os.path.join(out, f"{stem}-{i}.yaml"), "w") as f:
                    f.write(text)
        for where, scheduler in context["podSchedulers"]:
            if context["schedulerNames"] and scheduler not in context["schedulerNames"]:
                error(where, f"schedulerName {scheduler} not served here ({context['schedulerNames']})")
    if args.dashboard:
        try:
            checkDashboard(args.dashboard, args.metric_sources)
        except (OSError, ValueError) as e:
            error(args.dashboard, f"cannot read: {e}")
    for e in errors:
        print(f"lint_manifests: {e}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
