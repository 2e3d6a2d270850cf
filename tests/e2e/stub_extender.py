#!/usr/bin/env python3
"""Stand-in extender that accepts every node: proves the control plane calls an
extender at all, independently of fleetsched (FLEETSCHED_E2E_EXTENDER=stub).

Speaks extender v1 with nodeCacheCapable: true (NodeNames in, NodeNames out).
GET /calls returns how many filter/prioritize calls it served, so a test can
check that kube-scheduler really went through the extender. A pod annotated
e2e.fleetsched.io/stub-reject: REASON has every node rejected with REASON, to
check how extender reasons reach the pod's PodScheduled condition.
"""

import argparse
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

calls = {"filter": 0, "prioritize": 0}
lock = threading.Lock()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--listen", default="127.0.0.1:8888")
    parser.add_argument("--url-prefix", default="")
    args = parser.parse_args()
    host, port = args.listen.rsplit(":", 1)
    prefix = args.url_prefix.rstrip("/")

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def reply(self, code: int, body: object) -> None:
            raw = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def do_GET(self) -> None:
            if self.path in ("/healthz", "/readyz"):
                self.reply(200, "ok")
            elif self.path == "/calls":
                with lock:
                    self.reply(200, dict(calls))
            else:
                self.reply(404, {"Error": "not found"})

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
            names = body.get("NodeNames") or []
            if self.path == prefix + "/filter":
                with lock:
                    calls["filter"] += 1
                annotations = ((body.get("Pod") or {}).get("metadata") or {}).get("annotations") or {}
                reject = annotations.get("e2e.fleetsched.io/stub-reject")
                if reject:
                    self.reply(200, {"NodeNames": [], "FailedNodes": {n: reject for n in names},
                                     "FailedAndUnresolvableNodes": {}, "Error": ""})
                    return
                self.reply(200, {"NodeNames": names, "FailedNodes": {},
                                 "FailedAndUnresolvableNodes": {}, "Error": ""})
            elif self.path == prefix + "/prioritize":
                with lock:
                    calls["prioritize"] += 1
                self.reply(200, [{"Host": n, "Score": 0} for n in names])
            else:
                self.reply(404, {"Error": "unknown verb " + self.path})

        def log_message(self, fmt: str, *a) -> None:  # one line per request is noise
            pass

    ThreadingHTTPServer((host, int(port)), Handler).serve_forever()


if __name__ == "__main__":
    main()
