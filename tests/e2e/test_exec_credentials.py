"""fleetsched with a kubeconfig whose user is an exec credential plugin
(client.authentication.k8s.io/v1 ExecCredential), as EKS, GKE and AKS kubeconfigs are,
against the e2e kube-apiserver. The stub plugin answers a wrong token first: the API
server refuses the lists with 401, fleetsched runs the plugin again, gets the right token
and syncs. Only kube-apiserver of the binder cluster is used; this fleetsched serves no
scheduler."""

import json
import os
import subprocess
import sys
import time
import urllib.request

import pytest
import yaml

from cluster import SOURCE_ROOT, freePort, httpGetOk, waitFor
from fleet import FLEET

pytestmark = pytest.mark.fleetsched

# Counts its runs in <state>/runs, keeps the KUBERNETES_EXEC_INFO it was given, answers with
# a token nobody accepts on the first run and with <state>/token afterwards.
PLUGIN = """\
import datetime, json, os, pathlib, sys
state = pathlib.Path(sys.argv[1])
runs = int((state / "runs").read_text()) + 1 if (state / "runs").exists() else 1
(state / "runs").write_text(str(runs))
(state / f"info-{runs}").write_text(os.environ.get("KUBERNETES_EXEC_INFO", ""))
token = "not-a-valid-token" if runs == 1 else (state / "token").read_text()
expiry = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=1)
print(json.dumps({"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
                  "status": {"token": token, "expirationTimestamp": expiry.strftime("%Y-%m-%dT%H:%M:%SZ")}}))
"""


def test_exec_plugin_credentials_list_and_watch_after_a_401(binderCluster, tmp_path):
    plane = binderCluster.plane
    (tmp_path / "plugin.py").write_text(PLUGIN)
    (tmp_path / "token").write_text(plane.token)
    config = yaml.safe_load(plane.kubeconfig.read_text())
    config["users"] = [{"name": "admin", "user": {"exec": {
        "apiVersion": "client.authentication.k8s.io/v1", "command": sys.executable,
        "args": [str(tmp_path / "plugin.py"), str(tmp_path)], "interactiveMode": "Never",
        "provideClusterInfo": True, "installHint": "the e2e stub plugin"}}}]
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(yaml.safe_dump(config))

    binary = os.environ.get("FLEETSCHED_BIN", str(SOURCE_ROOT / "build" / "cmd" / "fleetsched" / "fleetsched"))
    port = freePort()
    log = open(tmp_path / "fleetsched.log", "wb")
    proc = subprocess.Popen([binary, "serve", "--listen", f"127.0.0.1:{port}", "--kubeconfig", str(kubeconfig),
                             "--audit-interval", "0", "--enable-debug-handlers"],
                            stdout=log, stderr=subprocess.STDOUT)
    started = time.monotonic()
    try:
        def ready():
            assert proc.poll() is None, (tmp_path / "fleetsched.log").read_text()
            return httpGetOk(f"http://127.0.0.1:{port}/readyz")
        waitFor("fleetsched with exec credentials to be ready", ready, timeout=30)
        binderCluster.report(f"exec credentials: ready after a 401 and a second plugin run in "
                             f"{time.monotonic() - started:.1f} s")
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/debug/nodes", timeout=5) as resp:
            listed = {line.split("\t")[0] for line in resp.read().decode().splitlines()[1:]}
        assert listed == {s.name for s in FLEET}
        assert int((tmp_path / "runs").read_text()) == 2, "the plugin should run at start and once after the 401"
        info = json.loads((tmp_path / "info-1").read_text())
        assert info["kind"] == "ExecCredential" and info["spec"]["interactive"] is False
        assert info["spec"]["cluster"]["server"] == config["clusters"][0]["cluster"]["server"]
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()
