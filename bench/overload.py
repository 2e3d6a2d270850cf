#!/usr/bin/env python3
"""Overload probe for `fleetsched serve` (issue 26): memory and other callers' latency while
clients misbehave. Starts serve on a corpus, runs one scenario, prints one JSON line.

  stuck   N connections pipeline filter requests and never read a byte of the replies; a
          well-behaved client meanwhile sends one NodeNames filter every 50 ms. Reports the
          server's VmRSS before, at the peak while they hold on, and after they leave, the
          buffered-bytes gauge (fleetsched_http_buffered_bytes, when the build has it) at the
          same moments, and the well-behaved client's latencies.
  big     one client sends a large full-Nodes filter while another sends NodeNames filters back
          to back; reports the big request's status and time, and the small requests' longest
          latency (how long the big one stalled them). The big request is sent and its answer
          read by a process of its own: from the prober's process, building and reading 60 MB
          held Python's GIL and stalled the prober by itself (up to 50 ms at once).

The corpus: fleetsched gen-fleet -o DIR -n 5000 --bound-pods 20000 --requests 8 --full-mode-nodes N
(requests-full.ndjson bodies of N nodes; 5,000 nodes make ~60 MB bodies).

  bench/overload.py --bin build/cmd/fleetsched/fleetsched --corpus DIR stuck --conns 80 --depth 32 --mode full
  bench/overload.py --bin build/cmd/fleetsched/fleetsched --corpus DIR big
Extra serve flags after `--`, e.g. `-- --max-buffered-bytes 268435456`.
"""
import argparse
import json
import multiprocessing
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1


def gauge(port, name="fleetsched_http_buffered_bytes"):
    try:
        text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
    except Exception:
        return None
    for line in text.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            return float(line.rsplit(" ", 1)[1])
    return None


def request(body, path="/filter"):
    return (f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode() + body


def read_response(sock, buf):
    """One response from sock (buf: bytes already read); returns (status, rest) or (0, b"")."""
    while b"\r\n\r\n" not in buf:
        chunk = sock.recv(1 << 20)
        if not chunk:
            return 0, b""
        buf += chunk
    head, _, rest = buf.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    length = 0
    for line in head.split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        if k.strip().lower() == b"content-length":
            length = int(v)
    rest = bytearray(rest)  # appending to bytes copied the whole answer per read: 60 MB, quadratic
    while len(rest) < length:
        chunk = sock.recv(1 << 20)
        if not chunk:
            return 0, b""
        rest += chunk
    return status, bytes(rest[length:])


class Prober(threading.Thread):
    """Sends one request at a time on one keep-alive connection, records each latency."""

    def __init__(self, port, body, pause):
        super().__init__(daemon=True)
        self.port, self.body, self.pause = port, body, pause
        self.latencies, self.failures, self.stop = [], 0, False

    def run(self):
        s = socket.create_connection(("127.0.0.1", self.port))
        s.settimeout(60)
        buf = b""
        while not self.stop:
            t0 = time.monotonic()
            try:
                s.sendall(request(self.body))
                status, buf = read_response(s, buf)
            except OSError:
                status = 0
            if status != 200:
                self.failures += 1
                s.close()
                s = socket.create_connection(("127.0.0.1", self.port))
                s.settimeout(60)
                buf = b""
            else:
                self.latencies.append(time.monotonic() - t0)
            if self.pause:
                time.sleep(self.pause)
        s.close()


def summary(lat):
    if not lat:
        return {}
    lat = sorted(lat)
    return {"n": len(lat), "p50Ms": round(1e3 * lat[len(lat) // 2], 2),
            "p99Ms": round(1e3 * lat[min(len(lat) - 1, int(len(lat) * 0.99))], 2),
            "maxMs": round(1e3 * lat[-1], 2)}


def stuck(args, pid, port, names, full):
    body = full[0] if args.mode == "full" else names[0]
    out = {"scenario": "stuck", "conns": args.conns, "depth": args.depth, "mode": args.mode,
           "bodyBytes": len(body), "rssBeforeKiB": rss_kib(pid), "gaugeBefore": gauge(port)}
    prober = Prober(port, names[1 % len(names)], 0.05)
    prober.start()
    one = memoryview(request(body))
    socks = []
    pending = []  # per connection: [requests left to send, offset into the current one]
    for _ in range(args.conns):
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # the client never reads
        s.connect(("127.0.0.1", port))
        s.setblocking(False)
        socks.append(s)
        pending.append([args.depth, 0])
    peak_rss, peak_gauge = 0, 0.0
    deadline = time.monotonic() + args.hold
    while time.monotonic() < deadline:
        for i, s in enumerate(socks):
            left = pending[i]
            try:
                while left[0] > 0:
                    left[1] += s.send(one[left[1]:])
                    if left[1] == len(one):
                        left[0], left[1] = left[0] - 1, 0
            except (BlockingIOError, OSError):
                pass
        peak_rss = max(peak_rss, rss_kib(pid))
        g = gauge(port)
        if g is not None:
            peak_gauge = max(peak_gauge, g)
        time.sleep(0.2)
    out["requestsNotSent"] = sum(p[0] for p in pending)
    out["rssPeakKiB"], out["gaugePeak"] = peak_rss, peak_gauge
    out["proberWhileStuck"] = summary(prober.latencies)
    out["proberFailures"] = prober.failures
    for s in socks:
        s.close()
    time.sleep(args.settle)
    prober.stop = True
    prober.join(timeout=30)
    out["rssAfterKiB"], out["gaugeAfter"] = rss_kib(pid), gauge(port)
    out["connectionsAfter"] = gauge(port, "fleetsched_http_connections")
    return out


def send_big(port, req, result):
    """The big request, from a process of its own: (status, ms) into `result`."""
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(120)
    t0 = time.monotonic()
    s.sendall(req)
    status, _ = read_response(s, b"")
    result.send((status, round(1e3 * (time.monotonic() - t0), 1)))
    s.close()


def big(args, pid, port, names, full):
    body = full[0]
    out = {"scenario": "big", "bodyBytes": len(body), "rssBeforeKiB": rss_kib(pid)}
    req = request(body)
    prober = Prober(port, names[0], 0)
    prober.start()
    time.sleep(1.0)
    warm = len(prober.latencies)
    peak = [0]
    done = threading.Event()

    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], rss_kib(pid))
            time.sleep(0.02)
    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    ctx = multiprocessing.get_context("fork")
    result, child_end = ctx.Pipe(duplex=False)
    sender = ctx.Process(target=send_big, args=(port, req, child_end))
    sender.start()
    out["bigStatus"], out["bigMs"] = result.recv() if result.poll(180) else (0, None)
    sender.join()
    time.sleep(1.0)
    done.set()
    prober.stop = True
    prober.join(timeout=30)
    out["rssPeakKiB"], out["rssAfterKiB"] = peak[0], rss_kib(pid)
    out["smallBefore"] = summary(prober.latencies[:warm])
    out["smallDuringAndAfter"] = summary(prober.latencies[warm:])
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--port", type=int, default=18895)
    sub = ap.add_subparsers(dest="scenario", required=True)
    st = sub.add_parser("stuck")
    st.add_argument("--conns", type=int, default=80)
    st.add_argument("--depth", type=int, default=32)
    st.add_argument("--mode", choices=["nodenames", "full"], default="full")
    st.add_argument("--hold", type=float, default=10, help="seconds the stuck clients stay")
    st.add_argument("--settle", type=float, default=3, help="seconds after they leave")
    sub.add_parser("big")
    ap.add_argument("serve_args", nargs="*")
    args = ap.parse_args()
    names = [l.encode() for l in open(os.path.join(args.corpus, "requests-nodenames.ndjson")).read().splitlines() if l]
    full = [l.encode() for l in open(os.path.join(args.corpus, "requests-full.ndjson")).read().splitlines()[:1] if l]
    cmd = [args.bin, "serve", "--listen", f"127.0.0.1:{args.port}", "--nodes", os.path.join(args.corpus, "nodes.json"),
           "--pods", os.path.join(args.corpus, "bound-pods.json")] + args.serve_args
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(300):
            try:
                if urllib.request.urlopen(f"http://127.0.0.1:{args.port}/readyz", timeout=1).status == 200:
                    break
            except Exception:
                time.sleep(0.1)
        run = stuck if args.scenario == "stuck" else big
        out = run(args, proc.pid, args.port, names, full)
        out["serveArgs"] = args.serve_args
        out["serverAlive"] = proc.poll() is None
        print(json.dumps(out))
    finally:
        proc.terminate()
        proc.wait()


if __name__ == "__main__":
    sys.exit(main())
