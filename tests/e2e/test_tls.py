"""The verbs over HTTPS with client certificates (issue 26, defect 1): fleetsched serves
`--tls-cert-file --tls-private-key-file --client-ca-file`, kube-scheduler v1.36 calls it with
`enableHTTPS: true` and a `tlsConfig` carrying its client certificate, and fleetsched binds a GPU
pod through that channel. A client without the certificate cannot reach /bind: plain HTTP gets
a 400, HTTPS without a client certificate fails its handshake, and the pod it names stays
unbound. The certificates are made here with the openssl CLI (a CA, fleetsched's serving
certificate for localhost and 127.0.0.1, kube-scheduler's client certificate)."""

import http.client
import json
import os
import shutil
import socket
import ssl
import subprocess
from pathlib import Path

import pytest

from cluster import ExtenderTls, waitFor
from conftest import _extenderChoice, _runCluster, isBound, newWorkdir
from fleet import pod

pytestmark = pytest.mark.fleetsched

TOLERANT = {"fleetsched.io/spot-tolerant": "true"}


def makePki(folder: Path) -> dict[str, Path]:
    """A CA and two leaves it signs, as PEM files in `folder` (EC P-256, valid one day)."""
    folder.mkdir(parents=True, exist_ok=True)

    def run(*args: str) -> None:
        subprocess.run(["openssl", *args], check=True, cwd=folder, capture_output=True)

    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
    run("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.crt", "-days", "1",
        "-subj", "/CN=fleetsched e2e CA",
        "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    leaves = {
        "server": ("/CN=fleetsched", "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n"),
        "client": ("/CN=kube-scheduler", "extendedKeyUsage=clientAuth\n"),
    }
    for name, (subject, ext) in leaves.items():
        (folder / f"{name}.ext").write_text("basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\n" + ext)
        run("req", *ec, "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", subject)
        run("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
            "-out", f"{name}.crt", "-days", "1", "-extfile", f"{name}.ext")
    return {n: folder / n for n in ("ca.crt", "server.crt", "server.key", "client.crt", "client.key")}


@pytest.fixture(scope="module")
def tlsCluster():
    """The binder cluster's setup, with the verbs over HTTPS and client certificates required
    (probes and /metrics on a plain --probe-listen port)."""
    if os.environ.get("FLEETSCHED_E2E_EXTENDER") == "stub":
        pytest.skip("TLS scenarios need fleetsched")
    if shutil.which("openssl") is None:
        pytest.skip("the openssl CLI makes the certificates (scripts/bootstrap.sh installs it)")
    workdir = newWorkdir("tls")
    pki = makePki(workdir / "tls")
    extender = _extenderChoice("watch")
    extender.argv += ["--bind", "--probe-listen", "127.0.0.1:{probePort}",
                      "--tls-cert-file", str(pki["server.crt"]), "--tls-private-key-file", str(pki["server.key"]),
                      "--client-ca-file", str(pki["ca.crt"])]
    extender.tls = ExtenderTls(str(pki["client.crt"]), str(pki["client.key"]), str(pki["ca.crt"]),
                               serverName="localhost")
    for cluster in _runCluster("watch", extender, binder=True, workdir=workdir, label="tls"):
        cluster.pki = pki
        yield cluster


@pytest.fixture
def tlsNamespace(tlsCluster, request):
    name = f"tls-{request.node.name.lower().replace('_', '-')[:40]}"
    tlsCluster.kube.createNamespace(name)
    yield name
    tlsCluster.kube.deletePodsNow(name)


def bindBody(p: dict, node: str) -> bytes:
    return json.dumps({"PodName": p["metadata"]["name"], "PodNamespace": p["metadata"]["namespace"],
                       "PodUID": p["metadata"]["uid"], "Node": node}).encode()


def test_tls_extender_binds_a_gpu_pod_and_refuses_clients_without_a_certificate(tlsCluster, tlsNamespace):
    cluster, ns, pki = tlsCluster, tlsNamespace, tlsCluster.pki
    port = cluster.plane.extender.port
    log = cluster.plane.extenderProcess.logTail(50)
    assert "serving on https://" in log and "client certificates required" in log, log

    # kube-scheduler, over HTTPS with its client certificate: filter, prioritize, bind.
    cluster.kube.createPod(ns, pod("tls-gpu", 2, annotations=TOLERANT))
    waitFor("tls-gpu bound", lambda: isBound(cluster.kube.getPod(ns, "tls-gpu")), timeout=60,
            watch=cluster.plane.processes)
    bound = cluster.kube.getPod(ns, "tls-gpu")
    # fleetsched's binder posted the Binding: the default binder leaves no GPU indexes.
    assert "fleetsched.io/gpu-index" in bound["metadata"]["annotations"], bound["metadata"]
    assert cluster.metric("http_requests_total", verb="filter") >= 1
    assert cluster.metric("http_requests_total", verb="bind") >= 1

    # A pod nobody schedules (no such scheduler), its UID readable to anyone who lists pods.
    victim = pod("tls-victim", 1, annotations=TOLERANT)
    victim["spec"]["schedulerName"] = "nobody"
    victim = cluster.kube.createPod(ns, victim)
    node = bound["spec"]["nodeName"]
    filterBody = json.dumps({"Pod": victim, "Nodes": None, "NodeNames": [node]}).encode()
    handshakesBefore = cluster.metric("http_errors_total", kind="tls_handshake")

    # 1. Plain HTTP to the verbs port: a 400 in plain text, no verb runs.
    for verb, body in (("filter", filterBody), ("bind", bindBody(victim, node))):
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        c.request("POST", f"/scheduler/{verb}", body=body, headers={"Content-Type": "application/json"})
        r = c.getresponse()
        assert r.status == 400, (verb, r.status)
        assert b"HTTP request to an HTTPS server" in r.read()
        c.close()

    # 2. HTTPS that trusts fleetsched's CA but has no client certificate: the handshake fails.
    for verb, body in (("filter", filterBody), ("bind", bindBody(victim, node))):
        ctx = ssl.create_default_context(cafile=str(pki["ca.crt"]))
        c = http.client.HTTPSConnection("localhost", port, context=ctx, timeout=5)
        with pytest.raises((ssl.SSLError, ConnectionError, http.client.RemoteDisconnected, socket.timeout)):
            c.request("POST", f"/scheduler/{verb}", body=body, headers={"Content-Type": "application/json"})
            c.getresponse().read()
        c.close()
    assert cluster.metric("http_errors_total", kind="tls_handshake") >= handshakesBefore + 2

    # 3. The same client with kube-scheduler's certificate is served (the negative results above
    #    are the missing certificate, not a broken endpoint).
    ctx = ssl.create_default_context(cafile=str(pki["ca.crt"]))
    ctx.load_cert_chain(str(pki["client.crt"]), str(pki["client.key"]))
    c = http.client.HTTPSConnection("localhost", port, context=ctx, timeout=5)
    c.request("POST", "/scheduler/prioritize", body=filterBody, headers={"Content-Type": "application/json"})
    r = c.getresponse()
    assert r.status == 200, r.status
    r.read()
    c.close()

    victimNow = cluster.kube.getPod(ns, "tls-victim")
    assert not isBound(victimNow), victimNow["spec"]
    assert not victimNow["metadata"].get("annotations", {}).get("fleetsched.io/gpu-index")
