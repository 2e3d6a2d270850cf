"""HA (issue 26, item 4): two `fleetsched serve --bind --leader-elect` replicas behind one
address, the way a Service fronts the standalone shape's replicas: each new connection goes to
the next replica that accepts it. As the shipped standalone shape does, they serve the verbs over
HTTPS and require kube-scheduler's client certificate. kube-scheduler sends every verb there, so a
bind may reach the follower (refused: "not the leader; leader is X", and that connection ends;
kube-scheduler retries the pod) or the leader for a pod the follower filtered (the leader reads the
pod from kube-apiserver and binds it). The leader is SIGKILLed in the middle of a 200-pod GPU burst:
the survivor must take the Lease over, list the pods again, and bind the rest without handing out
a GPU index twice. The failover time is reported."""

from __future__ import annotations

import datetime
import os
import re
import shutil
import signal
import socket
import threading
import time
import urllib.request

import pytest

from cluster import (SOURCE_ROOT, ControlPlane, Extender, ExtenderTls, componentPaths, freePort, log,
                     removeWorkdir, waitFor)
from conftest import Cluster, isBound, newWorkdir, podGpus
from fleet import H100, NodeShape, nodeObject, pod
from test_tls import makePki

pytestmark = pytest.mark.fleetsched

# 40 nodes x 8 GPUs for 200 pods of 1 or 2 GPUs (250 GPUs): every pod fits, wherever the
# others went.
LEADER_FLEET: tuple[NodeShape, ...] = tuple(
    NodeShape(f"h100-{zone}-{i}", f"zone-{zone}", 8, H100) for i in range(14) for zone in "abc")[:40]
SIZES = [1, 2, 1, 1]
PODS = 200
# Short settings so the run stays well under a minute (lease > renew > 1.2 x retry).
LEASE = ["--leader-elect-lease-duration=3s", "--leader-elect-renew-deadline=2s",
         "--leader-elect-retry-period=500ms"]


class ServiceForwarder:
    """What a ClusterIP Service does for kube-scheduler: accepts on 127.0.0.1:port and splices
    each new connection to the next replica that accepts one (kube-proxy's per-connection
    balancing; a replica that refuses is skipped, as once it leaves the endpoints). kube-scheduler
    reuses its connections, so only a connection that ends can move it to the other replica:
    fleetsched ends the one a refused bind came on."""

    def __init__(self, backends: list[int]):
        self.backends = backends
        self.next = 0
        self.connections = [0] * len(backends)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(128)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _connect(self) -> socket.socket | None:
        for _ in range(len(self.backends)):
            i = self.next % len(self.backends)
            self.next += 1
            try:
                up = socket.create_connection(("127.0.0.1", self.backends[i]), timeout=2)
            except OSError:
                continue  # not listening (killed): the next replica
            up.settimeout(None)
            self.connections[i] += 1
            return up
        return None

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.sock.accept()
            except OSError:
                return  # stopped
            up = self._connect()
            if up is None:
                client.close()
                continue
            for src, dst in ((client, up), (up, client)):
                threading.Thread(target=self._pump, args=(src, dst), daemon=True).start()

    @staticmethod
    def _pump(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def stop(self) -> None:
        self.sock.close()


def metric(port: int, name: str, **labels) -> float | None:
    """A fleetsched_ metric of one replica (summed over matching samples); None when it is down."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2) as resp:
            text = resp.read().decode()
    except OSError:
        return None
    total = 0.0
    for line in text.splitlines():
        m = re.match(rf"fleetsched_{name}(?:{{(.*)}})? (\S+)$", line)
        if m and all(dict(re.findall(r'(\w+)="([^"]*)"', m.group(1) or "")).get(k) == v
                     for k, v in labels.items()):
            total += float(m.group(2))
    return total


@pytest.fixture(scope="module")
def replicated():
    """etcd, kube-apiserver, the 40-node fleet, two leader-electing fleetsched replicas (verbs
    over HTTPS with client certificates, probes, metrics and /debug on a plain port), the
    forwarder in front of them and kube-scheduler binding through it."""
    if os.environ.get("FLEETSCHED_E2E_EXTENDER") == "stub":
        pytest.skip("leader election needs fleetsched")
    if shutil.which("openssl") is None:
        pytest.skip("the openssl CLI makes the certificates (scripts/bootstrap.sh installs it)")
    binary = os.environ.get("FLEETSCHED_BIN",
                            str(SOURCE_ROOT / "build" / "cmd" / "fleetsched" / "fleetsched"))
    workdir = newWorkdir("leader")
    plane = ControlPlane(workdir, componentPaths())
    forwarder = None
    keep = False
    log(f"work folder {workdir} (leader)")
    try:
        pki = makePki(workdir / "tls")
        plane.start()
        for shape in LEADER_FLEET:
            plane.kube.createNode(nodeObject(shape))
        replicas = []  # (name, probe port, process, verbs port)
        for name in ("fleetsched-a", "fleetsched-b"):
            port, probe = freePort(), freePort()
            proc = plane._spawn(name, [binary, "serve", f"--listen=127.0.0.1:{port}", "--url-prefix=/scheduler",
                                       f"--probe-listen=127.0.0.1:{probe}", "--enable-debug-handlers",
                                       f"--tls-cert-file={pki['server.crt']}",
                                       f"--tls-private-key-file={pki['server.key']}",
                                       f"--client-ca-file={pki['ca.crt']}",
                                       f"--kubeconfig={plane.kubeconfig}", "--bind",
                                       "--audit-interval=2", "--leader-elect", *LEASE])
            replicas.append((name, probe, proc, port))
        for name, probe, proc, _ in replicas:
            waitFor(f"{name} /readyz", lambda: urllib.request.urlopen(
                f"http://127.0.0.1:{probe}/readyz", timeout=2).status == 200, timeout=30, process=proc)
        forwarder = ServiceForwarder([replica[3] for replica in replicas])
        plane.extender = Extender("forwarder", [], port=forwarder.port)
        plane.extender.tls = ExtenderTls(str(pki["client.crt"]), str(pki["client.key"]), str(pki["ca.crt"]),
                                         serverName="localhost")
        plane.startScheduler(binder=True)
        cluster = Cluster(plane, "leader", LEADER_FLEET)
        cluster.replicas = replicas
        cluster.forwarder = forwarder
        yield cluster
    except BaseException:
        keep = True
        raise
    finally:
        plane.stop()
        if forwarder is not None:
            forwarder.stop()
        if keep or os.environ.get("FLEETSCHED_E2E_KEEP") == "1":
            log(f"logs kept in {workdir}")
        else:
            removeWorkdir(workdir)


def leaseRecord(cluster) -> dict:
    return cluster.kube.request(
        "GET", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/fleetsched")["spec"]


def test_leader_kill(replicated):
    cluster = replicated
    replicas = cluster.replicas
    # Exactly one replica leads (and has caught up, so it binds).
    def oneLeader():
        leading = [r for r in replicas if metric(r[1], "leader") == 1]
        return leading[0] if len(leading) == 1 else None
    leader = waitFor("one replica to hold the Lease", oneLeader, timeout=30, interval=0.1,
                     watch=cluster.plane.processes)
    survivor = next(r for r in replicas if r is not leader)
    holder = leaseRecord(cluster)["holderIdentity"]
    transitions = leaseRecord(cluster).get("leaseTransitions", 0)

    namespace = "leader-kill"
    cluster.kube.createNamespace(namespace)
    pods = [pod(f"ha-{i:03d}", SIZES[i % len(SIZES)]) for i in range(PODS)]
    started = time.monotonic()
    creator = threading.Thread(target=cluster.createPods, args=(namespace, pods))
    creator.start()
    boundCount = lambda: sum(1 for p in cluster.kube.listPods(namespace) if isBound(p))  # noqa: E731
    waitFor("the leader to bind the first pods", lambda: boundCount() >= 20, timeout=60, interval=0.05,
            watch=cluster.plane.processes)
    boundBefore = boundCount()
    readByLeader = metric(leader[1], "bind_pods_read_total")
    killedAt = time.time()
    killedMono = time.monotonic()
    os.kill(leader[2].pid, signal.SIGKILL)
    leader[2].popen.wait(10)
    cluster.plane.processes.remove(leader[2])  # its death is the point, not a failure
    waitFor("the survivor to take the Lease over",
            lambda: metric(survivor[1], "leader") == 1, timeout=30, interval=0.02,
            process=survivor[2])
    sawLeading = time.monotonic() - killedMono
    record = leaseRecord(cluster)
    acquired = datetime.datetime.fromisoformat(record["acquireTime"].replace("Z", "+00:00")).timestamp()
    creator.join()
    assert boundBefore < PODS, "every pod was bound before the kill: nothing was mid-burst"

    def allBound():
        items = cluster.kube.listPods(namespace)
        return len(items) == PODS and all(isBound(p) for p in items)
    waitFor(f"all {PODS} pods bound", allBound, timeout=90, interval=0.5, process=survivor[2])
    elapsed = time.monotonic() - started

    # The survivor took over in a new term, and every pod was bound by a fleetsched leader.
    assert record["holderIdentity"] != holder and record["holderIdentity"]
    assert record["leaseTransitions"] == transitions + 1, record
    checked = cluster.assertGpuIndexesSound()
    assert checked == PODS
    use: dict[str, int] = {}
    for p in cluster.kube.listPods(namespace):
        use[p["spec"]["nodeName"]] = use.get(p["spec"]["nodeName"], 0) + podGpus(p)
    for node, used in use.items():
        assert used <= 8, f"{node}: {used} GPUs bound"
    # The survivor's cache agrees with the API server: nothing double-charged. (The Cluster
    # helpers read /debug/* on the extender's port: the survivor's plain probe port.)
    cluster.plane.extender.port = survivor[1]
    audit = cluster.waitAuditClean()
    assert audit["gpuOvercommits"] == 0, audit
    refused = metric(survivor[1], "not_leader_total", verb="bind")
    read = metric(survivor[1], "bind_pods_read_total")
    cluster.report(f"leader killed with {boundBefore}/{PODS} pods bound; Lease acquired by the survivor "
                   f"{acquired - killedAt:.2f} s after the kill (seen leading after {sawLeading:.2f} s; "
                   f"lease 3 s, renew 2 s, retry 0.5 s); all {PODS} bound {elapsed:.1f} s after the burst "
                   f"began; the survivor refused {refused:.0f} binds as follower; pods bound that the other replica "
                   f"had filtered: {readByLeader:.0f} by the first leader before the kill, {read:.0f} by the "
                   f"survivor; connections per replica "
                   f"{cluster.forwarder.connections}")
    # A follower may take over no earlier than a lease duration after it last saw a renewal,
    # which the leader wrote at most a retry period (with jitter) before it was killed.
    assert acquired - killedAt > 3 - 0.5 * 2.2 - 0.2, record
