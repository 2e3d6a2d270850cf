#include <gtest/gtest.h>

#include "fixtures.h"
#include "plugins/pod_info.h"

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

}  // namespace
}  // namespace fleetsched::plugins
