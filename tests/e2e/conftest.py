"""pytest fixtures: one control plane per session, one namespace per test.

Environment:
  FLEETSCHED_E2E_EXTENDER  "fleetsched" (default) or "stub" (accept-everything
                           stand-in, for checking the control plane alone)
  FLEETSCHED_BIN           fleetsched binary (default <source>/build/cmd/fleetsched/fleetsched)
  FLEETSCHED_E2E_CONFIG    profile YAML passed to fleetsched as --config (default: built-in)
  FLEETSCHED_E2E_SOURCE    run only with this deployment: "files" (extender fed --nodes/--pods
                           files, SIGHUP after changes), "watch" (extender with --kubeconfig:
                           fleetsched lists and watches kube-apiserver) or "plugin"
                           (fleetsched-scheduler: the engine inside kube-scheduler, fed by its
                           informers); default all three, one cluster each, in turn
  FLEETSCHED_SCHEDULER_BIN fleetsched-scheduler binary (default
                           <source>/build/scheduler/fleetsched-scheduler)
  FLEETSCHED_E2E_WORKDIR   parent folder of the run's work folder (default: the system temp dir)
  FLEETSCHED_E2E_KEEP=1    keep the work folder (logs, kubeconfig) even when every test passed
The component binaries come from build-components.sh (run it first; run.sh does).
"""

from __future__ import annotations

import atexit
import itertools
import json
import os
import re
import signal
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cluster import (E2E_DIR, SOURCE_ROOT, ControlPlane, Extender, HarnessError,  # noqa: E402
                     Plugin, componentPaths, log, removeWorkdir, waitFor)

# Seconds between fleetsched's audits of its cache against a fresh pod list (binder cluster).
AUDIT_INTERVAL = 2
from fleet import FLEET, NodeShape, nodeObject  # noqa: E402

_failed = False
_keptLogs: Path | None = None
_reportLines: list[str] = []


def pytest_runtest_makereport(item, call):
    global _failed
    if call.excinfo is not None and not call.excinfo.errisinstance(pytest.skip.Exception):
        _failed = True


def pytest_terminal_summary(terminalreporter):
    for line in _reportLines:
        terminalreporter.write_line(f"e2e: {line}")
    # Session teardown output is captured with the last test, so say it here.
    if _keptLogs is not None:
        terminalreporter.write_line(f"e2e: logs of this run kept in {_keptLogs}")


def pytest_keyboard_interrupt(excinfo):
    global _failed
    _failed = True  # keep the logs of an interrupted run


def _sources() -> list[str]:
    """fleetsched's node sources to run every scenario with, one cluster each."""
    if os.environ.get("FLEETSCHED_E2E_EXTENDER") == "stub":
        return ["stub"]
    chosen = os.environ.get("FLEETSCHED_E2E_SOURCE")
    if chosen is None:
        return ["files", "watch", "plugin"]
    if chosen not in ("files", "watch", "plugin"):
        raise pytest.UsageError(f"FLEETSCHED_E2E_SOURCE={chosen}: expected files, watch or plugin")
    return [chosen]


def _pluginChoice(config: Path | None = None) -> Plugin:
    """fleetsched-scheduler with the Fleetsched plugin; `config`: the plugin's profile (default:
    FLEETSCHED_E2E_CONFIG, else the built-in one)."""
    binary = os.environ.get("FLEETSCHED_SCHEDULER_BIN",
                            str(SOURCE_ROOT / "build" / "scheduler" / "fleetsched-scheduler"))
    if not os.access(binary, os.X_OK):
        raise pytest.UsageError(f"no fleetsched-scheduler at {binary}: build it "
                                "(scripts/build-scheduler.sh) or set FLEETSCHED_SCHEDULER_BIN")
    if config is None and os.environ.get("FLEETSCHED_E2E_CONFIG"):
        config = Path(os.environ["FLEETSCHED_E2E_CONFIG"])
    return Plugin(binary, config.read_text() if config is not None else "")


def _extenderChoice(source: str, config: Path | None = None) -> Extender:
    """How to start the extender for `source`; `config`: fleetsched's --config (default:
    FLEETSCHED_E2E_CONFIG, else none)."""
    kind = os.environ.get("FLEETSCHED_E2E_EXTENDER", "fleetsched")
    if kind == "stub":
        return Extender("stub-extender", [sys.executable, str(E2E_DIR / "stub_extender.py"),
                                          "--listen", "127.0.0.1:{port}",
                                          "--url-prefix", "/scheduler"])
    if kind != "fleetsched":
        raise pytest.UsageError(f"FLEETSCHED_E2E_EXTENDER={kind}: expected fleetsched or stub")
    binary = os.environ.get("FLEETSCHED_BIN",
                            str(SOURCE_ROOT / "build" / "cmd" / "fleetsched" / "fleetsched"))
    if not os.access(binary, os.X_OK):
        raise pytest.UsageError(f"no fleetsched binary at {binary}: build it "
                                "(ninja -C build cmd/fleetsched/fleetsched) or set FLEETSCHED_BIN")
    argv = [binary, "serve", "--listen", "127.0.0.1:{port}", "--url-prefix", "/scheduler",
            "--enable-debug-handlers"]  # /debug/nodes and /debug/audit check the accounting
    if source == "files":
        argv += ["--nodes", "{workdir}/nodes.json", "--pods", "{workdir}/pods.json"]
    else:
        argv += ["--kubeconfig", "{workdir}/kubeconfig"]
    if config is not None:
        argv += ["--config", str(config)]
    elif os.environ.get("FLEETSCHED_E2E_CONFIG"):
        argv += ["--config", os.path.abspath(os.environ["FLEETSCHED_E2E_CONFIG"])]
    return Extender("fleetsched", argv)


class Cluster:
    """What a scenario sees: the control plane plus scheduling helpers. `fleet` is the
    cluster's nodes and `gpuResource` the extended resource their GPUs are."""

    def __init__(self, plane: ControlPlane, source: str, fleet: tuple[NodeShape, ...] = FLEET,
                 gpuResource: str = "nvidia.com/gpu", label: str | None = None):
        self.plane = plane
        self.kube = plane.kube
        # plugin: no extender; fleetsched decides inside kube-scheduler (fleetsched-scheduler).
        self.plugin = plane.extender is None
        self.stub = not self.plugin and plane.extender.name == "stub-extender"
        self.source = source
        self.fleet = fleet
        self.gpuResource = gpuResource
        self.label = label or source

    def report(self, line: str) -> None:
        """A measurement for the end-of-run summary (timings, placements)."""
        _reportLines.append(f"[{self.label}] {line}")

    def syncExtender(self) -> None:
        """Brings fleetsched's view up to the cluster's bound pods, and checks it.

        File source: dump nodes and pods, SIGHUP, wait for the reload line.
        Watch source: nothing to push. Either way, then wait until fleetsched's
        /debug/nodes shows exactly the free GPUs and CPU the API's bound pods
        leave, so every scenario also checks fleetsched's accounting.
        """
        nodesFile, podsFile = self.plane.dumpState()
        if self.stub:
            return
        if self.plugin:
            self._syncPlugin()
            return
        proc = self.plane.extenderProcess
        if self.source == "files":
            before = _reloadLines(proc)
            os.kill(proc.pid, signal.SIGHUP)
            # fleetsched logs one klog line per reload ('... serve.cpp:NN] "reloaded N nodes,
            # M pods"' or '... "reload failed, ..." err="..."'); wait for it instead of guessing.
            lines = waitFor("fleetsched to log the reload",
                            lambda: _reloadLines(proc)[len(before):],
                            timeout=10, interval=0.05, process=proc)
            if "reload failed" in lines[-1]:
                raise HarnessError(f"fleetsched rejected {nodesFile} / {podsFile}: {lines[-1]}")
        expected = self.expectedFree()
        last = {}

        def matches():
            last.clear()
            last.update(self.fleetschedView())
            return {n: (v["gpusFree"], v["milliCpuFree"]) for n, v in last.items()} == expected

        try:
            waitFor("fleetsched's free GPUs and CPU to match the bound pods", matches,
                    timeout=15, interval=0.1, process=proc)
        except HarnessError as e:
            raise HarnessError(f"{e}\nexpected (gpus, millicpu) free: {expected}\n"
                               f"fleetsched /debug/nodes: {last}") from None

    def _syncPlugin(self) -> dict:
        """The plugin's cache follows kube-scheduler's informers: wait until it holds every node
        with its GPUs (of the cluster's GPU resource), charges exactly the API's bound pods and
        their GPUs, holds no reservation and never clipped a per-GPU charge."""
        total = sum(s.gpus for s in self.fleet)
        want, have = {}, {}

        def charged():
            pods = self.kube.listPods()
            want.update(cache_nodes=len(self.fleet), cache_bound_pods=sum(1 for p in pods if isBound(p)),
                        cache_gpus=total,
                        cache_gpus_free=total - sum(podGpus(p, self.gpuResource) for p in pods if isBound(p)),
                        reservations_live=0, gpu_overcommits=0)
            have.update({k: self.plane.schedulerMetric(f"fleetsched_plugin_{k}") for k in want})
            return have == want or None
        try:
            waitFor("the Fleetsched plugin's cache to charge exactly the bound pods", charged,
                    timeout=15, interval=0.1, watch=self.plane.processes)
            return have
        except HarnessError as e:
            raise HarnessError(f"{e}\nexpected {want}\nplugin gauges {have}") from None

    def metric(self, name: str, **labels) -> float:
        """Sum of a fleetsched_ metric's samples whose labels include `labels`."""
        port = self.plane.extender.probePort or self.plane.extender.port
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as resp:
            text = resp.read().decode()
        total = 0.0
        for line in text.splitlines():
            m = re.match(rf"fleetsched_{name}(?:{{(.*)}})? (\S+)$", line)
            if not m:
                continue
            have = dict(re.findall(r'(\w+)="([^"]*)"', m.group(1) or ""))
            if all(have.get(k) == v for k, v in labels.items()):
                total += float(m.group(2))
        return total

    def fleetschedView(self) -> dict[str, dict]:
        """fleetsched's /debug/nodes: what its cache holds per node."""
        port = self.plane.extender.port
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/debug/nodes", timeout=5) as resp:
            lines = resp.read().decode().splitlines()
        view = {}
        for line in lines[1:]:
            name, zone, capacity, model, gpus, cpu = line.split("\t")
            free, total = gpus.split("/")
            view[name] = {"zone": zone, "capacity": capacity, "model": model,
                          "gpusFree": int(free), "gpusTotal": int(total),
                          "milliCpuFree": int(cpu)}
        return view

    def expectedFree(self) -> dict[str, tuple[int, int]]:
        """(free GPUs, free milli-CPU) per node after the API's bound pods."""
        free = {s.name: [s.gpus, 96000] for s in self.fleet}
        for p in self.kube.listPods():
            node = p["spec"].get("nodeName")
            if node:
                free[node][0] -= podGpus(p, self.gpuResource)
                free[node][1] -= podMilliCpu(p)
        return {n: (g, c) for n, (g, c) in free.items()}

    def createPods(self, namespace: str, pods: list[dict], parallel: int = 16) -> None:
        """Creates pods concurrently, the way a burst from a controller arrives."""
        from concurrent.futures import ThreadPoolExecutor
        with ThreadPoolExecutor(parallel) as pool:
            list(pool.map(lambda p: self.kube.createPod(namespace, p), pods))

    def waitSettled(self, namespace: str, names: list[str], timeout: float = 120.0) -> dict:
        """Waits until every named pod is bound or marked unschedulable.

        Returns name -> pod. kube-scheduler sets PodScheduled=False with reason
        Unschedulable when no node fits, and retries later; a bound pod has
        spec.nodeName.
        """
        wanted = set(names)

        def settled():
            pods = {p["metadata"]["name"]: p for p in self.kube.listPods(namespace)
                    if p["metadata"]["name"] in wanted}
            if len(pods) == len(wanted) and all(isBound(p) or unschedulableMessage(p)
                                                for p in pods.values()):
                return pods
            return None

        return waitFor(f"{len(wanted)} pods in {namespace} to be bound or unschedulable",
                       settled, timeout=timeout, interval=0.5, watch=self.plane.processes)

    def nodeUse(self) -> dict[str, int]:
        """GPUs requested by bound pods, per node, over all namespaces."""
        use: dict[str, int] = {}
        for p in self.kube.listPods():
            node = p["spec"].get("nodeName")
            if node:
                use[node] = use.get(node, 0) + podGpus(p, self.gpuResource)
        return use


    # ---- fleetsched's own accounting (binder cluster) ----------------------

    def audit(self) -> dict:
        """fleetsched's /debug/audit: its cache compared with a fresh pod list."""
        port = self.plane.extender.port
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/debug/audit", timeout=5) as resp:
            return json.loads(resp.read())

    def waitAuditClean(self, timeout: float = 30.0) -> dict:
        """Waits until /debug/audit compared the cache with the API server and found
        every node's charges equal to the bound pods', none overcommitted and no
        reservation left unconfirmed; it must stay so across a whole audit interval,
        so the answer cannot be a comparison taken before the cluster settled.
        (audit.cpp does not count mismatches while reservations are live, hence
        reservationsLive == 0 here.)
        The plugin has no audit: its gauges must match the API's bound pods (syncExtender)."""
        if self.plugin:
            return {"gpuOvercommits": self._syncPlugin()["gpu_overcommits"]}
        last: dict = {}
        cleanSince: list[float] = []

        def clean():
            last.clear()
            last.update(self.audit())
            bound = sum(1 for p in self.kube.listPods() if isBound(p))
            ok = (last.get("comparedWithApiServer") and last.get("clean")
                  and last.get("reservationsLive") == 0 and last.get("checkedPods") == bound)
            if not ok:
                cleanSince.clear()
                return None
            if not cleanSince:
                cleanSince.append(time.monotonic())
            return dict(last) if time.monotonic() - cleanSince[0] > AUDIT_INTERVAL * 1.5 else None

        try:
            return waitFor("fleetsched's /debug/audit to stay clean", clean, timeout=timeout,
                           interval=0.3, process=self.plane.extenderProcess)
        except HarnessError as e:
            raise HarnessError(f"{e}\nlast /debug/audit: {json.dumps(last)}") from None

    def gpuIndexes(self) -> dict[str, list[tuple[str, int, list[int]]]]:
        """node -> [(namespace/pod, GPUs requested, indexes in fleetsched.io/gpu-index)]
        for every bound GPU pod; no annotation gives an empty list."""
        out: dict[str, list[tuple[str, int, list[int]]]] = {}
        for p in self.kube.listPods():
            node = p["spec"].get("nodeName")
            if not node or not podGpus(p, self.gpuResource):
                continue
            value = (p["metadata"].get("annotations") or {}).get("fleetsched.io/gpu-index", "")
            indexes = [int(i) for i in value.split("-")] if value else []
            name = f'{p["metadata"]["namespace"]}/{p["metadata"]["name"]}'
            out.setdefault(node, []).append((name, podGpus(p, self.gpuResource), indexes))
        return out

    def assertGpuIndexesSound(self) -> int:
        """Every bound GPU pod carries fleetsched.io/gpu-index with exactly as many
        distinct indexes as GPUs it asks for, each below the node's GPU count, and
        no index is given to two pods on one node. Returns the pods checked."""
        gpus = {s.name: s.gpus for s in self.fleet}
        checked = 0
        for node, pods in self.gpuIndexes().items():
            owner: dict[int, str] = {}
            for name, wanted, indexes in pods:
                checked += 1
                assert len(indexes) == wanted and len(set(indexes)) == wanted, \
                    f"{name} on {node} asks for {wanted} GPUs, fleetsched.io/gpu-index gives {indexes}"
                for i in indexes:
                    assert 0 <= i < gpus[node], f"{name} on {node}: GPU {i} of {gpus[node]}"
                    assert i not in owner, f"{node}: GPU {i} given to both {owner[i]} and {name}"
                    owner[i] = name
        return checked


def _reloadLines(proc) -> list[str]:
    text = proc.logPath.read_text(errors="replace")
    return [line for line in text.splitlines()
            if '] "reloaded ' in line or '] "reload failed' in line]


def isBound(pod: dict) -> bool:
    return bool(pod["spec"].get("nodeName"))


def unschedulableMessage(pod: dict) -> str:
    for c in (pod.get("status") or {}).get("conditions") or []:
        if c.get("type") == "PodScheduled" and c.get("status") == "False":
            return c.get("message") or c.get("reason") or "unschedulable"
    return ""


def tooFewGpus(cluster, resource: str = "nvidia.com/gpu") -> str:
    """What a pod rejected for want of free GPUs reads in its PodScheduled message: the plugin
    deployment runs Fleetsched's Filter first ("0 of 4 nvidia.com/gpu free, pod needs 1"); with
    the extender kube-scheduler's NodeResourcesFit rejects those nodes before the extender is
    asked."""
    return f"{resource} free, pod needs" if cluster.plugin else f"Insufficient {resource}"


def podMilliCpu(pod: dict) -> int:
    total = 0
    for c in pod["spec"].get("containers") or []:
        q = ((c.get("resources") or {}).get("requests") or {}).get("cpu", "0")
        total += int(q[:-1]) if q.endswith("m") else int(float(q) * 1000)
    return total


def podGpus(pod: dict, resource: str = "nvidia.com/gpu") -> int:
    total = 0
    for c in pod["spec"].get("containers") or []:
        res = c.get("resources") or {}
        q = (res.get("requests") or {}).get(resource) or \
            (res.get("limits") or {}).get(resource)
        total += int(q) if q else 0
    return total


@pytest.fixture(scope="session", params=_sources())
def cluster(request):
    if request.param == "plugin":
        yield request.getfixturevalue("pluginCluster")
    else:
        yield from _runCluster(request.param, _extenderChoice(request.param))


@pytest.fixture(scope="session")
def pluginCluster():
    """fleetsched-scheduler deciding in process (no extender); it binds GPU pods itself."""
    yield from _runCluster("plugin", None, plugin=_pluginChoice())


def _binderSources() -> list[str]:
    """Where fleetsched binds and preemption asks it: the extender's binder cluster, the
    plugin deployment, or both (FLEETSCHED_E2E_SOURCE=plugin: the plugin only; files or watch:
    the binder cluster only)."""
    chosen = os.environ.get("FLEETSCHED_E2E_SOURCE")
    if chosen is None and os.environ.get("FLEETSCHED_E2E_EXTENDER") != "stub":
        return ["binder", "plugin"]
    return ["plugin"] if chosen == "plugin" else ["binder"]


@pytest.fixture(scope="session", params=_binderSources())
def bindingCluster(request):
    """binderCluster, or the plugin deployment, per _binderSources."""
    yield request.getfixturevalue("pluginCluster" if request.param == "plugin" else "binderCluster")


@pytest.fixture(scope="session")
def binderCluster():
    """A control plane of its own where fleetsched also binds and preempts:
    `serve --kubeconfig … --bind --audit-interval 2`, kube-scheduler with
    `bindVerb: bind` and `preemptVerb: preempt`. Scenarios may kill and restart
    fleetsched and kube-apiserver here."""
    if os.environ.get("FLEETSCHED_E2E_EXTENDER") == "stub":
        pytest.skip("binder scenarios need fleetsched")
    extender = _extenderChoice("watch")
    extender.argv += ["--bind", "--audit-interval", str(AUDIT_INTERVAL)]
    yield from _runCluster("binder", extender, binder=True)


def _runCluster(source: str, extender: Extender | None, binder: bool = False,
                fleet: tuple[NodeShape, ...] = FLEET, gpuResource: str = "nvidia.com/gpu",
                workdir: Path | None = None, label: str | None = None, plugin: Plugin | None = None):
    """Starts a control plane with `fleet`'s nodes, the extender and kube-scheduler (which sends
    the extender pods of `gpuResource`) — or, with `plugin` and no extender, fleetsched-scheduler —
    yields its Cluster and tears it down. `workdir`: the work
    folder, made by the caller (files the extender's argv names go there); default a new one.
    `label` names the cluster in logs and reports (default: `source`)."""
    label = label or source
    global _failed, _keptLogs
    paths = componentPaths()
    for key, name in (("FLEETSCHED_E2E_ETCD_BIN", "etcd"), ("FLEETSCHED_E2E_K8S_BIN", "kube-apiserver"),
                      ("FLEETSCHED_E2E_K8S_BIN", "kube-scheduler"), ("FLEETSCHED_E2E_K8S_BIN", "kubectl")):
        if not os.access(Path(paths[key]) / name, os.X_OK):
            pytest.exit(f"missing {Path(paths[key]) / name}: run tests/e2e/build-components.sh", 2)

    if workdir is None:
        workdir = newWorkdir(label)
    plane = ControlPlane(workdir, paths)
    # pytest runs fixture teardown on failures and on Ctrl-C; atexit and the
    # SIGTERM handler cover a harness that is stopped from outside.
    atexit.register(plane.stop)
    previousTerm = signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    # A shell without job control starts background jobs with SIGINT ignored;
    # Ctrl-C must still reach the harness so it can tear the cluster down.
    previousInt = signal.signal(signal.SIGINT, signal.default_int_handler)
    log(f"work folder {workdir} ({label})")
    started = time.monotonic()
    try:
        plane.start()
        for shape in fleet:
            plane.kube.createNode(nodeObject(shape))
        plane.dumpState()
        if extender is not None:
            plane.startExtender(extender)
        plane.startScheduler(binder=binder, managedResource=gpuResource, plugin=plugin)
        _reportLines.append(f"[{label}] control plane up in {time.monotonic() - started:.1f} s")
        decider = f"{extender.name} :{extender.port}" if extender is not None else "Fleetsched plugin"
        log(f"control plane up in {time.monotonic() - started:.1f} s "
            f"(apiserver :{plane.apiserverPort}, {decider}, scheduler :{plane.schedulerPort})")
        yield Cluster(plane, source, fleet, gpuResource, label)
    except HarnessError:
        _failed = True
        raise
    finally:
        plane.stop()
        signal.signal(signal.SIGTERM, previousTerm)
        signal.signal(signal.SIGINT, previousInt)
        if _failed or os.environ.get("FLEETSCHED_E2E_KEEP") == "1":
            _keptLogs = workdir
            log(f"logs kept in {workdir}")
        else:
            removeWorkdir(workdir)


def newWorkdir(label: str) -> Path:
    """A fresh work folder for one control plane, under FLEETSCHED_E2E_WORKDIR when set."""
    parent = os.environ.get("FLEETSCHED_E2E_WORKDIR") or None
    if parent:
        Path(parent).mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f"fleetsched-e2e-{label}-", dir=parent))


_namespaceIds = itertools.count()


@pytest.fixture
def namespace(cluster, request):
    """A fresh namespace per test; its pods are deleted afterwards so the next
    test starts on an empty fleet (namespaces themselves need the controller
    manager to go away, so they stay)."""
    yield from _namespaceFor(cluster, request)


@pytest.fixture
def binderNamespace(binderCluster, request):
    """namespace, on the binder cluster. Afterwards, fleetsched must not have clipped
    any per-GPU charge during the test (gpuOvercommits, counted since its start):
    a clip means it charged one GPU index to two pods."""
    yield from _binderNamespaceFor(binderCluster, request)


@pytest.fixture
def bindingNamespace(bindingCluster, request):
    """binderNamespace, on bindingCluster (the plugin's namespaces end with syncExtender,
    which also requires its gpu_overcommits gauge to be 0)."""
    if bindingCluster.plugin:
        yield from _namespaceFor(bindingCluster, request)
    else:
        yield from _binderNamespaceFor(bindingCluster, request)


def _binderNamespaceFor(cluster, request):
    pid = cluster.plane.extenderProcess.pid
    before = cluster.audit()["gpuOvercommits"]
    steps = _namespaceFor(cluster, request)
    yield next(steps)
    if cluster.plane.extenderProcess.pid != pid:
        before = 0  # restarted: counted afresh
    after = cluster.audit()["gpuOvercommits"]
    next(steps, None)
    assert after == before, f"fleetsched clipped {after - before} per-GPU charges (double-charged GPU indexes)"


def _namespaceFor(cluster, request):
    slug = re.sub(r"[^a-z0-9-]+", "-", request.node.name.lower())
    name = f"t{next(_namespaceIds)}-{slug}"[:63].rstrip("-")
    cluster.kube.createNamespace(name)
    yield name
    cluster.kube.deletePodsNow(name)
    waitFor(f"pods of {name} deleted", lambda: not cluster.kube.listPods(name), timeout=60)
    cluster.syncExtender()


def pytest_collection_modifyitems(config, items):
    stub = os.environ.get("FLEETSCHED_E2E_EXTENDER", "fleetsched") == "stub"
    skipFleetsched = pytest.mark.skip(reason="needs fleetsched's policies; the stub accepts every node")
    # Stand-in self-checks only mean something with the stand-in: deselect them otherwise.
    deselected = [item for item in items if not stub and item.get_closest_marker("stub")]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = [item for item in items if item not in deselected]
    for item in items:
        if stub and item.get_closest_marker("fleetsched"):
            item.add_marker(skipFleetsched)