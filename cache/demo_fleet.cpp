#include "cache/demo_fleet.h"

#include <string_view>

namespace fleetsched::cache {

namespace {

struct Pool {
  const char* name;
  const char* instance;
  const char* product;     // empty: no GPU
  const char* family;
  int computeMajor;
  int computeMinor;
  int gpuMemoryMiB;
  int gpus;
  int cpus;
  int memoryGiB;
  int maxPods;
  int nodes;
  bool karpenter;          // capacity label family
  const char* capacities;  // per node, cycled: s = spot, o = on-demand, r = reserved
};

constexpr Pool kPools[] = {
    {"a100", "p4de.24xlarge", "NVIDIA-A100-SXM4-80GB", "ampere", 8, 0, 81920, 8, 96, 1152, 737, 6, false, "o"},
    {"h100", "p5.48xlarge", "NVIDIA-H100-80GB-HBM3", "hopper", 9, 0, 81559, 8, 192, 2048, 737, 6, false, "ooor"},
    {"a10g", "g5.12xlarge", "NVIDIA-A10G", "ampere", 8, 6, 23028, 4, 48, 192, 234, 9, true, "so"},
    {"l4", "g6.12xlarge", "NVIDIA-L4", "ada-lovelace", 8, 9, 23034, 4, 48, 192, 234, 9, true, "sso"},
    {"t4", "g4dn.xlarge", "Tesla-T4", "turing", 7, 5, 15360, 1, 4, 16, 29, 6, true, "so"},
    {"cpu", "m6i.4xlarge", "", "", 0, 0, 0, 0, 16, 64, 234, 12, true, "so"},
};

constexpr const char* kRegion = "us-west-2";
constexpr const char* kZones[] = {"us-west-2a", "us-west-2b", "us-west-2c"};

class FleetBuilder {
 public:
  explicit FleetBuilder(DemoFleet& fleet) : fleet_(fleet) {}

  std::string_view keep(std::string s) { return fleet_.storage.emplace_back(std::move(s)); }
  void label(codec::Node& n, std::string_view key, std::string value) { n.labels.push_back({key, keep(std::move(value))}); }

  void build() {
    int serial = 0;
    for (const Pool& pool : kPools) {
      for (int i = 0; i < pool.nodes; ++i, ++serial) addNode(pool, i, serial);
    }
  }

 private:
  void addNode(const Pool& pool, int i, int serial) {
    const int zone = i % 3;
    codec::Node n;
    // EKS-style private DNS names; the last octets are derived from the serial number.
    n.name = keep("ip-10-0-" + std::to_string(32 * zone + serial / 8) + "-" + std::to_string(10 + serial) +
                  ".us-west-2.compute.internal");
    n.uid = keep("00000000-0000-4000-8000-" + std::string(12 - std::to_string(serial).size(), '0') +
                 std::to_string(serial));
    n.resourceVersion = keep(std::to_string(1000 + serial));

    label(n, "kubernetes.io/arch", "amd64");
    label(n, "kubernetes.io/os", "linux");
    label(n, "kubernetes.io/hostname", std::string(n.name));
    label(n, "node.kubernetes.io/instance-type", pool.instance);
    label(n, "topology.kubernetes.io/region", kRegion);
    label(n, "topology.kubernetes.io/zone", kZones[zone]);
    label(n, "topology.k8s.aws/zone-id", std::string("usw2-az") + std::to_string(zone + 1));
    const std::string_view caps(pool.capacities);
    const char cap = caps[static_cast<size_t>(i) % caps.size()];
    if (pool.karpenter) {
      label(n, "karpenter.sh/nodepool", pool.name);
      label(n, "karpenter.sh/capacity-type", cap == 's' ? "spot" : cap == 'r' ? "reserved" : "on-demand");
    } else {
      label(n, "eks.amazonaws.com/nodegroup", std::string(pool.name) + "-ng");
      label(n, "eks.amazonaws.com/capacityType", cap == 's' ? "SPOT" : cap == 'r' ? "CAPACITY_BLOCK" : "ON_DEMAND");
    }
    if (pool.gpus > 0) {
      label(n, "nvidia.com/gpu.present", "true");
      label(n, "nvidia.com/gpu.product", pool.product);
      label(n, "nvidia.com/gpu.memory", std::to_string(pool.gpuMemoryMiB));
      label(n, "nvidia.com/gpu.count", std::to_string(pool.gpus));
      label(n, "nvidia.com/gpu.family", pool.family);
      label(n, "nvidia.com/gpu.compute.major", std::to_string(pool.computeMajor));
      label(n, "nvidia.com/gpu.compute.minor", std::to_string(pool.computeMinor));
      label(n, "nvidia.com/gpu.machine", pool.instance);
      label(n, "nvidia.com/gpu.replicas", "1");
      label(n, "nvidia.com/gpu.sharing-strategy", "none");
      label(n, "nvidia.com/gpu.mode", "compute");
      label(n, "nvidia.com/mig.capable", pool.computeMajor >= 8 && pool.gpuMemoryMiB > 40000 ? "true" : "false");
      label(n, "nvidia.com/cuda.driver-version.full", "550.90.07");
      label(n, "nvidia.com/cuda.driver-version.major", "550");
      label(n, "nvidia.com/cuda.runtime-version.full", "12.4");
      label(n, "nvidia.com/gfd.timestamp", "1767225600");
    }

    const int64_t gib = int64_t{1} << 30;
    n.capacity.milliCpu = int64_t{pool.cpus} * 1000;
    n.capacity.memory = int64_t{pool.memoryGiB} * gib;
    n.capacity.pods = pool.maxPods;
    n.capacity.ephemeralStorage = 200 * gib;
    // Allocatable as EKS computes it: system and kube reservations come off cpu and memory.
    n.allocatable.milliCpu = n.capacity.milliCpu - 80 - 10 * pool.cpus;
    n.allocatable.memory = n.capacity.memory - (pool.memoryGiB / 16 + 1) * gib;
    n.allocatable.pods = pool.maxPods;
    n.allocatable.ephemeralStorage = 190 * gib;
    if (pool.gpus > 0) {
      n.capacity.scalar.push_back({"nvidia.com/gpu", pool.gpus});
      n.allocatable.scalar.push_back({"nvidia.com/gpu", pool.gpus});
    }
    fleet_.nodes.push_back(std::move(n));
  }

  DemoFleet& fleet_;
};

void appendQuoted(std::string& out, std::string_view s) {
  out += '"';
  out += s;  // demo strings need no escaping
  out += '"';
}

void appendMap(std::string& out, const std::vector<codec::KeyValue>& kvs) {
  out += '{';
  for (size_t i = 0; i < kvs.size(); ++i) {
    if (i != 0) out += ',';
    appendQuoted(out, kvs[i].key);
    out += ':';
    appendQuoted(out, kvs[i].value);
  }
  out += '}';
}

void appendResources(std::string& out, const codec::Resources& r) {
  out += "{\"cpu\":\"" + std::to_string(r.milliCpu) + "m\"";
  out += ",\"memory\":\"" + std::to_string(r.memory / 1024) + "Ki\"";
  out += ",\"ephemeral-storage\":\"" + std::to_string(r.ephemeralStorage / 1024) + "Ki\"";
  out += ",\"pods\":\"" + std::to_string(r.pods) + "\"";
  for (const auto& s : r.scalar) {
    out += ',';
    appendQuoted(out, s.name);
    out += ":\"" + std::to_string(s.value) + "\"";
  }
  out += '}';
}

}  // namespace

const DemoFleet& demoFleet() {
  static const DemoFleet fleet = [] {
    DemoFleet f;
    FleetBuilder(f).build();
    return f;
  }();
  return fleet;
}

std::string demoFleetJson() {
  std::string out = R"({"apiVersion":"v1","kind":"List","metadata":{"resourceVersion":""},"items":[)";
  bool first = true;
  for (const auto& n : demoFleet().nodes) {
    if (!first) out += ',';
    first = false;
    out += R"({"apiVersion":"v1","kind":"Node","metadata":{"name":)";
    appendQuoted(out, n.name);
    out += ",\"uid\":";
    appendQuoted(out, n.uid);
    out += ",\"resourceVersion\":";
    appendQuoted(out, n.resourceVersion);
    out += ",\"labels\":";
    appendMap(out, n.labels);
    out += R"(},"spec":{},"status":{"capacity":)";
    appendResources(out, n.capacity);
    out += ",\"allocatable\":";
    appendResources(out, n.allocatable);
    out += "}}";
  }
  out += "]}\n";
  return out;
}

}  // namespace fleetsched::cache
