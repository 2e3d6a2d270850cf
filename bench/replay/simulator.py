#!/usr/bin/env python3
"""Runs the FGD paper's own simulator on a pod list and prints its GPU allocation next to
`fleetsched replay`'s for the same trace, policy and seeds.

The published table (`replay/published_allocation.csv`) covers only the traces it was measured
on. For any other pod list -- the variants `variants.py` builds, a trace of your own -- this
script asks the reference itself: kubernetes-scheduler-simulator (hkust-adsl, the artifact of
Weng et al., ATC '23), built from its vendored sources at a pinned commit, driven the way its
`experiments/run_scripts` drive it (cluster config with `workloadTuningConfig` ratio 1.3 and the
seed, shuffled pods, typical pods at 95 %; scheduler config with one score plugin at weight 1000
and Open-Gpu-Share selecting GPUs), and read the way its `merge_alloc_discrete.py` reads a log
(mean allocation over the `[Alloc]` lines whose arrived workload rounds to 100 % and 130 % of
capacity). On `default`, seed 42, FGD this gives 95.14 / 95.29, the published seed-42 values.

Not part of any test run: one simulator experiment takes 15-35 minutes on two cores.

    # clone and build the simulator once (needs git and Go), then FGD on one variant, 2 seeds
    python3 bench/replay/simulator.py --sim build/simulator --trace variants/s1/openb_pod_list_gpushare80.csv \\
        --policy fgd --seeds 42,43 --fleetsched build/cmd/fleetsched/fleetsched \\
        --nodes ../shared/data/openb/openb_node_list_gpu_node.csv

The simulator's data folder holds more pod lists than the five in `../shared/data/openb`; this
script uses only its node list and the pod list you give it.
"""
import argparse
import csv
import concurrent.futures
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

SIMULATOR_URL = "https://github.com/hkust-adsl/kubernetes-scheduler-simulator"
SIMULATOR_COMMIT = "8f3d6417353c5083c6d56617f255fadd8dc306bc"  # 2024-07-31
NODE_YAML = "data/node_yaml/openb_node_list_gpu_node.yaml"

# replay's policy name -> the simulator's score plugin and the GPU selection its run scripts pair
# with it (generate_config_and_run.py: the plugins with their own GPU choice select GPUs,
# the others use "best").
POLICIES = {
    "random": ("RandomScore", "best"),
    "dotprod": ("DotProductScore", "DotProductScore"),
    "clustering": ("GpuClusteringScore", "best"),
    "packing": ("GpuPackingScore", "best"),
    "bestfit": ("BestFitScore", "best"),
    "fgd": ("FGDScore", "FGDScore"),
}
ALL_SCORES = ["RandomScore", "DotProductScore", "GpuClusteringScore", "GpuPackingScore", "BestFitScore",
              "FGDScore", "ImageLocality", "NodeAffinity", "PodTopologySpread", "TaintToleration",
              "NodeResourcesBalancedAllocation", "InterPodAffinity", "NodeResourcesLeastAllocated",
              "NodePreferAvoidPods"]
ALLOC_LINE = re.compile(r"\[Alloc\]; .*Used GPU Milli: (\d+); Total GPUs: (\d+); Arrived GPU Milli: (\d+)")


def ensure_simulator(sim):
    binary = os.path.join(sim, "bin", "simon")
    if os.path.exists(binary):
        return binary
    if not os.path.isdir(sim):
        subprocess.run(["git", "clone", "--quiet", SIMULATOR_URL, sim], check=True)
        subprocess.run(["git", "-C", sim, "checkout", "--quiet", SIMULATOR_COMMIT], check=True)
    print(f"building the simulator in {sim} (about a minute)", file=sys.stderr)
    subprocess.run(["go", "build", "-mod=vendor", "-o", "bin/simon", "./cmd"], cwd=sim, check=True)
    return binary


def quote(s):
    return "'" + s.replace("'", "''") + "'"


def pod_yaml(row):
    """One pod as the simulator's data/pod_csv_to_yaml.py writes it (the fields it reads)."""
    gpus = int(row["num_gpu"])
    lines = ["apiVersion: v1", "kind: Pod", "metadata:"]
    if gpus != 0:
        milli = min(max(int(float(row["gpu_milli"] or 0)), 0), 1000)
        lines.append("  annotations:")
        lines.append(f"    alibabacloud.com/gpu-count: '{gpus}'")
        lines.append(f"    alibabacloud.com/gpu-milli: '{milli}'")
        spec = "|".join(x for x in (row.get("gpu_spec") or "").split("|") if x and x != "nan")
        if spec:
            lines.append(f"    alibabacloud.com/gpu-card-model: {quote(spec)}")
    lines += [f"  name: {quote(row['name'])}", "  namespace: paib-gpu", "spec:", "  containers:",
              "  - image: tensorflow:latest", "    imagePullPolicy: Always", "    name: main", "    resources:"]
    for part in ("limits", "requests"):
        lines += [f"      {part}:", f"        cpu: {int(float(row['cpu_milli']))}m",
                  f"        memory: {int(float(row['memory_mib']))}Mi"]
    lines += ["  dnsPolicy: Default", "  restartPolicy: OnFailure"]
    return "\n".join(lines) + "\n"


def write_inputs(sim, trace, folder):
    os.makedirs(folder, exist_ok=True)
    shutil.copyfile(os.path.join(sim, NODE_YAML), os.path.join(folder, "openb_node_list_gpu_node.yaml"))
    with open(trace, newline="") as f:
        rows = list(csv.DictReader(f))
    with open(os.path.join(folder, "pods.yaml"), "w") as out:
        out.write("\n---\n\n".join(pod_yaml(r) for r in rows))
    return len(rows)


def cluster_config(inputs, seed, tune):
    return f"""apiVersion: simon/v1alpha1
kind: Config
metadata:
  name: simon-openb-config
spec:
  cluster:
    customConfig: {inputs}
  customConfig:
    shufflePod: true
    descheduleConfig:
      ratio: 0.0
    workloadInflationConfig:
      ratio: 1
      seed: 233
    workloadTuningConfig:
      ratio: {tune}
      seed: {seed}
    typicalPodsConfig:
      isInvolvedCpuPods: true
      podPopularityThreshold: 95
      podIncreaseStep: 1
      gpuResWeight: 0
"""


def scheduler_config(policy):
    score, gpusel = POLICIES[policy]
    disabled = "\n".join(f"        - name: {s}" for s in ALL_SCORES)
    prescore = "        enabled:\n        - name: RandomScore" if score == "RandomScore" else ""
    return f"""apiVersion: kubescheduler.config.k8s.io/v1beta1
kind: KubeSchedulerConfiguration
percentageOfNodesToScore: 100
profiles:
  - schedulerName: simon-scheduler
    plugins:
      filter:
        enabled:
        - name: Open-Gpu-Share
      preScore:
        disabled:
        - name: RandomScore
{prescore}
      score:
        disabled:
{disabled}
        enabled:
        - name: {score}
          weight: 1000
      reserve:
        enabled:
        - name: Open-Gpu-Share
      bind:
        disabled:
        - name: DefaultBinder
        enabled:
        - name: Simon
    pluginConfig:
    - name: {score}
      args:
        dimExtMethod: share
        normMethod: max
    - name: Open-Gpu-Share
      args:
        gpuSelMethod: {gpusel}
        dimExtMethod: share
        normMethod: max
"""


def allocation(log):
    """(alloc@100, alloc@130) from a simulator log, as merge_alloc_discrete.py computes them."""
    rows = []
    with open(log, errors="replace") as f:
        for line in f:
            m = ALLOC_LINE.search(line)
            if m:
                used, total, arrived = (int(x) for x in m.groups())
                rows.append((round(arrived / total / 10), round(used / total / 10, 2)))
    out = []
    for point in (100, 130):
        vals = [a for r, a in rows if r == point] or [a for r, a in rows if point - 1 <= r <= point + 1]
        out.append(round(statistics.fmean(vals), 2) if vals else float("nan"))
    return tuple(out)


def run_simulator(binary, sim, inputs, policy, seed, tune, workdir):
    tag = f"{policy}-{seed}"
    cc = os.path.join(workdir, f"cc-{tag}.yaml")
    sc = os.path.join(workdir, f"sc-{tag}.yaml")
    log = os.path.join(workdir, f"log-{tag}.log")
    with open(cc, "w") as f:
        f.write(cluster_config(os.path.abspath(inputs), seed, tune))
    with open(sc, "w") as f:
        f.write(scheduler_config(policy))
    with open(log, "w") as out:
        rc = subprocess.run([os.path.abspath(binary), "apply", "--extended-resources", "gpu", "-f",
                             os.path.abspath(cc), "--default-scheduler-config", os.path.abspath(sc)],
                            cwd=sim, stdout=out, stderr=subprocess.STDOUT).returncode
    if rc != 0:
        raise RuntimeError(f"simulator exited {rc}; see {log}")
    return allocation(log)


def run_replay(fleetsched, nodes, trace, policy, seeds, tune, workdir):
    out = os.path.join(workdir, "replay")
    subprocess.run([fleetsched, "replay", "--traces", trace, "--policies", policy, "--seeds",
                    ",".join(str(s) for s in seeds), "--tune-ratio", str(tune), "-o", out, "--no-plot",
                    "--no-progress", "--nodes", nodes],
                   check=True, stdout=subprocess.DEVNULL)
    result = {}
    with open(os.path.join(out, "runs.csv"), newline="") as f:
        for r in csv.DictReader(f):
            result[int(r["seed"])] = (float(r["alloc_100"]), float(r["alloc_130"]))
    return result


def parse_seeds(text):
    seeds = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        seeds += range(int(lo), int(hi or lo) + 1)
    return seeds


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sim", required=True, help="simulator checkout (cloned at the pinned commit and built if missing)")
    ap.add_argument("--trace", required=True, help="pod list CSV (the openb columns)")
    ap.add_argument("--policy", default="fgd", choices=sorted(POLICIES))
    ap.add_argument("--seeds", default="42", help="e.g. 42-44 or 42,45")
    ap.add_argument("--tune-ratio", type=float, default=1.3)
    ap.add_argument("--fleetsched", help="fleetsched binary: also replay the same experiments")
    ap.add_argument("--nodes", help="node list CSV for the replay (the one the simulator's node YAML was made from)")
    ap.add_argument("-j", "--jobs", type=int, default=1, help="simulator runs at once")
    ap.add_argument("--work", help="folder for inputs and logs (default: a temporary one, kept)")
    args = ap.parse_args()
    if args.fleetsched and not args.nodes:
        ap.error("--fleetsched needs --nodes")

    binary = ensure_simulator(args.sim)
    seeds = parse_seeds(args.seeds)
    work = args.work or tempfile.mkdtemp(prefix="simulator-")
    os.makedirs(work, exist_ok=True)
    inputs = os.path.join(work, "inputs")
    pods = write_inputs(args.sim, args.trace, inputs)
    print(f"{args.trace}: {pods} pods; simulator logs in {work}", file=sys.stderr)

    ours = {}
    if args.fleetsched:
        ours = run_replay(args.fleetsched, args.nodes, args.trace, args.policy, seeds, args.tune_ratio, work)

    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = {s: pool.submit(run_simulator, binary, args.sim, inputs, args.policy, s, args.tune_ratio, work)
                   for s in seeds}
        theirs = {s: f.result() for s, f in futures.items()}

    print("seed  simulator @100 @130" + ("   replay @100 @130" if ours else ""))
    for s in seeds:
        line = f"{s:4d}  {theirs[s][0]:9.2f} {theirs[s][1]:6.2f}"
        if s in ours:
            line += f"   {ours[s][0]:9.2f} {ours[s][1]:6.2f}"
        print(line)
    mean = lambda d, i: statistics.fmean(v[i] for v in d.values())
    line = f"mean  {mean(theirs, 0):9.2f} {mean(theirs, 1):6.2f}"
    if ours:
        line += f"   {mean(ours, 0):9.2f} {mean(ours, 1):6.2f}"
    print(line)


if __name__ == "__main__":
    main()
