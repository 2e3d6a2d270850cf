#include <gtest/gtest.h>

#include "fixtures.h"
#include "plugins/interpretation.h"

namespace fleetsched::plugins {
namespace {

using testing::PodBuilder;

TEST(DerivePodInfo, CpuMemoryAndWholeGpus) {
  const auto pod = PodBuilder().cpu(1500).memory(1 << 30).gpu(4).build();
  PodInfo info;
  ASSERT_TRUE(derivePodInfo(pod, GpuResourceConfig{}, info).ok());
  EXPECT_EQ(info.pod, &pod);
  EXPECT_EQ(info.milliCpu, 1500);
  EXPECT_EQ(info.memory, 1 << 30);
  EXPECT_EQ(info.gpuResource, "nvidia.com/gpu");
  EXPECT_EQ(info.gpuCount, 4);
  EXPECT_EQ(info.gpuMilli, 1000);
  EXPECT_EQ(info.gpuTotalMilli(), 4000);
}

TEST(DerivePodInfo, CpuOnlyPod) {
  PodInfo info;
  ASSERT_TRUE(derivePodInfo(PodBuilder().cpu(100).build(), GpuResourceConfig{}, info).ok());
  EXPECT_FALSE(info.wantsGpu());
  EXPECT_EQ(info.gpuMilli, 0);
  EXPECT_TRUE(info.gpuResource.empty());
}

TEST(DerivePodInfo, FirstConfiguredNameWinsAndPrefixesMatch) {
  GpuResourceConfig cfg{{"nvidia.com/mig-", "nvidia.com/gpu"}};
  EXPECT_TRUE(cfg.primary() == "nvidia.com/gpu");
  const auto pod = PodBuilder().gpu(1).request("nvidia.com/mig-2g.10gb", 3).build();
  PodInfo info;
  ASSERT_TRUE(derivePodInfo(pod, cfg, info).ok());
  EXPECT_EQ(info.gpuResource, "nvidia.com/mig-2g.10gb");
  EXPECT_EQ(info.gpuCount, 3);

  ASSERT_TRUE(derivePodInfo(pod, GpuResourceConfig{{"nvidia.com/gpu", "nvidia.com/mig-"}}, info).ok());
  EXPECT_EQ(info.gpuResource, "nvidia.com/gpu");
  EXPECT_EQ(info.gpuCount, 1);

  // The bare prefix itself is not a resource name that matches it.
  EXPECT_FALSE(GpuResourceConfig::matches("nvidia.com/mig-", "nvidia.com/mig-"));
  EXPECT_FALSE(GpuResourceConfig::matches("nvidia.com/gpu", "nvidia.com/gpu.shared"));
}

TEST(DerivePodInfo, ZeroRequestIsNotAGpuRequest) {
  PodInfo info;
  ASSERT_TRUE(derivePodInfo(PodBuilder().gpu(0).build(), GpuResourceConfig{}, info).ok());
  EXPECT_FALSE(info.wantsGpu());
}

TEST(DerivePodInfo, SharedGpuMilli) {
  PodInfo info;
  ASSERT_TRUE(derivePodInfo(PodBuilder().gpu(1).milli(250).build(), GpuResourceConfig{}, info).ok());
  EXPECT_EQ(info.gpuCount, 1);
  EXPECT_EQ(info.gpuMilli, 250);
  ASSERT_TRUE(derivePodInfo(PodBuilder().gpu(1).milli(1000).build(), GpuResourceConfig{}, info).ok());
  EXPECT_EQ(info.gpuMilli, 1000);
}

TEST(DerivePodInfo, InvalidGpuMilliIsUnresolvable) {
  const std::string_view kRange = "invalid annotation fleetsched.io/gpu-milli: want an integer 1..1000 (milli-GPU)";
  const std::string_view kOne = "annotation fleetsched.io/gpu-milli needs a request of exactly 1 GPU";
  struct Case {
    codec::Pod pod;
    std::string_view reason;
  };
  const Case cases[] = {
      {PodBuilder().gpu(1).annotation("fleetsched.io/gpu-milli", "0").build(), kRange},
      {PodBuilder().gpu(1).annotation("fleetsched.io/gpu-milli", "1001").build(), kRange},
      {PodBuilder().gpu(1).annotation("fleetsched.io/gpu-milli", "0.5").build(), kRange},
      {PodBuilder().gpu(1).annotation("fleetsched.io/gpu-milli", "").build(), kRange},
      {PodBuilder().gpu(1).annotation("fleetsched.io/gpu-milli", "-250").build(), kRange},
      {PodBuilder().gpu(1).annotation("fleetsched.io/gpu-milli", "99999999999999999999").build(), kRange},
      {PodBuilder().gpu(2).milli(500).build(), kOne},
      {PodBuilder().milli(500).build(), kOne},
  };
  for (const auto& c : cases) {
    PodInfo info;
    const Status s = derivePodInfo(c.pod, GpuResourceConfig{}, info);
    EXPECT_EQ(s.code, Code::UnschedulableAndUnresolvable) << c.pod.annotations[0].value;
    EXPECT_EQ(s.reason, c.reason) << c.pod.annotations[0].value;
  }
}

TEST(WorkloadKey, ControllerOwnerThenLabel) {
  const std::vector<std::string> labels{"fleetsched.io/workload", "app"};
  std::string key;
  EXPECT_TRUE(workloadKey(PodBuilder().ns("ml").owner("ReplicaSet", "web-7d9f").label("app", "x").build(),
                          labels, key));
  EXPECT_EQ(key, "ml/ReplicaSet/web-7d9f");
  EXPECT_TRUE(workloadKey(PodBuilder().ns("ml").owner("Job", "j", false).label("app", "x").build(), labels, key));
  EXPECT_EQ(key, "ml/label/x");  // a non-controller owner does not count
  EXPECT_TRUE(workloadKey(PodBuilder().ns("ml").label("fleetsched.io/workload", "train").label("app", "x").build(),
                          labels, key));
  EXPECT_EQ(key, "ml/label/train");
  EXPECT_FALSE(workloadKey(PodBuilder().build(), labels, key));
  EXPECT_TRUE(key.empty());
}

TEST(GpuAnnotations, MilliIsZeroAbsentValidOrMinusOne) {
  EXPECT_EQ(gpuMilliAnnotation(PodBuilder().gpu(1).build()), 0);
  EXPECT_EQ(gpuMilliAnnotation(PodBuilder().gpu(1).milli(250).build()), 250);
  for (const char* bad : {"0", "1001", "0.5", "", "x"}) {
    EXPECT_EQ(gpuMilliAnnotation(PodBuilder().gpu(1).annotation("fleetsched.io/gpu-milli", bad).build()), -1) << bad;
  }
}

TEST(GpuAnnotations, IndexRoundTrips) {
  uint16_t mask = 0;
  ASSERT_TRUE(parseGpuIndex("0-1-3", mask));
  EXPECT_EQ(mask, 0b1011);
  for (const char* bad : {"", "0-", "-1", "1--2", "16", "1-x", "a"}) {
    EXPECT_FALSE(parseGpuIndex(bad, mask)) << bad;
    EXPECT_EQ(mask, 0) << bad;
  }
  GpuAssignment gpus;
  gpus.count = 3;
  gpus.index = {2, 5, 15};
  EXPECT_EQ(formatGpuIndex(gpus), "2-5-15");
  ASSERT_TRUE(parseGpuIndex(formatGpuIndex(gpus), mask));
  EXPECT_EQ(mask, (1U << 2) | (1U << 5) | (1U << 15));
  EXPECT_FALSE(gpuIndexAnnotation(PodBuilder().build(), mask));
  EXPECT_TRUE(gpuIndexAnnotation(PodBuilder().annotation("fleetsched.io/gpu-index", "7").build(), mask));
  EXPECT_EQ(mask, 1U << 7);
}

TEST(Interpretation, ProfileIndexIsNamedThenDefaultThenFirst) {
  Interpretation in;
  in.profiles = {{"a"}, {"default"}, {"b"}};
  EXPECT_EQ(in.profileIndex("b"), 2u);
  EXPECT_EQ(in.profileIndex("default-scheduler"), 1u);
  in.profiles = {{"a"}, {"b"}};
  EXPECT_EQ(in.profileIndex("b"), 1u);
  EXPECT_EQ(in.profileIndex(""), 0u);
}

TEST(Interpretation, ReadsNodeLabels) {
  const Interpretation in;
  const std::vector<codec::KeyValue> labels = {{"topology.kubernetes.io/zone", ""},
                                               {"failure-domain.beta.kubernetes.io/zone", "old-zone"},
                                               {"nvidia.com/gpu.product", "Tesla-T4"},
                                               {"nvidia.com/gpu.memory", "lots"},
                                               {"gpu.nvidia.com/memory", "16Gi"},
                                               {"cloud.google.com/gke-spot", "TRUE"}};
  EXPECT_EQ(in.zone(labels), "old-zone");  // an empty value does not count
  EXPECT_EQ(in.gpuModel(labels), "Tesla-T4");
  EXPECT_EQ(in.gpuMemoryMiB(labels), 16384);  // an unparsable label gives way to the next
  EXPECT_EQ(in.capacityType(labels), CapacityType::Spot);
  EXPECT_TRUE(in.isGpuResource("nvidia.com/mig-1g.10gb"));
  EXPECT_FALSE(in.isGpuResource("amd.com/gpu"));
  EXPECT_TRUE(in.zone({}).empty());
  EXPECT_EQ(in.gpuMemoryMiB({}), 0);
}

}  // namespace
}  // namespace fleetsched::plugins
