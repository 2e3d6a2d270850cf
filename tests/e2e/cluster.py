"""A throwaway Kubernetes control plane on loopback for the end-to-end tests.

ControlPlane starts etcd, kube-apiserver (token auth, no controller manager),
an extender (fleetsched, or a stand-in) and kube-scheduler configured to call
it, each on a free 127.0.0.1 port, and waits for each health endpoint.
Every child runs in its own session, is recorded by PID in <workdir>/<name>.pid
and is stopped by that PID in reverse start order; children also die with the
harness (PR_SET_PDEATHSIG) if it is killed outright. Logs go to
<workdir>/<name>.log.

Kube is a small stdlib client for the REST calls the scenarios need.
Only the Python standard library is used here; pytest is only for the tests.
"""

from __future__ import annotations

import base64
import ctypes
import json
import os
import secrets
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import yaml

E2E_DIR = Path(__file__).resolve().parent
SOURCE_ROOT = E2E_DIR.parent.parent

_PR_SET_PDEATHSIG = 1


class HarnessError(RuntimeError):
    """A component did not start, or the cluster is not in the expected state."""


def componentPaths() -> dict[str, str]:
    """Asks build-components.sh where the cached binaries live (no build).

    FLEETSCHED_E2E_K8S_BIN / FLEETSCHED_E2E_ETCD_BIN in the environment win,
    so a run can point at binaries built elsewhere.
    """
    out = subprocess.run([str(E2E_DIR / "build-components.sh"), "--print-env"],
                         check=True, capture_output=True, text=True).stdout
    paths = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
    for key in ("FLEETSCHED_E2E_K8S_BIN", "FLEETSCHED_E2E_ETCD_BIN"):
        if os.environ.get(key):
            paths[key] = os.environ[key]
    return paths


def freePort() -> int:
    # The kernel hands out ephemeral ports in sequence, so a port closed here is
    # not handed out again before the component binds it a moment later.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _dieWithParent() -> None:
    # Runs in the child between fork and exec: if the harness is SIGKILLed, the
    # kernel kills the component too, so nothing is left holding ports.
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


@dataclass
class Process:
    name: str
    popen: subprocess.Popen
    logPath: Path

    @property
    def pid(self) -> int:
        return self.popen.pid

    def alive(self) -> bool:
        return self.popen.poll() is None

    def logTail(self, lines: int = 30) -> str:
        try:
            text = self.logPath.read_text(errors="replace").splitlines()
        except OSError:
            return ""
        return "\n".join(text[-lines:])

    def stop(self, timeout: float = 10.0) -> None:
        if not self.alive():
            return
        try:
            os.kill(self.pid, signal.SIGTERM)
            self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            os.kill(self.pid, signal.SIGKILL)
            self.popen.wait(5)
        except ProcessLookupError:
            pass


class Kube:
    """Bearer-token REST client for kube-apiserver (JSON in, JSON out)."""

    def __init__(self, server: str, token: str, caFile: Path | None):
        self.server = server
        self.token = token
        if caFile is not None:
            self.context = ssl.create_default_context(cafile=str(caFile))
        else:
            self.context = ssl._create_unverified_context()  # loopback only

    def request(self, method: str, path: str, body: object | None = None,
                contentType: str = "application/json", timeout: float = 30.0) -> dict:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.server + path, data=data, method=method)
        req.add_header("Authorization", "Bearer " + self.token)
        req.add_header("Accept", "application/json")
        if data is not None:
            req.add_header("Content-Type", contentType)
        try:
            with urllib.request.urlopen(req, context=self.context, timeout=timeout) as resp:
                raw = resp.read()
        except urllib.error.HTTPError as e:
            detail = e.read().decode(errors="replace")
            raise HarnessError(f"{method} {path}: HTTP {e.code}: {detail}") from None
        return json.loads(raw) if raw else {}

    def createNode(self, node: dict) -> dict:
        return self.request("POST", "/api/v1/nodes", node)

    def createNamespace(self, name: str) -> dict:
        return self.request("POST", "/api/v1/namespaces",
                            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})

    def createPod(self, namespace: str, pod: dict) -> dict:
        return self.request("POST", f"/api/v1/namespaces/{namespace}/pods", pod)

    def getPod(self, namespace: str, name: str) -> dict:
        return self.request("GET", f"/api/v1/namespaces/{namespace}/pods/{name}")

    def listPods(self, namespace: str | None = None) -> list[dict]:
        path = f"/api/v1/namespaces/{namespace}/pods" if namespace else "/api/v1/pods"
        return self.request("GET", path).get("items") or []

    def listNodes(self) -> list[dict]:
        return self.request("GET", "/api/v1/nodes").get("items") or []

    def deletePodsNow(self, namespace: str) -> None:
        # No kubelet confirms a graceful deletion here, so pods go with grace 0.
        self.request("DELETE", f"/api/v1/namespaces/{namespace}/pods?gracePeriodSeconds=0",
                     {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0})


def waitFor(what: str, predicate, timeout: float, interval: float = 0.2,
            process: Process | None = None, watch: list[Process] | None = None):
    """Polls predicate() until it returns a truthy value; raises with context.

    A death of `process` (or of any process in `watch`) ends the wait at once
    with its log tail, instead of a timeout that hides the crash.
    """
    deadline = time.monotonic() + timeout
    lastError: Exception | None = None
    watched = ([process] if process else []) + list(watch or [])
    while time.monotonic() < deadline:
        for proc in watched:
            if not proc.alive():
                raise HarnessError(f"{proc.name} exited with code {proc.popen.returncode} "
                                   f"while waiting for {what}; log {proc.logPath}:\n"
                                   f"{proc.logTail()}")
        try:
            value = predicate()
            if value:
                return value
        except AssertionError:
            raise
        except Exception as e:  # not up yet: connection refused, 503, ...
            lastError = e
        time.sleep(interval)
    tail = f"\n{process.name} log tail:\n{process.logTail()}" if process else ""
    raise HarnessError(f"timed out after {timeout:.0f} s waiting for {what}"
                       f" (last error: {lastError}){tail}")


def httpGetOk(url: str, token: str | None = None, timeout: float = 2.0) -> bool:
    req = urllib.request.Request(url)
    if token:
        req.add_header("Authorization", "Bearer " + token)
    with urllib.request.urlopen(req, context=ssl._create_unverified_context(),
                                timeout=timeout) as resp:
        return resp.status == 200


@dataclass
class ExtenderTls:
    """kube-scheduler's extender tlsConfig: its client certificate and key, and the CA that
    signed the extender's serving certificate (then `enableHTTPS: true`, an https urlPrefix)."""
    certFile: str
    keyFile: str
    caFile: str
    serverName: str = ""


@dataclass
class Extender:
    """How kube-scheduler reaches the extender, and how the harness starts it."""
    name: str
    argv: list[str]  # {port}, {probePort} and {workdir} are substituted
    urlPrefix: str = "/scheduler"
    healthPath: str = "/readyz"  # fleetsched: ready once its node source is loaded
    port: int = 0
    # False: kube-scheduler sends whole Node objects (the Go seed extender's mode).
    nodeCacheCapable: bool = True
    # A free port for `--probe-listen` when the argv names {probePort}; health checks go there.
    probePort: int = 0
    tls: ExtenderTls | None = None

    def substitute(self, workdir: Path) -> list[str]:
        if any("{probePort}" in a for a in self.argv) and not self.probePort:
            self.probePort = freePort()
        return [a.format(port=self.port, probePort=self.probePort, workdir=workdir) for a in self.argv]

    def healthUrl(self) -> str:
        """Plain HTTP: the probe listener when there is one, else the verbs port (which
        must then be plain too)."""
        return f"http://127.0.0.1:{self.probePort or self.port}{self.healthPath}"


def shippedSchedulerConfig(manifest: str) -> dict:
    """The KubeSchedulerConfiguration that deploy/kubernetes/<manifest> ships (the chart renders
    the same for its shape)."""
    path = SOURCE_ROOT / "deploy" / "kubernetes" / manifest
    for doc in yaml.safe_load_all(path.read_text()):
        config = ((doc or {}).get("data") or {}).get("scheduler-config.yaml")
        if config:
            return yaml.safe_load(config)
    raise HarnessError(f"{path} has no scheduler-config.yaml")


def shippedPluginProfile() -> dict:
    """plugin.yaml's profile: Fleetsched enabled with its weight, the default scores that work
    against its placement turned off, Fleetsched first among the filters and the binders."""
    return shippedSchedulerConfig("plugin.yaml")["profiles"][0]


def shippedExtenderWeight() -> int:
    """The extender's weight in sidecar.yaml's stanza."""
    return int(shippedSchedulerConfig("sidecar.yaml")["extenders"][0]["weight"])


@dataclass
class Plugin:
    """fleetsched-scheduler: kube-scheduler with fleetsched's engine as the Fleetsched plugin."""
    binary: str
    config: str = ""  # a FleetschedConfiguration (YAML) for the plugin's args; "": built-in

    def profile(self) -> str:
        """The profile lines of the shipped configuration (shippedPluginProfile's plugins), so
        every scenario and the scale run test what users deploy; the plugin's args are
        `config`'s."""
        lines = {"plugins": shippedPluginProfile()["plugins"]}
        if self.config:
            lines["pluginConfig"] = [{"name": "Fleetsched", "args": yaml.safe_load(self.config)}]
        return "".join(f"  {line}\n" for line in yaml.safe_dump(lines, sort_keys=False).splitlines())


@dataclass
class ControlPlane:
    workdir: Path
    bins: dict[str, str]
    processes: list[Process] = field(default_factory=list)
    token: str = ""
    apiserverPort: int = 0
    schedulerPort: int = 0
    kube: Kube | None = None
    kubeconfig: Path | None = None
    extender: Extender | None = None
    extenderProcess: Process | None = None
    apiserverProcess: Process | None = None
    apiserverArgv: list[str] = field(default_factory=list)
    schedulerProcess: Process | None = None
    schedulerArgv: list[str] = field(default_factory=list)

    # ---- process plumbing -------------------------------------------------

    def _spawn(self, name: str, argv: list[str], env: dict | None = None) -> Process:
        logPath = self.workdir / f"{name}.log"
        log = open(logPath, "ab")
        try:
            popen = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log,
                                     stderr=subprocess.STDOUT, cwd=self.workdir,
                                     start_new_session=True, preexec_fn=_dieWithParent,
                                     env=env)
        finally:
            log.close()
        (self.workdir / f"{name}.pid").write_text(f"{popen.pid}\n")
        (self.workdir / f"{name}.cmd").write_text(" ".join(argv) + "\n")
        proc = Process(name, popen, logPath)
        self.processes.append(proc)
        return proc

    def _retryOnPortClash(self, start, *args) -> None:
        """Runs start(*args); if the component lost its free port to another
        process in the moment between picking and binding it, stops it and
        tries again with new ports (the log shows "address already in use")."""
        for attempt in range(3):
            count = len(self.processes)
            try:
                return start(*args)
            except HarnessError:
                fresh = self.processes[count:]
                clash = any("address already in use" in p.logTail(200) for p in fresh)
                if not clash or attempt == 2:
                    raise
                for proc in fresh:
                    proc.stop()
                    self.processes.remove(proc)
                    proc.logPath.rename(proc.logPath.with_suffix(f".clash{attempt}.log"))
                log(f"port clash starting {fresh[0].name}; retrying with new ports")

    def stop(self) -> None:
        """Stops every component by its recorded PID, newest first."""
        for proc in reversed(self.processes):
            proc.stop()
        self.processes.clear()

    def k8sBin(self, name: str) -> str:
        return str(Path(self.bins["FLEETSCHED_E2E_K8S_BIN"]) / name)

    # ---- components -------------------------------------------------------

    def startEtcd(self) -> None:
        self._retryOnPortClash(self._startEtcd)

    def startApiserver(self) -> None:
        self._retryOnPortClash(self._startApiserver)

    def startExtender(self, extender: Extender) -> None:
        self._retryOnPortClash(self._startExtender, extender)

    def startScheduler(self, ignoredByScheduler: bool = False, binder: bool = False,
                       managedResource: str | None = "nvidia.com/gpu", extenderWeight: int | None = None,
                       profile: str = "", plugin: Plugin | None = None) -> None:
        """plugin: run fleetsched-scheduler with the Fleetsched plugin enabled instead of
        kube-scheduler (and no extender).
        extenderWeight: the extender's weight (None: sidecar.yaml's, as users deploy it).
        binder: kube-scheduler also sends bindVerb and preemptVerb to the extender.
        managedResource: the extended resource whose pods kube-scheduler sends the extender;
        None leaves managedResources out, so kube-scheduler asks it about every pod.
        profile: YAML lines added to the profile (e.g. a plugins: block that turns
        kube-scheduler's own scoring off), indented for the profile's keys."""
        self._retryOnPortClash(self._startScheduler, ignoredByScheduler, binder, managedResource,
                               extenderWeight, profile, plugin)

    def _startEtcd(self) -> None:
        client, peer = freePort(), freePort()
        self.etcdUrl = f"http://127.0.0.1:{client}"
        peerUrl = f"http://127.0.0.1:{peer}"
        proc = self._spawn("etcd", [
            str(Path(self.bins["FLEETSCHED_E2E_ETCD_BIN"]) / "etcd"),
            "--name=node0", f"--data-dir={self.workdir / 'etcd'}",
            f"--listen-client-urls={self.etcdUrl}", f"--advertise-client-urls={self.etcdUrl}",
            f"--listen-peer-urls={peerUrl}", f"--initial-advertise-peer-urls={peerUrl}",
            f"--initial-cluster=node0={peerUrl}",
            "--quota-backend-bytes=8589934592", "--auto-compaction-retention=1",
            "--unsafe-no-fsync", "--logger=zap", "--log-level=warn",
        ])
        waitFor("etcd /health", lambda: b'"health":"true"' in
                urllib.request.urlopen(self.etcdUrl + "/health", timeout=2).read(),
                timeout=30, process=proc)

    def _startApiserver(self) -> None:
        pki = self.workdir / "pki"
        pki.mkdir(exist_ok=True)
        saKey = self.workdir / "sa.key"
        subprocess.run(["openssl", "genrsa", "-out", str(saKey), "2048"], check=True,
                       capture_output=True)
        self.token = secrets.token_hex(16)
        tokens = self.workdir / "tokens.csv"
        tokens.write_text(f"{self.token},admin,admin-uid,system:masters\n")
        tokens.chmod(0o600)
        self.apiserverPort = freePort()
        self.apiserverArgv = [
            self.k8sBin("kube-apiserver"),
            f"--etcd-servers={self.etcdUrl}",
            "--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
            f"--secure-port={self.apiserverPort}", f"--cert-dir={pki}",
            "--endpoint-reconciler-type=none",
            "--service-cluster-ip-range=10.0.0.0/24",
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
            f"--service-account-key-file={saKey}",
            f"--service-account-signing-key-file={saKey}",
            f"--token-auth-file={tokens}",
            "--authorization-mode=RBAC",
            # No controller manager: no default ServiceAccount, and nobody would
            # lift the not-ready taint TaintNodesByCondition puts on new nodes.
            "--disable-admission-plugins=ServiceAccount,TaintNodesByCondition",
            "--allow-privileged=true",
            "--max-requests-inflight=2000", "--max-mutating-requests-inflight=1000",
        ]
        proc = self._spawn("kube-apiserver", self.apiserverArgv)
        self.apiserverProcess = proc
        server = f"https://127.0.0.1:{self.apiserverPort}"
        waitFor("kube-apiserver /readyz",
                lambda: httpGetOk(server + "/readyz", self.token), timeout=120, process=proc)
        caFile = pki / "apiserver.crt"
        self.kube = Kube(server, self.token, caFile)
        try:
            self.kube.request("GET", "/version")
        except (ssl.SSLError, urllib.error.URLError):
            # The generated certificate does not verify as its own CA: fall back
            # to no verification (loopback only) and say so in the kubeconfig.
            caFile = None
            self.kube = Kube(server, self.token, None)
        self.kubeconfig = self.workdir / "kubeconfig"
        cluster = (f"    certificate-authority: {caFile}\n" if caFile
                   else "    insecure-skip-tls-verify: true\n")
        self.kubeconfig.write_text(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: e2e\n  cluster:\n"
            f"    server: {server}\n{cluster}"
            "users:\n- name: admin\n  user:\n"
            f"    token: {self.token}\n"
            "contexts:\n- name: e2e\n  context: {cluster: e2e, user: admin, namespace: default}\n"
            "current-context: e2e\n")
        self.kubeconfig.chmod(0o600)
        # The default namespace appears shortly after readyz.
        waitFor("namespace default", lambda: self.kube.request(
            "GET", "/api/v1/namespaces/default"), timeout=30, process=proc)

    def _startExtender(self, extender: Extender) -> None:
        extender.port = freePort()
        extender.probePort = 0
        argv = extender.substitute(self.workdir)
        proc = self._spawn(extender.name, argv)
        waitFor(f"{extender.name} {extender.healthPath}",
                lambda: httpGetOk(extender.healthUrl()),
                timeout=30, process=proc)
        self.extender, self.extenderProcess = extender, proc

    def _startScheduler(self, ignoredByScheduler: bool, binder: bool = False,
                        managedResource: str | None = "nvidia.com/gpu", extenderWeight: int | None = None,
                        profile: str = "", plugin: Plugin | None = None) -> None:
        # Without an extender (self.extender None) kube-scheduler runs alone:
        # the scale run's baseline.
        assert self.kubeconfig is not None
        if extenderWeight is None:
            extenderWeight = shippedExtenderWeight()
        if plugin is not None:
            profile = plugin.profile() + profile
        self.schedulerPort = freePort()
        config = self.workdir / "scheduler.yaml"
        binderVerbs = "  preemptVerb: preempt\n  bindVerb: bind\n" if binder else ""
        tls = self.extender.tls if self.extender is not None else None
        scheme = "https" if tls is not None else "http"
        https = "  enableHTTPS: false\n" if tls is None else (
            "  enableHTTPS: true\n  tlsConfig:\n"
            f"    certFile: {tls.certFile}\n    keyFile: {tls.keyFile}\n    caFile: {tls.caFile}\n"
            + (f"    serverName: {tls.serverName}\n" if tls.serverName else ""))
        config.write_text(f"""\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: {self.kubeconfig}
  qps: 5000
  burst: 10000
leaderElection:
  leaderElect: false
percentageOfNodesToScore: 100
profiles:
- schedulerName: default-scheduler
""" + profile + ("" if self.extender is None else f"""\
extenders:
- urlPrefix: "{scheme}://127.0.0.1:{self.extender.port}{self.extender.urlPrefix}"
  filterVerb: filter
  prioritizeVerb: prioritize
{binderVerbs}  weight: {extenderWeight}
{https}  nodeCacheCapable: {str(self.extender.nodeCacheCapable).lower()}
  httpTimeout: 5s
  ignorable: false
""" + ("" if managedResource is None else f"""\
  managedResources:
  - name: {managedResource}
    ignoredByScheduler: {str(ignoredByScheduler).lower()}
""")))
        self.schedulerArgv = [
            plugin.binary if plugin is not None else self.k8sBin("kube-scheduler"), f"--config={config}",
            "--bind-address=127.0.0.1", f"--secure-port={self.schedulerPort}",
            "--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics,/debug/pprof/*",
            "-v=2",
        ]
        proc = self._spawn("kube-scheduler", self.schedulerArgv)
        waitFor("kube-scheduler /readyz",
                lambda: httpGetOk(f"https://127.0.0.1:{self.schedulerPort}/readyz"),
                timeout=60, process=proc)
        self.schedulerProcess = proc

    def schedulerMetric(self, name: str) -> float:
        """A metric's value on kube-scheduler's /metrics (summed over its samples)."""
        with urllib.request.urlopen(f"https://127.0.0.1:{self.schedulerPort}/metrics",
                                    context=ssl._create_unverified_context(), timeout=5) as resp:
            text = resp.read().decode()
        total = 0.0
        for line in text.splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[0].split("{")[0] == name:
                total += float(parts[1])
        return total

    def start(self) -> None:
        self.startEtcd()
        self.startApiserver()

    # ---- restarts (same ports, same files: clients keep their config) -----

    def _replace(self, old: Process, new: Process) -> None:
        # Keep start order so stop() still goes newest first.
        self.processes.remove(new)
        self.processes[self.processes.index(old)] = new

    def killExtender(self) -> None:
        """SIGKILLs the extender: a crash, nothing flushed or said goodbye."""
        proc = self.extenderProcess
        os.kill(proc.pid, signal.SIGKILL)
        proc.popen.wait(10)

    def restartExtender(self) -> None:
        """Starts the extender again on its port (kube-scheduler's config names it)."""
        old, extender = self.extenderProcess, self.extender
        if old.alive():
            old.stop()
        argv = extender.substitute(self.workdir)
        proc = self._spawn(extender.name, argv)
        self._replace(old, proc)
        self.extenderProcess = proc
        waitFor(f"{extender.name} {extender.healthPath} after restart",
                lambda: httpGetOk(extender.healthUrl()),
                timeout=30, process=proc)

    def killScheduler(self) -> None:
        """SIGKILLs kube-scheduler (in the plugin deployment fleetsched-scheduler, engine and all)."""
        proc = self.schedulerProcess
        os.kill(proc.pid, signal.SIGKILL)
        proc.popen.wait(10)

    def restartScheduler(self) -> None:
        """Starts kube-scheduler again with the same configuration and port."""
        old = self.schedulerProcess
        if old.alive():
            old.stop()
        proc = self._spawn("kube-scheduler", self.schedulerArgv)
        self._replace(old, proc)
        self.schedulerProcess = proc
        waitFor("kube-scheduler /readyz after restart",
                lambda: httpGetOk(f"https://127.0.0.1:{self.schedulerPort}/readyz"),
                timeout=60, process=proc)

    def restartApiserver(self, downSeconds: float = 0.0, whileDown=None) -> None:
        """Stops kube-apiserver (SIGTERM), waits (and calls whileDown()), starts it
        again on the same port with the same certificates and token file."""
        old = self.apiserverProcess
        old.stop()
        time.sleep(downSeconds)
        if whileDown is not None:
            whileDown()
        proc = self._spawn("kube-apiserver", self.apiserverArgv)
        self._replace(old, proc)
        self.apiserverProcess = proc
        waitFor("kube-apiserver /readyz after restart",
                lambda: httpGetOk(f"https://127.0.0.1:{self.apiserverPort}/readyz", self.token),
                timeout=120, process=proc)

    # ---- helpers for scenarios -------------------------------------------

    def compactEtcd(self) -> int:
        """Writes one key outside the API server's prefix and compacts etcd at that
        revision (etcd's JSON gateway): every resourceVersion handed out before is
        now too old to watch from. Returns the revision."""
        def call(path: str, body: dict) -> dict:
            req = urllib.request.Request(self.etcdUrl + path, json.dumps(body).encode(),
                                         {"Content-Type": "application/json"})
            with urllib.request.urlopen(req, timeout=10) as resp:
                return json.loads(resp.read())
        put = call("/v3/kv/put", {"key": base64.b64encode(b"fleetsched-e2e/bump").decode(),
                                  "value": base64.b64encode(b"1").decode()})
        revision = int(put["header"]["revision"])
        call("/v3/kv/compaction", {"revision": revision, "physical": True})
        return revision

    def kubectl(self, *args: str, timeout: float = 60.0) -> str:
        assert self.kubeconfig is not None
        res = subprocess.run([self.k8sBin("kubectl"), f"--kubeconfig={self.kubeconfig}", *args],
                             capture_output=True, text=True, timeout=timeout)
        if res.returncode != 0:
            raise HarnessError(f"kubectl {' '.join(args)}: {res.stderr.strip()}")
        return res.stdout

    def dumpState(self) -> tuple[Path, Path]:
        """Writes nodes.json and pods.json the way `kubectl get -o json` does.

        The file-fed fleetsched reads these; bound pods are the accounting input.
        Written to a temporary name and renamed so a reload never sees half a file.
        """
        out = []
        for name, args in (("nodes", ["get", "nodes", "-o", "json"]),
                           ("pods", ["get", "pods", "-A", "-o", "json"])):
            path = self.workdir / f"{name}.json"
            tmp = path.with_suffix(".json.tmp")
            tmp.write_text(self.kubectl(*args))
            tmp.replace(path)
            out.append(path)
        return out[0], out[1]

    def keepLogs(self) -> Path:
        return self.workdir


def removeWorkdir(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)


def log(msg: str) -> None:
    print(f"[e2e] {msg}", file=sys.stderr, flush=True)


__all__ = ["ControlPlane", "Extender", "HarnessError", "Kube", "Process", "componentPaths",
           "freePort", "log", "removeWorkdir", "waitFor", "SOURCE_ROOT", "E2E_DIR"]
