#!/usr/bin/env python3
"""Summarises bench/scheduler-perf.sh's runs: stock against Fleetsched (plugin) and the extender.

Reads upstream scheduler_perf's JSON data items under DATA_DIR (one folder per run, named
<round>-<case>-<workload>) and prints, per workload, SchedulingThroughput average and p50 of the
stock case (X) and each variant beside it (the plugin's X_Fleetsched, X_Fleetsched<variant>; the
extender's X_Extender, X_Extender<variant>), each the median over rounds; the median of the
rounds' variant ÷ stock ratios (the ratio the project quotes), every round's ratio,
kube-scheduler's scheduling attempt duration (for the extender it includes the HTTP calls;
scheduler_framework_extension_point_duration_seconds does not), the time
kube-scheduler measured in Fleetsched's own extension points
(scheduler_plugin_execution_duration_seconds, sampled in 10 % of cycles), and for the extender
what fleetsched's own /metrics (fleetsched-metrics.txt in the run's folder) counted: calls per
verb, their mean latency inside fleetsched, and its CPU time.

Usage: bench/scheduler_perf_table.py DATA_DIR
"""
import json
import re
import statistics
import sys
from collections import defaultdict
from pathlib import Path

# variant suffix → configuration, in the order the tables list them
CONFIGS = (("_Fleetsched", "plugin"), ("_Extender", "extender"))
POINTS = ("PreFilter", "Filter", "PreScore", "Score", "Reserve", "Bind")
VERBS = ("filter", "prioritize", "bind")
SAMPLE = re.compile(r'^(\w+)(?:\{([^}]*)\})? (\S+)$')


def fleetschedMetrics(path: Path) -> dict:
    """{(name, label value or ""): value} of a Prometheus text file."""
    out = {}
    for line in path.read_text().splitlines():
        m = SAMPLE.match(line)
        if m:
            label = (m.group(2) or "").partition("=")[2].strip('"')
            out[(m.group(1), label)] = float(m.group(3))
    return out


def load(dataDir: Path):
    """{(case, workload): {round: {"throughput": data, "attempt": data, "plugin": {point: data},
    "fleetsched": {(name, label): value}}}}"""
    runs = defaultdict(dict)
    for folder in sorted(p for p in dataDir.iterdir() if p.is_dir()):
        round_, case, workload = folder.name.split("-", 2)
        round_ = int(round_)
        metricsFile = folder / "fleetsched-metrics.txt"
        if metricsFile.exists():
            runs[(case, workload)].setdefault(round_, {"plugin": {}})["fleetsched"] = \
                fleetschedMetrics(metricsFile)
        for f in sorted(folder.glob("BenchmarkPerfScheduling_*.json")):
            for item in json.loads(f.read_text()).get("dataItems", []):
                labels, data = item.get("labels", {}), item.get("data") or {}
                parts = labels.get("Name", "").split("/")
                if len(parts) < 3:
                    continue
                run = runs[(parts[1], parts[2])].setdefault(round_, {"plugin": {}})
                metric = labels.get("Metric")
                if metric == "SchedulingThroughput":
                    run["throughput"] = data
                elif metric == "scheduler_scheduling_attempt_duration_seconds" \
                        and labels.get("result") == "scheduled":
                    run["attempt"] = data
                elif metric == "scheduler_plugin_execution_duration_seconds" \
                        and labels.get("plugin") == "Fleetsched":
                    run["plugin"][labels.get("extension_point")] = data
    return runs


def configOf(case: str):
    """(stock case, configuration) of a variant case; None for a stock case."""
    for suffix, name in CONFIGS:
        if suffix in case:
            return case[:case.index(suffix)], name
    return None


def median(runs: dict, pick) -> float | None:
    values = [v for v in (pick(r) for r in runs.values()) if v is not None]
    return statistics.median(values) if values else None


def fmt(v, digits=1) -> str:
    return "—" if v is None else f"{v:.{digits}f}"


def ratio(a, b) -> str:
    return "—" if a is None or not b else f"{a / b:.3f}"


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    runs = load(Path(sys.argv[1]))
    order = {name: i for i, (_, name) in enumerate(CONFIGS)}
    # (stock case, workload, configuration, variant case) for every variant beside a stock run
    rows = sorted(((c[0], w, c[1], case) for case, w in runs
                   if (c := configOf(case)) and (c[0], w) in runs),
                  key=lambda r: (r[0], r[1], order[r[2]], r[3]))
    if not rows:
        print("scheduler_perf_table: no stock run beside a Fleetsched or extender run",
              file=sys.stderr)
        return 1

    def tp(key):
        return lambda r: r.get("throughput", {}).get(key)

    def pairs(s, f, key):
        """The variant ÷ stock ratio of every round that ran both: a round's runs follow each
        other, so a ratio leaves out the machine's drift from round to round."""
        out = []
        for r in sorted(set(s) & set(f)):
            a, b = tp(key)(s[r]), tp(key)(f[r])
            if a and b is not None:
                out.append(b / a)
        return out

    def paired(values) -> str:
        if not values:
            return "—"
        below = sum(v < 1 for v in values)
        return f"{statistics.median(values):.3f} ({below}/{len(values)} < 1)"

    print("SchedulingThroughput, pods/s: median over rounds; ÷ stock is the median of the rounds' "
          "ratios (how many were below 1)\n")
    print("| workload | configuration | case | rounds | stock avg | avg | ÷ stock "
          "| stock p50 | p50 | ÷ stock |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for case, workload, config, vcase in rows:
        s, f = runs[(case, workload)], runs[(vcase, workload)]
        sa, fa = median(s, tp("Average")), median(f, tp("Average"))
        s5, f5 = median(s, tp("Perc50")), median(f, tp("Perc50"))
        print(f"| {case}/{workload} | {config} | {vcase} | {min(len(s), len(f))} | {fmt(sa)} "
              f"| {fmt(fa)} | {paired(pairs(s, f, 'Average'))} | {fmt(s5)} | {fmt(f5)} "
              f"| {paired(pairs(s, f, 'Perc50'))} |")

    print("\nPer round (average pods/s): stock / variant = ratio")
    for case, workload, config, vcase in rows:
        s, f = runs[(case, workload)], runs[(vcase, workload)]
        cells = []
        for r in sorted(set(s) | set(f)):
            a, b = tp("Average")(s.get(r, {})), tp("Average")(f.get(r, {}))
            cells.append(f"r{r} {fmt(a)} / {fmt(b)} = {ratio(b, a)}")
        print(f"  {vcase}/{workload}: " + "; ".join(cells))

    print("\nScheduling attempt (scheduled), ms average: stock / variant; the plugin's own time "
          "per call, ms average (sampled)")
    for case, workload, config, vcase in rows:
        s, f = runs[(case, workload)], runs[(vcase, workload)]
        att = lambda r: r.get("attempt", {}).get("Average")
        line = f"  {vcase}/{workload}: attempt {fmt(median(s, att), 2)} / {fmt(median(f, att), 2)}"
        if config == "plugin":
            line += "; " + ", ".join(
                f"{p} {fmt(median(f, lambda r, p=p: r['plugin'].get(p, {}).get('Average')), 3)}"
                for p in POINTS)
        print(line)

    ext = [(vcase, workload) for _, workload, config, vcase in rows if config == "extender"]
    if ext:
        print("\nThe extender as fleetsched counted it (median over rounds): calls per verb "
              "(all pods, init included), mean ms inside fleetsched, its CPU seconds")
        for vcase, workload in ext:
            f = runs[(vcase, workload)]

            def m(name, label=""):
                return lambda r: r.get("fleetsched", {}).get((name, label))

            cells = []
            for verb in VERBS:
                n = median(f, m("fleetsched_http_requests_total", verb))
                total = median(f, m("fleetsched_http_request_duration_seconds_sum", verb))
                mean = None if not n or total is None else total / n * 1000
                cells.append(f"{verb} {fmt(n, 0)} × {fmt(mean, 3)} ms")
            cpu = median(f, m("fleetsched_process_cpu_seconds"))
            print(f"  {vcase}/{workload}: " + ", ".join(cells) + f"; CPU {fmt(cpu, 2)} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
