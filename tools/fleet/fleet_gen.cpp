#include "tools/fleet/fleet_gen.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <ctime>

namespace fleetsched::tools::fleet {

namespace {

// splitmix64: tiny, fast, and identical on every platform (std distributions are not).
class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed) {}
  uint64_t next() {
    uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  uint64_t below(uint64_t n) { return n ? next() % n : 0; }
  int64_t range(int64_t lo, int64_t hi) { return lo + static_cast<int64_t>(below(static_cast<uint64_t>(hi - lo + 1))); }
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  bool chance(double p) { return unit() < p; }
  std::string hex(size_t n) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string s(n, '0');
    uint64_t bits = 0;
    for (size_t i = 0; i < n; ++i) {
      if (i % 16 == 0) bits = next();
      s[i] = kHex[bits & 0xf];
      bits >>= 4;
    }
    return s;
  }
  std::string alnum(size_t n) {  // the alphabet of generateName suffixes
    static constexpr char kChars[] = "bcdfghjklmnpqrstvwxz2456789";
    std::string s(n, 'b');
    for (auto& c : s) c = kChars[below(sizeof(kChars) - 1)];
    return s;
  }
  std::string uid() {
    std::string h = hex(32);
    h[12] = '4';
    return h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" + h.substr(16, 4) + "-" +
           h.substr(20, 12);
  }

 private:
  uint64_t s_;
};

// FNV-1a: std::hash is not specified to be stable across standard libraries.
uint64_t hashName(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
  return h;
}

uint64_t mix(uint64_t a, uint64_t b, uint64_t c = 0) {
  Rng r(a * 0x9E3779B97F4A7C15ull ^ (b + 0x632BE59BD9B4E019ull) ^ (c * 0xD1B54A32D192ED03ull));
  return r.next();
}

// Fixed epoch so output does not depend on the clock: 2026-11-02T08:00:00Z.
constexpr int64_t kEpoch = 1793606400;

std::string timestamp(int64_t unixSeconds) {
  std::time_t t = static_cast<std::time_t>(unixSeconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

constexpr std::array<GpuModel, 6> kGpuModels = {{
    {"A100-40GB", "NVIDIA-A100-SXM4-40GB", "ampere", 40960, 8, 0, true},
    {"A100-80GB", "NVIDIA-A100-SXM4-80GB", "ampere", 81920, 8, 0, true},
    {"H100", "NVIDIA-H100-80GB-HBM3", "hopper", 81559, 9, 0, true},
    {"L4", "NVIDIA-L4", "ada-lovelace", 23034, 8, 9, false},
    {"T4", "Tesla-T4", "turing", 15360, 7, 5, false},
    {"A10G", "NVIDIA-A10G", "ampere", 23028, 8, 6, false},
}};
enum GpuIndex { kA100_40, kA100_80, kH100, kL4, kT4, kA10G, kNoGpu = -1 };

struct Shape {
  std::string_view instanceType;
  int vcpu;
  int memoryGi;
  int gpu;  // GpuIndex
  int gpuCount;
  int maxPods;  // EKS max-pods with the VPC CNI
  int efa;      // vpc.amazonaws.com/efa
  double weight;
  double spotProbability;
};

constexpr std::array<Shape, 10> kGpuShapes = {{
    {"p4d.24xlarge", 96, 1152, kA100_40, 8, 737, 4, 8, 0.10},
    {"p4de.24xlarge", 96, 1152, kA100_80, 8, 737, 4, 4, 0.05},
    {"p5.48xlarge", 192, 2048, kH100, 8, 100, 32, 6, 0.05},
    {"g6.12xlarge", 48, 192, kL4, 4, 234, 0, 8, 0.35},
    {"g6.xlarge", 4, 16, kL4, 1, 58, 0, 6, 0.45},
    {"g5.12xlarge", 48, 192, kA10G, 4, 234, 0, 8, 0.35},
    {"g5.xlarge", 4, 16, kA10G, 1, 58, 0, 6, 0.45},
    {"g5.48xlarge", 192, 768, kA10G, 8, 345, 0, 2, 0.20},
    {"g4dn.xlarge", 4, 16, kT4, 1, 29, 0, 8, 0.50},
    {"g4dn.12xlarge", 48, 192, kT4, 4, 234, 0, 4, 0.40},
}};

constexpr std::array<Shape, 6> kCpuShapes = {{
    {"m6i.2xlarge", 8, 32, kNoGpu, 0, 58, 0, 6, 0.3},
    {"m6i.4xlarge", 16, 64, kNoGpu, 0, 234, 0, 8, 0.3},
    {"m6i.8xlarge", 32, 128, kNoGpu, 0, 234, 0, 4, 0.3},
    {"c6i.4xlarge", 16, 32, kNoGpu, 0, 234, 0, 4, 0.4},
    {"r6i.4xlarge", 16, 128, kNoGpu, 0, 234, 0, 3, 0.3},
    {"m7i.8xlarge", 32, 128, kNoGpu, 0, 234, 0, 2, 0.3},
}};

template <size_t N>
const Shape& pickShape(const std::array<Shape, N>& shapes, Rng& rng) {
  double total = 0;
  for (const auto& s : shapes) total += s.weight;
  double x = rng.unit() * total;
  for (const auto& s : shapes) {
    if (x < s.weight) return s;
    x -= s.weight;
  }
  return shapes.back();
}

const Shape* findShape(std::string_view instanceType) {
  for (const auto& s : kGpuShapes)
    if (s.instanceType == instanceType) return &s;
  for (const auto& s : kCpuShapes)
    if (s.instanceType == instanceType) return &s;
  return nullptr;
}

// EKS bootstrap's kube-reserved CPU: 6% of the first core, 1% of the second, 0.5% of the next
// two, 0.25% of the rest.
int64_t reservedMilliCpu(int vcpu) {
  double m = 60;
  if (vcpu > 1) m += 10;
  if (vcpu > 2) m += 5.0 * std::min(vcpu - 2, 2);
  if (vcpu > 4) m += 2.5 * (vcpu - 4);
  return static_cast<int64_t>(m);
}

// Container images as kubelet lists them; digests are derived from (seed, image) so one image
// has the same digest on every node, as in a real fleet.
struct ImageSpec {
  std::string_view repo;
  std::string_view tag;
  int64_t sizeMb;
  bool gpuOnly;
};

constexpr ImageSpec kImages[] = {
    {"registry.fleet.example/eks/pause", "3.5", 1, false},
    {"registry.fleet.example/amazon-k8s-cni", "v1.18.3-eksbuild.1", 40, false},
    {"registry.fleet.example/amazon-k8s-cni-init", "v1.18.3-eksbuild.1", 62, false},
    {"registry.fleet.example/amazon/aws-network-policy-agent", "v1.1.2-eksbuild.1", 32, false},
    {"registry.fleet.example/eks/kube-proxy", "v1.30.0-minimal-eksbuild.3", 36, false},
    {"registry.fleet.example/eks/coredns", "v1.11.1-eksbuild.9", 18, false},
    {"registry.fleet.example/eks/aws-ebs-csi-driver", "v1.32.0", 110, false},
    {"registry.fleet.example/eks/csi-node-driver-registrar", "v2.11.0-eks-1-30-8", 9, false},
    {"registry.fleet.example/eks/livenessprobe", "v2.13.0-eks-1-30-8", 8, false},
    {"registry.fleet.example/eks/eks-pod-identity-agent", "0.1.10", 12, false},
    {"public.fleet.example/aws-observability/aws-for-fluent-bit", "2.32.2.20240516", 110, false},
    {"public.fleet.example/cloudwatch-agent/cloudwatch-agent", "1.300040.0b650", 78, false},
    {"quay.fleet.example/prometheus/node-exporter", "v1.8.1", 11, false},
    {"registry.fleet.example/nfd/node-feature-discovery", "v0.15.4", 78, false},
    {"registry.fleet.example/datadog/agent", "7.54.1", 420, false},
    {"registry.fleet.example/istio/proxyv2", "1.22.1", 95, false},
    {"registry.fleet.example/platform/vector", "0.39.0-distroless-libc", 60, false},
    {"registry.fleet.example/platform/otel-collector-contrib", "0.103.1", 80, false},
    {"registry.fleet.example/web/checkout-api", "2024.06.18-7f3c1e2", 230, false},
    {"registry.fleet.example/web/search-frontend", "2024.06.17-a91b0d4", 180, false},
    {"registry.fleet.example/data/spark", "3.5.1-scala2.12-java17-python3-ubuntu", 980, false},
    {"registry.fleet.example/data/airflow", "2.9.2-python3.11", 640, false},
    {"registry.fleet.example/data/flink", "1.19.1-scala_2.12-java17", 520, false},
    {"registry.fleet.example/library/redis", "7.2.5-alpine", 16, false},
    {"registry.fleet.example/library/nginx", "1.27.0-alpine", 20, false},
    {"registry.fleet.example/library/python", "3.11.9-slim-bookworm", 46, false},
    {"registry.fleet.example/library/busybox", "1.36.1", 2, false},
    {"registry.fleet.example/karpenter/controller", "0.37.0", 48, false},
    {"registry.fleet.example/kyverno/kyverno", "v1.12.4", 60, false},
    {"registry.fleet.example/cert-manager/cert-manager-controller", "v1.15.1", 20, false},
    {"registry.fleet.example/nvidia/k8s-device-plugin", "v0.15.0-ubi8", 160, true},
    {"registry.fleet.example/nvidia/gpu-feature-discovery", "v0.15.0-ubi8", 150, true},
    {"registry.fleet.example/nvidia/k8s/dcgm-exporter", "3.3.6-3.4.2-ubuntu22.04", 380, true},
    {"registry.fleet.example/nvidia/cloud-native/gpu-operator-validator", "v24.3.0", 120, true},
    {"registry.fleet.example/nvidia/k8s/container-toolkit", "v1.15.0-ubuntu20.04", 140, true},
    {"registry.fleet.example/nvidia/cloud-native/k8s-driver-manager", "v0.6.8-ubi8", 250, true},
    {"registry.fleet.example/nvidia/gpu-operator", "v24.3.0", 210, true},
    {"registry.fleet.example/nvidia/pytorch", "24.05-py3", 9800, true},
    {"registry.fleet.example/nvidia/pytorch", "24.03-py3", 9600, true},
    {"registry.fleet.example/nvidia/tritonserver", "24.05-py3", 7600, true},
    {"registry.fleet.example/nvidia/tritonserver", "24.05-trtllm-python-py3", 11200, true},
    {"registry.fleet.example/nvidia/nemo", "24.05.01", 18700, true},
    {"registry.fleet.example/nvidia/cuda", "12.4.1-cudnn-runtime-ubuntu22.04", 1900, true},
    {"registry.fleet.example/nvidia/cuda", "12.4.1-base-ubuntu22.04", 90, true},
    {"registry.fleet.example/nvidia/tensorflow", "24.05-tf2-py3", 8100, true},
    {"registry.fleet.example/vllm/vllm-openai", "v0.5.0.post1", 5100, true},
    {"registry.fleet.example/huggingface/text-generation-inference", "2.0.4", 4700, true},
    {"registry.fleet.example/ml/llm-pretrain", "2024.06.14-run-0412-3a9cf01", 14200, true},
    {"registry.fleet.example/ml/llm-pretrain", "2024.06.07-run-0399-b71e2c4", 14100, true},
    {"registry.fleet.example/ml/finetune-lora", "v3.8.2-cu124-torch2.3.1", 12200, true},
    {"registry.fleet.example/ml/embedding-server", "v1.14.0-cu121", 6300, true},
    {"registry.fleet.example/ml/ranking-inference", "2024.06.11-5d2e7aa", 5800, true},
    {"registry.fleet.example/ml/asr-whisper", "large-v3-2024.05.30", 7000, true},
    {"registry.fleet.example/ml/diffusion-xl", "1.0.3-trt10", 9900, true},
    {"registry.fleet.example/ml/feature-extractor", "v7.2.1-cuda12.2", 4100, true},
    {"registry.fleet.example/ml/eval-harness", "0.4.2-cu121", 8400, true},
    {"registry.fleet.example/ml/jupyter-gpu", "2024.06-cuda12.4-pytorch", 11800, true},
    {"registry.fleet.example/ml/ray-ml", "2.24.0-py311-gpu", 10400, true},
    {"registry.fleet.example/ml/deepspeed", "0.14.2-cu121-torch2.3", 12800, true},
    {"registry.fleet.example/ml/megatron-lm", "core_r0.7.0-24.05", 17100, true},
    {"registry.fleet.example/ml/nccl-tests", "2.13.9-cuda12.4", 1800, true},
    {"registry.fleet.example/ml/video-transcode", "6.1-nvenc-cuda12", 2400, true},
};
constexpr size_t kImageCount = sizeof(kImages) / sizeof(kImages[0]);
constexpr size_t kBaseImages = 6;     // every node runs the first kBaseImages (system daemons)
constexpr size_t kFirstGpuImage = 30;  // kImages[30..32]: device plugin, GFD, DCGM exporter
constexpr size_t kGpuStackEnd = 33;

struct Image {
  int64_t sizeBytes;
  JsonValue value;
};

// `generation` > 0 names an older build of the same image (nodes keep a few until kubelet's
// image GC removes them), which is what makes CPU-only nodes with few workloads large too.
Image imageObject(uint64_t seed, size_t idx, size_t generation, const ImageSpec& image) {
  Rng digestRng(mix(seed, idx, 0x1a6e + generation * 0x10000));
  std::string digest = digestRng.hex(64);
  JsonValue names = JsonValue::array();
  names.push(std::string(image.repo) + "@sha256:" + digest);
  std::string tag(image.tag);
  if (generation > 0) tag += "-prev" + std::to_string(generation);
  names.push(std::string(image.repo) + ":" + tag);
  int64_t bytes = image.sizeMb * 1024 * 1024 + static_cast<int64_t>(digestRng.below(1 << 20));
  return {bytes, JsonValue::object().set("names", std::move(names)).setInt("sizeBytes", bytes)};
}

std::string zoneName(const FleetOptions& o, int z) { return o.region + static_cast<char>('a' + z); }

// us-west-2 → usw2: the AZ-id prefix.
std::string zoneIdPrefix(const std::string& region) {
  std::string out;
  size_t i = 0;
  while (i < region.size()) {
    size_t dash = region.find('-', i);
    std::string_view part(region.data() + i, (dash == std::string::npos ? region.size() : dash) - i);
    if (!part.empty()) out += std::isdigit(static_cast<unsigned char>(part[0])) ? part : part.substr(0, 1);
    if (dash == std::string::npos) break;
    i = dash + 1;
  }
  return out;
}

JsonValue quantityMap(std::initializer_list<std::pair<std::string, std::string>> kvs) {
  JsonValue m = JsonValue::map();
  for (const auto& [k, v] : kvs) m.set(k, v);
  return m;
}

// managedFields' FieldsV1 for a set of label keys: {"f:metadata":{"f:labels":{"f:k":{}}}}.
JsonValue labelFields(const std::vector<std::string>& keys) {
  JsonValue labels = JsonValue::map();
  labels.set(".", JsonValue::object());
  for (const auto& k : keys) labels.set("f:" + k, JsonValue::object());
  return JsonValue::object().set("f:metadata", JsonValue::object().set("f:labels", std::move(labels)));
}

JsonValue managedEntry(std::string_view manager, std::string_view operation, const std::string& time,
                       JsonValue fields, std::string_view subresource = {}) {
  JsonValue e = JsonValue::object();
  e.set("manager", manager).set("operation", operation).set("apiVersion", "v1").set("time", time);
  e.set("fieldsType", "FieldsV1").set("fieldsV1", std::move(fields));
  if (!subresource.empty()) e.set("subresource", subresource);
  return e;
}

JsonValue condition(std::string_view type, std::string_view status, const std::string& heartbeat,
                    const std::string& transition, std::string_view reason, std::string_view message) {
  return JsonValue::object()
      .set("type", type)
      .set("status", status)
      .set("lastHeartbeatTime", heartbeat)
      .set("lastTransitionTime", transition)
      .set("reason", reason)
      .set("message", message);
}

// Node Feature Discovery labels every node carries; GPU nodes add the PCI vendor label.
constexpr std::string_view kNfdCpuFlags[] = {
    "ADX", "AESNI", "AVX", "AVX2", "AVX512BW", "AVX512CD", "AVX512DQ", "AVX512F", "AVX512VL", "FMA3",
    "HYPERVISOR", "SHA",
};

}  // namespace

FleetGenerator::FleetGenerator(FleetOptions options) : options_(std::move(options)) {
  if (options_.zones < 1) options_.zones = 1;
  if (options_.maxNodeBytes < options_.minNodeBytes) options_.maxNodeBytes = options_.minNodeBytes;
  summaries_.resize(options_.nodes);
  // An affine bijection on 24 bits gives every node a distinct 10.x.y.z address.
  const uint64_t offset = mix(options_.seed, 0, 0x1f) & 0xffffff;
  for (size_t i = 0; i < options_.nodes; ++i) {
    Rng rng(mix(options_.seed, i, 1));
    NodeSummary& n = summaries_[i];
    uint64_t ip = (i * 0x9E3779ull + offset) & 0xffffff;
    n.name = "ip-10-" + std::to_string(ip >> 16) + "-" + std::to_string((ip >> 8) & 0xff) + "-" +
             std::to_string(ip & 0xff) + "." + options_.region + ".compute.internal";
    const bool cpuOnly = rng.chance(options_.cpuOnlyFraction);
    const Shape& shape = cpuOnly ? pickShape(kCpuShapes, rng) : pickShape(kGpuShapes, rng);
    n.instanceType = shape.instanceType;
    n.zone = zoneName(options_, static_cast<int>(rng.below(static_cast<uint64_t>(options_.zones))));
    n.capacityType = rng.chance(shape.spotProbability) ? CapacityType::kSpot : CapacityType::kOnDemand;
    n.gpu = shape.gpu >= 0 ? &kGpuModels[static_cast<size_t>(shape.gpu)] : nullptr;
    n.gpuCount = shape.gpuCount;
    n.allocatableMilliCpu = shape.vcpu * 1000 - reservedMilliCpu(shape.vcpu);
    n.maxPods = shape.maxPods;
    const int64_t capacityKi = static_cast<int64_t>(shape.memoryGi) * 1024 * 1024 * 97 / 100;
    const int64_t reservedMi = 255 + 11 * shape.maxPods + 100;
    n.allocatableMemory = (capacityKi - reservedMi * 1024) * 1024;
    n.karpenter = rng.chance(0.4);
    n.gpuTainted = n.gpu != nullptr && rng.chance(0.5);
    n.unschedulable = rng.chance(0.005);
    n.ready = !rng.chance(0.003);
  }
}

JsonValue FleetGenerator::nodeObject(size_t i, bool withTypeMeta) const {
  const NodeSummary& n = summaries_[i];
  const Shape& shape = *findShape(n.instanceType);
  const FleetOptions& o = options_;
  Rng rng(mix(o.seed, i, 2));
  const bool spot = n.capacityType == CapacityType::kSpot;
  const int zoneIdx = n.zone.back() - 'a';
  const std::string ip = [&] {
    std::string s = n.name.substr(3, n.name.find('.') - 3);
    std::replace(s.begin(), s.end(), '-', '.');
    return s;
  }();
  const std::string instanceId = "i-0" + rng.hex(16);
  const int64_t created = kEpoch - static_cast<int64_t>(rng.below(90 * 86400));
  const std::string createdTs = timestamp(created);
  const std::string heartbeat = timestamp(kEpoch - static_cast<int64_t>(rng.below(40)));
  const std::string nodegroup = std::string(n.gpu ? "gpu-" : "cpu-") +
                                std::string(n.instanceType.substr(0, n.instanceType.find('.'))) +
                                (spot ? "-spot" : "-od");

  // Labels.
  JsonValue labels = JsonValue::map();
  std::vector<std::string> nfdKeys;
  std::vector<std::string> gfdKeys;
  auto label = [&](std::vector<std::string>* owner, std::string key, std::string value) {
    if (owner) owner->push_back(key);
    labels.set(std::move(key), std::move(value));
  };
  const std::string it(n.instanceType);
  label(nullptr, "beta.kubernetes.io/arch", "amd64");
  label(nullptr, "beta.kubernetes.io/instance-type", it);
  label(nullptr, "beta.kubernetes.io/os", "linux");
  label(nullptr, "failure-domain.beta.kubernetes.io/region", o.region);
  label(nullptr, "failure-domain.beta.kubernetes.io/zone", n.zone);
  label(nullptr, "k8s.io/cloud-provider-aws", rng.hex(32));
  label(nullptr, "kubernetes.io/arch", "amd64");
  label(nullptr, "kubernetes.io/hostname", n.name);
  label(nullptr, "kubernetes.io/os", "linux");
  label(nullptr, "node.kubernetes.io/instance-type", it);
  label(nullptr, "topology.ebs.csi.aws.com/zone", n.zone);
  label(nullptr, "topology.k8s.aws/zone-id", zoneIdPrefix(o.region) + "-az" + std::to_string(zoneIdx + 1));
  label(nullptr, "topology.kubernetes.io/region", o.region);
  label(nullptr, "topology.kubernetes.io/zone", n.zone);
  label(nullptr, "team.fleet.example/cost-center", n.gpu ? "ml-platform" : "platform");
  if (n.karpenter) {
    label(nullptr, "karpenter.sh/capacity-type", spot ? "spot" : "on-demand");
    label(nullptr, "karpenter.sh/initialized", "true");
    label(nullptr, "karpenter.sh/nodepool", nodegroup);
    label(nullptr, "karpenter.sh/registered", "true");
    label(nullptr, "karpenter.k8s.aws/ec2nodeclass", n.gpu ? "gpu-al2" : "default");
    label(nullptr, "karpenter.k8s.aws/instance-category", it.substr(0, 1));
    label(nullptr, "karpenter.k8s.aws/instance-cpu", std::to_string(shape.vcpu));
    label(nullptr, "karpenter.k8s.aws/instance-family", it.substr(0, it.find('.')));
    label(nullptr, "karpenter.k8s.aws/instance-generation", std::string(1, it[it.find_first_of("0123456789")]));
    label(nullptr, "karpenter.k8s.aws/instance-hypervisor", "nitro");
    label(nullptr, "karpenter.k8s.aws/instance-memory", std::to_string(shape.memoryGi * 1024));
    label(nullptr, "karpenter.k8s.aws/instance-size", it.substr(it.find('.') + 1));
    if (n.gpu) {
      label(nullptr, "karpenter.k8s.aws/instance-gpu-count", std::to_string(n.gpuCount));
      label(nullptr, "karpenter.k8s.aws/instance-gpu-manufacturer", "nvidia");
      label(nullptr, "karpenter.k8s.aws/instance-gpu-memory", std::to_string(n.gpu->memoryMb));
    }
  } else {
    label(nullptr, "eks.amazonaws.com/capacityType", spot ? "SPOT" : "ON_DEMAND");
    label(nullptr, "eks.amazonaws.com/nodegroup", nodegroup);
    label(nullptr, "eks.amazonaws.com/nodegroup-image", "ami-0" + rng.hex(16));
    label(nullptr, "eks.amazonaws.com/sourceLaunchTemplateId", "lt-0" + rng.hex(16));
    label(nullptr, "eks.amazonaws.com/sourceLaunchTemplateVersion", std::to_string(rng.range(1, 14)));
  }
  label(&nfdKeys, "feature.node.kubernetes.io/cpu-cpuid.X86_64_V4", "true");
  for (auto flag : kNfdCpuFlags) {
    label(&nfdKeys, "feature.node.kubernetes.io/cpu-cpuid." + std::string(flag), "true");
  }
  label(&nfdKeys, "feature.node.kubernetes.io/cpu-hardware_multithreading", "true");
  label(&nfdKeys, "feature.node.kubernetes.io/cpu-model.family", "6");
  label(&nfdKeys, "feature.node.kubernetes.io/cpu-model.id", n.gpu && n.gpu->computeMajor >= 9 ? "143" : "106");
  label(&nfdKeys, "feature.node.kubernetes.io/cpu-model.vendor_id", n.gpu && n.gpu->name == "T4" ? "Intel" : "AMD");
  label(&nfdKeys, "feature.node.kubernetes.io/kernel-config.NO_HZ", "true");
  label(&nfdKeys, "feature.node.kubernetes.io/kernel-version.full", "5.10.219-208.866.amzn2.x86_64");
  label(&nfdKeys, "feature.node.kubernetes.io/kernel-version.major", "5");
  label(&nfdKeys, "feature.node.kubernetes.io/kernel-version.minor", "10");
  label(&nfdKeys, "feature.node.kubernetes.io/kernel-version.revision", "219");
  label(&nfdKeys, "feature.node.kubernetes.io/pci-1d0f.present", "true");
  label(&nfdKeys, "feature.node.kubernetes.io/storage-nonrotationaldisk", "true");
  label(&nfdKeys, "feature.node.kubernetes.io/system-os_release.ID", "amzn");
  label(&nfdKeys, "feature.node.kubernetes.io/system-os_release.VERSION_ID", "2");
  label(&nfdKeys, "feature.node.kubernetes.io/system-os_release.VERSION_ID.major", "2");
  if (n.gpu) {
    const GpuModel& g = *n.gpu;
    label(&nfdKeys, "feature.node.kubernetes.io/pci-10de.present", "true");
    label(nullptr, std::string(kSeedGpuMemoryLabel), std::to_string(g.memoryMb));
    label(&gfdKeys, "nvidia.com/cuda.driver-version.full", "550.90.07");
    label(&gfdKeys, "nvidia.com/cuda.driver-version.major", "550");
    label(&gfdKeys, "nvidia.com/cuda.driver-version.minor", "90");
    label(&gfdKeys, "nvidia.com/cuda.driver-version.revision", "07");
    label(&gfdKeys, "nvidia.com/cuda.driver.major", "550");
    label(&gfdKeys, "nvidia.com/cuda.driver.minor", "90");
    label(&gfdKeys, "nvidia.com/cuda.driver.rev", "07");
    label(&gfdKeys, "nvidia.com/cuda.runtime-version.full", "12.4");
    label(&gfdKeys, "nvidia.com/cuda.runtime-version.major", "12");
    label(&gfdKeys, "nvidia.com/cuda.runtime-version.minor", "4");
    label(&gfdKeys, "nvidia.com/cuda.runtime.major", "12");
    label(&gfdKeys, "nvidia.com/cuda.runtime.minor", "4");
    label(&gfdKeys, "nvidia.com/gfd.timestamp", std::to_string(created + 240));
    label(&gfdKeys, "nvidia.com/gpu.compute.major", std::to_string(g.computeMajor));
    label(&gfdKeys, "nvidia.com/gpu.compute.minor", std::to_string(g.computeMinor));
    label(&gfdKeys, "nvidia.com/gpu.count", std::to_string(n.gpuCount));
    label(&gfdKeys, "nvidia.com/gpu.family", std::string(g.family));
    label(&gfdKeys, "nvidia.com/gpu.machine", it);
    label(&gfdKeys, "nvidia.com/gpu.memory", std::to_string(g.memoryMb));
    label(&gfdKeys, "nvidia.com/gpu.mode", "compute");
    label(&gfdKeys, "nvidia.com/gpu.present", "true");
    label(&gfdKeys, "nvidia.com/gpu.product", std::string(g.product));
    label(&gfdKeys, "nvidia.com/gpu.replicas", "1");
    label(&gfdKeys, "nvidia.com/gpu.sharing-strategy", "none");
    label(&gfdKeys, "nvidia.com/mig.capable", g.migCapable ? "true" : "false");
    label(&gfdKeys, "nvidia.com/mig.strategy", "single");
    label(&gfdKeys, "nvidia.com/mps.capable", "false");
  }

  // Annotations.
  JsonValue annotations = JsonValue::map();
  annotations.set("alpha.kubernetes.io/provided-node-ip", ip);
  annotations.set("csi.volume.kubernetes.io/nodeid", R"({"ebs.csi.aws.com":")" + instanceId + R"("})");
  std::string featureLabels;
  for (const auto& k : nfdKeys) {
    if (!featureLabels.empty()) featureLabels += ',';
    featureLabels += k.substr(std::string_view("feature.node.kubernetes.io/").size());
  }
  annotations.set("nfd.node.kubernetes.io/feature-labels", featureLabels);
  annotations.set("nfd.node.kubernetes.io/worker.version", "v0.15.4");
  annotations.set("node.alpha.kubernetes.io/ttl", "0");
  annotations.set("volumes.kubernetes.io/controller-managed-attach-detach", "true");
  if (n.karpenter) {
    annotations.set("karpenter.k8s.aws/ec2nodeclass-hash", std::to_string(rng.next() % 100000000000000000ull));
    annotations.set("karpenter.k8s.aws/ec2nodeclass-hash-version", "v2");
    annotations.set("karpenter.sh/nodepool-hash", std::to_string(rng.next() % 100000000000000000ull));
    annotations.set("karpenter.sh/nodepool-hash-version", "v2");
  }

  // managedFields: who wrote which labels, as the apiserver records it.
  JsonValue managed = JsonValue::array();
  {
    JsonValue kubeletMeta = JsonValue::object().set(
        "f:metadata",
        JsonValue::object()
            .set("f:annotations", JsonValue::map()
                                      .set(".", JsonValue::object())
                                      .set("f:alpha.kubernetes.io/provided-node-ip", JsonValue::object())
                                      .set("f:node.alpha.kubernetes.io/ttl", JsonValue::object())
                                      .set("f:volumes.kubernetes.io/controller-managed-attach-detach",
                                           JsonValue::object()))
            .set("f:labels", JsonValue::map()
                                 .set(".", JsonValue::object())
                                 .set("f:beta.kubernetes.io/arch", JsonValue::object())
                                 .set("f:beta.kubernetes.io/os", JsonValue::object())
                                 .set("f:kubernetes.io/arch", JsonValue::object())
                                 .set("f:kubernetes.io/hostname", JsonValue::object())
                                 .set("f:kubernetes.io/os", JsonValue::object())));
    managed.push(managedEntry("kubelet", "Update", createdTs, std::move(kubeletMeta)));
    JsonValue ccm = JsonValue::object().set(
        "f:spec", JsonValue::object().set("f:providerID", JsonValue::object()));
    managed.push(managedEntry("aws-cloud-controller-manager", "Update", createdTs, std::move(ccm)));
    managed.push(managedEntry("nfd-master", "Update", timestamp(created + 240), labelFields(nfdKeys)));
    if (n.gpu) managed.push(managedEntry("gpu-feature-discovery", "Update", timestamp(created + 300), labelFields(gfdKeys)));
    JsonValue status = JsonValue::object().set(
        "f:status",
        JsonValue::object()
            .set("f:allocatable", JsonValue::map().set(n.gpu ? "f:nvidia.com/gpu" : "f:pods", JsonValue::object()))
            .set("f:capacity", JsonValue::map().set(n.gpu ? "f:nvidia.com/gpu" : "f:pods", JsonValue::object()))
            .set("f:conditions", JsonValue::object()
                                     .set("k:{\"type\":\"DiskPressure\"}",
                                          JsonValue::object().set("f:lastHeartbeatTime", JsonValue::object()))
                                     .set("k:{\"type\":\"MemoryPressure\"}",
                                          JsonValue::object().set("f:lastHeartbeatTime", JsonValue::object()))
                                     .set("k:{\"type\":\"PIDPressure\"}",
                                          JsonValue::object().set("f:lastHeartbeatTime", JsonValue::object()))
                                     .set("k:{\"type\":\"Ready\"}",
                                          JsonValue::object()
                                              .set("f:lastHeartbeatTime", JsonValue::object())
                                              .set("f:lastTransitionTime", JsonValue::object())
                                              .set("f:message", JsonValue::object())
                                              .set("f:reason", JsonValue::object())
                                              .set("f:status", JsonValue::object())))
            .set("f:images", JsonValue::object())
            .set("f:nodeInfo", JsonValue::object().set("f:bootID", JsonValue::object())));
    managed.push(managedEntry("kubelet", "Update", heartbeat, std::move(status), "status"));
  }

  JsonValue meta = JsonValue::object();
  meta.set("name", n.name);
  meta.set("uid", rng.uid());
  meta.set("resourceVersion", std::to_string(1000000 + rng.below(900000000)));
  meta.set("creationTimestamp", createdTs);
  meta.set("labels", std::move(labels));
  meta.set("annotations", std::move(annotations));
  meta.set("managedFields", std::move(managed));

  JsonValue spec = JsonValue::object();
  spec.set("providerID", "aws:///" + n.zone + "/" + instanceId);
  if (n.unschedulable) spec.setBool("unschedulable", true);
  JsonValue taints = JsonValue::array();
  if (n.gpuTainted) {
    taints.push(JsonValue::object().set("key", "nvidia.com/gpu").set("value", "true").set("effect", "NoSchedule"));
  }
  if (n.unschedulable) {
    taints.push(JsonValue::object()
                    .set("key", "node.kubernetes.io/unschedulable")
                    .set("effect", "NoSchedule")
                    .set("timeAdded", timestamp(kEpoch - 3600)));
  }
  if (!n.ready) {
    taints.push(JsonValue::object()
                    .set("key", "node.kubernetes.io/not-ready")
                    .set("effect", "NoSchedule")
                    .set("timeAdded", timestamp(kEpoch - 120)));
  }
  if (taints.size()) spec.set("taints", std::move(taints));

  // Resources: capacity as kubelet reports it, allocatable after EKS reservations.
  const int64_t capacityKi = static_cast<int64_t>(shape.memoryGi) * 1024 * 1024 * 97 / 100;
  const bool bigDisk = n.gpu != nullptr && n.gpuCount >= 4;
  const int64_t diskKi = bigDisk ? 524275692 : 104845292;
  JsonValue capacity = quantityMap({{"cpu", std::to_string(shape.vcpu)},
                                    {"ephemeral-storage", std::to_string(diskKi) + "Ki"},
                                    {"hugepages-1Gi", "0"},
                                    {"hugepages-2Mi", "0"},
                                    {"memory", std::to_string(capacityKi) + "Ki"},
                                    {"pods", std::to_string(shape.maxPods)}});
  JsonValue allocatable = quantityMap({{"cpu", std::to_string(n.allocatableMilliCpu) + "m"},
                                       {"ephemeral-storage", std::to_string(diskKi * 1024 / 100 * 91 - 1073741824)},
                                       {"hugepages-1Gi", "0"},
                                       {"hugepages-2Mi", "0"},
                                       {"memory", std::to_string(n.allocatableMemory / 1024) + "Ki"},
                                       {"pods", std::to_string(shape.maxPods)}});
  if (n.gpu) {
    capacity.set("nvidia.com/gpu", std::to_string(n.gpuCount));
    allocatable.set("nvidia.com/gpu", std::to_string(n.gpuCount));
  }
  if (shape.efa) {
    capacity.set("vpc.amazonaws.com/efa", std::to_string(shape.efa));
    allocatable.set("vpc.amazonaws.com/efa", std::to_string(shape.efa));
  }

  const std::string since = timestamp(created + 60);
  JsonValue conditions = JsonValue::array();
  conditions.push(condition("MemoryPressure", "False", heartbeat, since, "KubeletHasSufficientMemory",
                            "kubelet has sufficient memory available"));
  conditions.push(condition("DiskPressure", "False", heartbeat, since, "KubeletHasNoDiskPressure",
                            "kubelet has no disk pressure"));
  conditions.push(condition("PIDPressure", "False", heartbeat, since, "KubeletHasSufficientPID",
                            "kubelet has sufficient PID available"));
  if (n.ready) {
    conditions.push(condition("Ready", "True", heartbeat, timestamp(created + 75), "KubeletReady",
                              "kubelet is posting ready status"));
  } else {
    conditions.push(condition("Ready", "Unknown", timestamp(kEpoch - 300), timestamp(kEpoch - 120),
                              "NodeStatusUnknown", "Kubelet stopped posting node status."));
  }

  JsonValue addresses = JsonValue::array();
  addresses.push(JsonValue::object().set("type", "InternalIP").set("address", ip));
  addresses.push(JsonValue::object().set("type", "InternalDNS").set("address", n.name));
  addresses.push(JsonValue::object().set("type", "Hostname").set("address", n.name));

  JsonValue nodeInfo = JsonValue::object();
  nodeInfo.set("machineID", rng.hex(32));
  nodeInfo.set("systemUUID", "ec2" + rng.hex(5) + "-" + rng.hex(4) + "-" + rng.hex(4) + "-" + rng.hex(4) + "-" + rng.hex(12));
  nodeInfo.set("bootID", rng.uid());
  nodeInfo.set("kernelVersion", "5.10.219-208.866.amzn2.x86_64");
  nodeInfo.set("osImage", "Amazon Linux 2");
  nodeInfo.set("containerRuntimeVersion", "containerd://1.7.11");
  nodeInfo.set("kubeletVersion", "v1.30.2-eks-1552ad0");
  nodeInfo.set("kubeProxyVersion", "v1.30.2-eks-1552ad0");
  nodeInfo.set("operatingSystem", "linux");
  nodeInfo.set("architecture", "amd64");

  JsonValue status = JsonValue::object();
  status.set("capacity", std::move(capacity));
  status.set("allocatable", std::move(allocatable));
  status.set("conditions", std::move(conditions));
  status.set("addresses", std::move(addresses));
  status.set("daemonEndpoints", JsonValue::object().set("kubeletEndpoint", JsonValue::object().setInt("Port", 10250)));
  status.set("nodeInfo", std::move(nodeInfo));

  JsonValue node = JsonValue::object();
  if (withTypeMeta) node.set("kind", "Node").set("apiVersion", "v1");
  node.set("metadata", std::move(meta));
  node.set("spec", std::move(spec));

  // Images: kubelet reports up to 50, largest first. Pad to this node's seeded size target,
  // measured on the compact wire form without TypeMeta.
  const size_t target = o.minNodeBytes + rng.below(o.maxNodeBytes - o.minNodeBytes + 1);
  size_t bytes = 0;
  {
    JsonValue probe = JsonValue::object();
    probe.set("metadata", *node.find("metadata")).set("spec", *node.find("spec")).set("status", status);
    bytes = probe.dump().size() + std::string_view(R"(,"images":[])").size();
  }
  std::vector<size_t> candidates;
  for (size_t k = 0; k < kImageCount; ++k) {
    if (k < kBaseImages || (n.gpu && k >= kFirstGpuImage && k < kGpuStackEnd)) continue;
    if (kImages[k].gpuOnly && !n.gpu) continue;
    candidates.push_back(k);
  }
  for (size_t k = candidates.size(); k > 1; --k) std::swap(candidates[k - 1], candidates[rng.below(k)]);
  std::vector<size_t> chosen;
  for (size_t k = 0; k < kBaseImages; ++k) chosen.push_back(k);
  if (n.gpu) {
    for (size_t k = kFirstGpuImage; k < kGpuStackEnd; ++k) chosen.push_back(k);
  }
  std::vector<Image> images;
  auto addImage = [&](size_t k) {
    Image img = imageObject(o.seed, k % kImageCount, k / kImageCount, kImages[k % kImageCount]);
    bytes += img.value.dump().size() + (images.empty() ? 0 : 1);
    images.push_back(std::move(img));
  };
  for (size_t k : chosen) addImage(k);
  for (size_t generation = 0; generation < 4 && bytes < target; ++generation) {
    for (size_t k : candidates) {
      if (bytes >= target || images.size() >= 50) break;
      addImage(k + generation * kImageCount);
    }
  }
  std::stable_sort(images.begin(), images.end(),
                   [](const Image& a, const Image& b) { return a.sizeBytes > b.sizeBytes; });
  JsonValue imageArray = JsonValue::array();
  for (auto& img : images) imageArray.push(std::move(img.value));
  status.set("images", std::move(imageArray));
  node.set("status", std::move(status));
  return node;
}

std::string FleetGenerator::nodeWire(size_t i) const { return nodeObject(i, false).dump(); }

// ---------------------------------------------------------------------------------------------

std::string_view podKindName(PodKind kind) {
  switch (kind) {
    case PodKind::kCpuOnly: return "cpu";
    case PodKind::kGpu1: return "gpu1";
    case PodKind::kGpu2: return "gpu2";
    case PodKind::kGpu4: return "gpu4";
    case PodKind::kGpu8: return "gpu8";
    case PodKind::kGpuShare: return "gpushare";
  }
  return "?";
}

namespace {

struct WorkloadTemplate {
  std::string_view app;
  std::string_view namespace_;
  int64_t milliCpu;
  int64_t memoryMi;
  bool guaranteed;  // requests == limits
};

const WorkloadTemplate& workloadFor(PodKind kind, Rng& rng) {
  static constexpr WorkloadTemplate kCpu[] = {
      {"checkout-api", "web", 500, 1024, false},   {"search-frontend", "web", 250, 512, false},
      {"spark-executor", "data", 4000, 16384, true}, {"airflow-worker", "data", 1000, 4096, false},
      {"feature-etl", "data", 2000, 8192, false},  {"redis-cache", "web", 1000, 2048, true},
  };
  static constexpr WorkloadTemplate kGpu1[] = {
      {"embedding-server", "inference", 4000, 16384, true}, {"ranking-inference", "inference", 3000, 12288, true},
      {"asr-whisper", "inference", 4000, 24576, true},      {"jupyter-gpu", "research", 2000, 16384, false},
  };
  static constexpr WorkloadTemplate kGpuN[] = {
      {"llm-serve-vllm", "inference", 16000, 131072, true}, {"finetune-lora", "ml-training", 12000, 98304, true},
      {"llm-pretrain", "ml-training", 40000, 512000, true},  {"eval-harness", "research", 8000, 65536, false},
  };
  static constexpr WorkloadTemplate kShare[] = {
      {"notebook-shared", "research", 1000, 8192, false}, {"video-transcode", "media", 2000, 4096, false},
  };
  switch (kind) {
    case PodKind::kCpuOnly: return kCpu[rng.below(std::size(kCpu))];
    case PodKind::kGpu1: return kGpu1[rng.below(std::size(kGpu1))];
    case PodKind::kGpuShare: return kShare[rng.below(std::size(kShare))];
    default: return kGpuN[rng.below(std::size(kGpuN))];
  }
}

}  // namespace

PodGenerator::PodGenerator(PodOptions options) : options_(std::move(options)) {
  summaries_.reserve(options_.pods);
  const double weights[] = {options_.weightCpuOnly, options_.weightGpu1, options_.weightGpu2,
                            options_.weightGpu4,    options_.weightGpu8, options_.weightGpuShare};
  double total = 0;
  for (double w : weights) total += std::max(w, 0.0);
  // Pods come in ReplicaSets of 1..8 replicas that share kind, template and placement flags.
  size_t workload = 0;
  while (summaries_.size() < options_.pods) {
    Rng rng(mix(options_.seed, workload, 3));
    double x = rng.unit() * total;
    size_t k = 0;
    for (; k + 1 < std::size(weights); ++k) {
      if (x < std::max(weights[k], 0.0)) break;
      x -= std::max(weights[k], 0.0);
    }
    const auto kind = static_cast<PodKind>(k);
    const WorkloadTemplate& tpl = workloadFor(kind, rng);
    static constexpr int kGpus[] = {0, 1, 2, 4, 8, 1};
    const int gpus = kGpus[k];
    const int scale = std::max(gpus, 1);
    const bool spotTolerant = gpus > 0 && rng.chance(options_.spotTolerantFraction);
    const bool zoneSpread = rng.chance(options_.zoneSpreadFraction);
    const int replicas = static_cast<int>(kind == PodKind::kGpu8 ? rng.range(1, 4) : rng.range(1, 8));
    const std::string rsName = options_.namePrefix + std::string(tpl.app) + "-" + rng.alnum(3) + "-" + rng.hex(10).substr(0, 10);
    const int gpuMilli = kind == PodKind::kGpuShare ? static_cast<int>(250 * rng.range(1, 3)) : 0;
    for (int r = 0; r < replicas && summaries_.size() < options_.pods; ++r) {
      PodSummary p;
      p.name = rsName + "-" + rng.alnum(5);
      p.namespace_ = tpl.namespace_;
      p.uid = rng.uid();
      p.workload = rsName;
      p.kind = kind;
      p.gpus = gpus;
      p.gpuMilli = gpuMilli;
      p.spotTolerant = spotTolerant;
      p.zoneSpread = zoneSpread;
      p.milliCpu = kind == PodKind::kGpuShare || kind == PodKind::kCpuOnly || kind == PodKind::kGpu1
                       ? tpl.milliCpu
                       : tpl.milliCpu * scale / 8;
      p.memory = (kind == PodKind::kGpu2 || kind == PodKind::kGpu4 || kind == PodKind::kGpu8
                      ? tpl.memoryMi * scale / 8
                      : tpl.memoryMi) *
                 1024 * 1024;
      summaries_.push_back(std::move(p));
    }
    ++workload;
  }
}

size_t PodGenerator::bindToFleet(const FleetGenerator& fleet) {
  struct Free {
    int64_t cpu, mem;
    int gpus, pods;
  };
  std::vector<Free> free;
  free.reserve(fleet.size());
  for (const auto& n : fleet.summaries()) free.push_back({n.allocatableMilliCpu, n.allocatableMemory, n.gpuCount, n.maxPods});
  if (fleet.size() == 0) return 0;
  size_t placed = 0;
  for (size_t i = 0; i < summaries_.size(); ++i) {
    PodSummary& p = summaries_[i];
    Rng rng(mix(options_.seed, i, 4));
    const size_t start = rng.below(fleet.size());
    for (size_t step = 0; step < fleet.size(); ++step) {
      const size_t j = (start + step) % fleet.size();
      const NodeSummary& n = fleet.summary(j);
      Free& f = free[j];
      if (n.unschedulable || !n.ready) continue;
      if (n.gpuTainted && p.gpus == 0) continue;
      if (n.capacityType == CapacityType::kSpot && !p.spotTolerant && p.gpus > 0) continue;
      if (f.cpu < p.milliCpu || f.mem < p.memory || f.pods < 1 || f.gpus < p.gpus) continue;
      f.cpu -= p.milliCpu;
      f.mem -= p.memory;
      f.pods -= 1;
      f.gpus -= p.gpus;
      p.nodeName = n.name;
      ++placed;
      break;
    }
  }
  return placed;
}

JsonValue PodGenerator::podObject(size_t i, bool withTypeMeta) const {
  const PodSummary& p = summaries_[i];
  Rng rng(mix(options_.seed, i, 5));
  const bool bound = !p.nodeName.empty();
  const int64_t created = kEpoch - static_cast<int64_t>(rng.below(bound ? 7 * 86400 : 120));
  const std::string createdTs = timestamp(created);
  const std::string rsHash = p.workload.substr(p.workload.rfind('-') + 1);
  const std::string app = p.workload.substr(options_.namePrefix.size(),
                                            p.workload.rfind('-') - options_.namePrefix.size() - 4);
  const std::string rsUid = [&] {
    Rng r(mix(options_.seed, hashName(p.workload), 6));
    return r.uid();
  }();

  JsonValue labels = JsonValue::map();
  labels.set("app.kubernetes.io/name", app);
  labels.set("app.kubernetes.io/part-of", p.namespace_);
  labels.set("pod-template-hash", rsHash.substr(0, 10));
  if (p.zoneSpread) labels.set("fleetsched.io/workload", p.workload);

  JsonValue annotations = JsonValue::map();
  if (p.gpus > 0) {
    annotations.set("kubectl.kubernetes.io/default-container", app);
    if (p.spotTolerant) annotations.set("fleetsched.io/spot-tolerant", "true");
    if (p.gpuMilli) annotations.set("fleetsched.io/gpu-milli", std::to_string(p.gpuMilli));
    if (p.zoneSpread) annotations.set("fleetsched.io/zone-policy", "spread");
    uint64_t hint = mix(options_.seed, hashName(p.workload), 7) % 10;
    if (hint == 0) annotations.set("fleetsched.io/gpu-models", "A100|H100");
    if (hint == 1) annotations.set("fleetsched.io/gpu-min-memory", "40000");
  }
  annotations.set("prometheus.io/port", "9090");
  annotations.set("prometheus.io/scrape", "true");

  JsonValue owner = JsonValue::object()
                        .set("apiVersion", "apps/v1")
                        .set("kind", "ReplicaSet")
                        .set("name", p.workload)
                        .set("uid", rsUid)
                        .setBool("controller", true)
                        .setBool("blockOwnerDeletion", true);

  JsonValue meta = JsonValue::object();
  meta.set("name", p.name);
  meta.set("generateName", p.workload + "-");
  meta.set("namespace", p.namespace_);
  meta.set("uid", p.uid);
  meta.set("resourceVersion", std::to_string(1000000 + rng.below(900000000)));
  meta.set("creationTimestamp", createdTs);
  meta.set("labels", std::move(labels));
  meta.set("annotations", std::move(annotations));
  meta.set("ownerReferences", JsonValue::array().push(std::move(owner)));
  {
    JsonValue fields = JsonValue::object().set(
        "f:metadata", JsonValue::object()
                          .set("f:generateName", JsonValue::object())
                          .set("f:labels", JsonValue::map()
                                               .set(".", JsonValue::object())
                                               .set("f:app.kubernetes.io/name", JsonValue::object())
                                               .set("f:pod-template-hash", JsonValue::object()))
                          .set("f:ownerReferences",
                               JsonValue::object().set(".", JsonValue::object())
                                   .set("k:{\"uid\":\"" + rsUid + "\"}", JsonValue::object())));
    JsonValue entry = managedEntry("kube-controller-manager", "Update", createdTs, std::move(fields));
    meta.set("managedFields", JsonValue::array().push(std::move(entry)));
  }

  const std::string tokenVolume = "kube-api-access-" + rng.alnum(5);
  JsonValue volumes = JsonValue::array();
  volumes.push(JsonValue::object().set("name", tokenVolume).set(
      "projected",
      JsonValue::object()
          .set("sources",
               JsonValue::array()
                   .push(JsonValue::object().set(
                       "serviceAccountToken", JsonValue::object().setInt("expirationSeconds", 3607).set("path", "token")))
                   .push(JsonValue::object().set(
                       "configMap", JsonValue::object()
                                        .set("name", "kube-root-ca.crt")
                                        .set("items", JsonValue::array().push(
                                                          JsonValue::object().set("key", "ca.crt").set("path", "ca.crt")))))
                   .push(JsonValue::object().set(
                       "downwardAPI",
                       JsonValue::object().set(
                           "items", JsonValue::array().push(JsonValue::object().set("path", "namespace").set(
                                        "fieldRef", JsonValue::object()
                                                        .set("apiVersion", "v1")
                                                        .set("fieldPath", "metadata.namespace")))))))
          .setInt("defaultMode", 420)));
  if (p.gpus > 0) {
    volumes.push(JsonValue::object().set("name", "dshm").set("emptyDir", JsonValue::object().set("medium", "Memory")));
  }

  auto quantity = [](int64_t milli) {
    return milli % 1000 == 0 ? std::to_string(milli / 1000) : std::to_string(milli) + "m";
  };
  auto mem = [](int64_t bytes) { return std::to_string(bytes / (1024 * 1024)) + "Mi"; };
  JsonValue requests = JsonValue::map().set("cpu", quantity(p.milliCpu)).set("memory", mem(p.memory));
  JsonValue limits = JsonValue::map().set("memory", mem(p.memory));
  const bool guaranteed = p.gpus > 1;
  if (guaranteed) limits.set("cpu", quantity(p.milliCpu));
  if (p.gpus > 0) {
    requests.set("nvidia.com/gpu", std::to_string(p.gpus));
    limits.set("nvidia.com/gpu", std::to_string(p.gpus));
  }

  JsonValue env = JsonValue::array();
  env.push(JsonValue::object().set("name", "POD_NAME").set(
      "valueFrom", JsonValue::object().set("fieldRef", JsonValue::object().set("apiVersion", "v1").set("fieldPath", "metadata.name"))));
  env.push(JsonValue::object().set("name", "LOG_LEVEL").set("value", "info"));
  if (p.gpus > 0) {
    env.push(JsonValue::object().set("name", "NCCL_DEBUG").set("value", "WARN"));
    env.push(JsonValue::object().set("name", "CUDA_DEVICE_MAX_CONNECTIONS").set("value", "1"));
  }
  JsonValue mounts = JsonValue::array();
  if (p.gpus > 0) mounts.push(JsonValue::object().set("name", "dshm").set("mountPath", "/dev/shm"));
  mounts.push(JsonValue::object().set("name", tokenVolume).setBool("readOnly", true).set(
      "mountPath", "/var/run/secrets/kubernetes.io/serviceaccount"));

  JsonValue container = JsonValue::object();
  container.set("name", app);
  container.set("image", "registry.fleet.example/" + std::string(p.gpus ? "ml/" : "web/") + app + ":2024.06." +
                             std::to_string(10 + rng.below(20)) + "-" + rng.hex(7));
  if (p.gpus > 1) {
    container.set("command", JsonValue::array().push("torchrun"));
    container.set("args", JsonValue::array()
                              .push("--nproc_per_node=" + std::to_string(p.gpus))
                              .push("/app/train.py")
                              .push("--config=/app/configs/" + app + ".yaml"));
  }
  container.set("ports", JsonValue::array().push(
                             JsonValue::object().set("name", "metrics").setInt("containerPort", 9090).set("protocol", "TCP")));
  container.set("env", std::move(env));
  container.set("resources", JsonValue::object().set("limits", std::move(limits)).set("requests", std::move(requests)));
  container.set("volumeMounts", std::move(mounts));
  container.set("terminationMessagePath", "/dev/termination-log");
  container.set("terminationMessagePolicy", "File");
  container.set("imagePullPolicy", "IfNotPresent");

  JsonValue tolerations = JsonValue::array();
  tolerations.push(JsonValue::object()
                       .set("key", "node.kubernetes.io/not-ready")
                       .set("operator", "Exists")
                       .set("effect", "NoExecute")
                       .setInt("tolerationSeconds", 300));
  tolerations.push(JsonValue::object()
                       .set("key", "node.kubernetes.io/unreachable")
                       .set("operator", "Exists")
                       .set("effect", "NoExecute")
                       .setInt("tolerationSeconds", 300));
  if (p.gpus > 0) {
    tolerations.push(JsonValue::object().set("key", "nvidia.com/gpu").set("operator", "Exists").set("effect", "NoSchedule"));
  }
  if (p.spotTolerant) {
    tolerations.push(JsonValue::object().set("key", "fleetsched.io/spot").set("operator", "Exists"));
  }

  JsonValue spec = JsonValue::object();
  spec.set("volumes", std::move(volumes));
  spec.set("containers", JsonValue::array().push(std::move(container)));
  spec.set("restartPolicy", "Always");
  spec.setInt("terminationGracePeriodSeconds", p.gpus > 1 ? 120 : 30);
  spec.set("dnsPolicy", "ClusterFirst");
  if (p.gpus > 0 && !p.spotTolerant && rng.chance(0.3)) {
    spec.set("nodeSelector", JsonValue::map().set("nvidia.com/gpu.present", "true"));
  }
  spec.set("serviceAccountName", "default");
  spec.set("serviceAccount", "default");
  if (bound) spec.set("nodeName", p.nodeName);
  spec.set("securityContext", JsonValue::object());
  if (p.gpus >= 4) {
    // Large jobs want a Karpenter- or MNG-provisioned on-demand node of a big GPU family.
    JsonValue expr = JsonValue::object()
                         .set("key", "node.kubernetes.io/instance-type")
                         .set("operator", "In")
                         .set("values", p.gpus == 8 ? JsonValue::array().push("p4d.24xlarge").push("p4de.24xlarge").push("p5.48xlarge").push("g5.48xlarge")
                                                    : JsonValue::array().push("g5.12xlarge").push("g6.12xlarge").push("g4dn.12xlarge").push("p4d.24xlarge").push("p4de.24xlarge").push("p5.48xlarge").push("g5.48xlarge"));
    spec.set("affinity",
             JsonValue::object().set(
                 "nodeAffinity",
                 JsonValue::object().set(
                     "requiredDuringSchedulingIgnoredDuringExecution",
                     JsonValue::object().set("nodeSelectorTerms", JsonValue::array().push(JsonValue::object().set(
                                                                      "matchExpressions", JsonValue::array().push(std::move(expr))))))));
  }
  spec.set("schedulerName", "default-scheduler");
  spec.set("tolerations", std::move(tolerations));
  if (p.gpus >= 4) spec.set("priorityClassName", "training-high");
  spec.setInt("priority", p.gpus >= 4 ? 100000 : 0);
  spec.setBool("enableServiceLinks", true);
  spec.set("preemptionPolicy", "PreemptLowerPriority");
  if (p.zoneSpread) {
    spec.set("topologySpreadConstraints",
             JsonValue::array().push(JsonValue::object()
                                         .setInt("maxSkew", 1)
                                         .set("topologyKey", "topology.kubernetes.io/zone")
                                         .set("whenUnsatisfiable", "ScheduleAnyway")
                                         .set("labelSelector", JsonValue::object().set(
                                                                   "matchLabels", JsonValue::map().set("fleetsched.io/workload", p.workload)))));
  }

  JsonValue status = JsonValue::object();
  if (bound) {
    status.set("phase", "Running");
    status.set("conditions", JsonValue::array().push(JsonValue::object()
                                                         .set("type", "PodScheduled")
                                                         .set("status", "True")
                                                         .set("lastProbeTime", JsonValue::null())
                                                         .set("lastTransitionTime", timestamp(created + 1))));
    status.set("startTime", timestamp(created + 2));
  } else {
    status.set("phase", "Pending");
  }
  status.set("qosClass", guaranteed ? "Guaranteed" : "Burstable");

  JsonValue pod = JsonValue::object();
  if (withTypeMeta) pod.set("kind", "Pod").set("apiVersion", "v1");
  pod.set("metadata", std::move(meta));
  pod.set("spec", std::move(spec));
  pod.set("status", std::move(status));
  return pod;
}

std::string PodGenerator::podWire(size_t i) const { return podObject(i, false).dump(); }

// ---------------------------------------------------------------------------------------------

namespace {

template <typename EmitItem>
bool writeList(std::FILE* out, size_t count, JsonValue::Style style, EmitItem&& emit) {
  const bool pretty = style == JsonValue::Style::kKubectl;
  std::string buf = pretty ? "{\n    \"apiVersion\": \"v1\",\n    \"items\": [" : R"({"apiVersion":"v1","items":[)";
  bool first = true;
  for (size_t i = 0; i < count; ++i) {
    std::string item;
    if (!emit(i, item)) continue;
    if (!first) buf.push_back(',');
    first = false;
    if (pretty) {
      buf += "\n        ";
      // Re-indent the item two levels deeper.
      for (char c : item) {
        buf.push_back(c);
        if (c == '\n') buf += "        ";
      }
    } else {
      buf += item;
    }
    if (buf.size() > (1 << 20)) {
      if (std::fwrite(buf.data(), 1, buf.size(), out) != buf.size()) return false;
      buf.clear();
    }
  }
  if (pretty) {
    buf += first ? "]" : "\n    ]";
    buf += ",\n    \"kind\": \"List\",\n    \"metadata\": {\n        \"resourceVersion\": \"\"\n    }\n}\n";
  } else {
    buf += R"(],"kind":"List","metadata":{"resourceVersion":""}})";
  }
  return std::fwrite(buf.data(), 1, buf.size(), out) == buf.size() && std::fflush(out) == 0;
}

}  // namespace

bool writeNodeList(std::FILE* out, const FleetGenerator& fleet, JsonValue::Style style) {
  return writeList(out, fleet.size(), style, [&](size_t i, std::string& item) {
    fleet.nodeObject(i, true).write(item, style);
    return true;
  });
}

bool writePodList(std::FILE* out, const PodGenerator& pods, JsonValue::Style style, bool onlyBound) {
  return writeList(out, pods.size(), style, [&](size_t i, std::string& item) {
    if (onlyBound && pods.summary(i).nodeName.empty()) return false;
    pods.podObject(i, true).write(item, style);
    return true;
  });
}

std::string nodeNamesArgsTail(std::span<const std::string> nodeNames) {
  std::string out = R"(,"Nodes":null,"NodeNames":[)";
  for (size_t i = 0; i < nodeNames.size(); ++i) {
    if (i) out.push_back(',');
    appendJsonString(out, nodeNames[i]);
  }
  out += "]}";
  return out;
}

std::string fullArgsTail(std::span<const std::string> nodeWires) {
  size_t total = 64;
  for (const auto& n : nodeWires) total += n.size() + 1;
  std::string out;
  out.reserve(total);
  out += R"(,"Nodes":{"metadata":{},"items":[)";
  for (size_t i = 0; i < nodeWires.size(); ++i) {
    if (i) out.push_back(',');
    out += nodeWires[i];
  }
  out += R"(]},"NodeNames":null})";
  return out;
}

void appendNodeNamesArgs(std::string& out, std::string_view podWire, std::span<const std::string> nodeNames) {
  out += kNodeNamesArgsHead;
  out += podWire;
  out += nodeNamesArgsTail(nodeNames);
}

void appendFullNodesArgs(std::string& out, std::string_view podWire, std::span<const std::string> nodeWires) {
  out += kFullArgsHead;
  out += podWire;
  out += fullArgsTail(nodeWires);
}

}  // namespace fleetsched::tools::fleet
