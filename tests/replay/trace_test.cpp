#include "replay/trace.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace fleetsched::replay {
namespace {

using ::testing::HasSubstr;

TEST(NodeList, ParsesRowsAndCpuOnlyNodes) {
  const std::string csv =
      "sn,cpu_milli,memory_mib,gpu,model\n"
      "openb-node-0000,64000,262144,2,P100\r\n"
      "openb-node-0001,96000,786432,0,\n";
  std::vector<NodeRow> rows;
  std::string error;
  ASSERT_TRUE(parseNodeList(csv, "nodes.csv", rows, error)) << error;
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].name, "openb-node-0000");
  EXPECT_EQ(rows[0].milliCpu, 64000);
  EXPECT_EQ(rows[0].memoryMiB, 262144);
  EXPECT_EQ(rows[0].gpuCount, 2);
  EXPECT_EQ(rows[0].gpuModel, "P100");  // the \r is not part of the model
  EXPECT_EQ(rows[1].gpuCount, 0);
  EXPECT_EQ(rows[1].gpuModel, "");
}

TEST(PodList, ParsesElevenColumnShape) {
  const std::string csv =
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"
      "openb-pod-0001,6000,12288,1,460,,LS,Running,427061,12902960,427061\n"
      "openb-pod-0008,12000,16384,1,1000,V100M16|V100M32,LS,Running,4130198,12902960,4130198\n"
      "openb-pod-0009,4000,8192,0,0,nan,BE,Succeeded,1,2,1\n"
      "openb-pod-0010,8000,8192,2,1000,,LS,Running,1,2,1\n";
  std::vector<PodRow> rows;
  std::string error;
  ASSERT_TRUE(parsePodList(csv, "pods.csv", rows, error)) << error;
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].gpuCount, 1);
  EXPECT_EQ(rows[0].gpuMilli, 460);
  EXPECT_EQ(rows[0].gpuSpec, "");
  EXPECT_EQ(rows[1].gpuSpec, "V100M16|V100M32");
  EXPECT_EQ(rows[2].gpuCount, 0);
  EXPECT_EQ(rows[2].gpuSpec, "");  // pandas' "nan" means no constraint
  EXPECT_EQ(rows[3].gpuCount, 2);
  EXPECT_EQ(rows[3].gpuMilli, 1000);
}

TEST(PodList, ParsesFiveColumnShapeAndClampsShares) {
  const std::string csv =
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n"
      "openb-pod-0000,12000,16384,1,1000\n"
      "openb-pod-0001,6000,12288,8,1200\n";
  std::vector<PodRow> rows;
  std::string error;
  ASSERT_TRUE(parsePodList(csv, "pods.csv", rows, error)) << error;
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].milliCpu, 12000);
  EXPECT_EQ(rows[1].gpuCount, 8);
  EXPECT_EQ(rows[1].gpuMilli, 1000);  // the published converter clamps to one GPU
  EXPECT_EQ(rows[1].gpuSpec, "");
}

struct BadRow {
  const char* csv;
  const char* message;
};

class PodListErrors : public ::testing::TestWithParam<BadRow> {};

TEST_P(PodListErrors, RejectsWithLineAndReason) {
  std::vector<PodRow> rows;
  std::string error;
  EXPECT_FALSE(parsePodList(GetParam().csv, "pods.csv", rows, error));
  EXPECT_THAT(error, HasSubstr(GetParam().message));
}

INSTANTIATE_TEST_SUITE_P(
    Rows, PodListErrors,
    ::testing::Values(BadRow{"", "pods.csv:0: empty file"},
                      BadRow{"name,cpu_milli,memory_mib,num_gpu\n", "lacks column \"gpu_milli\""},
                      BadRow{"name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1000,10,1\n", "pods.csv:2: expected 5 fields, found 4"},
                      BadRow{"name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1k,10,1,1000\n", "pods.csv:2: column cpu_milli: \"1k\" is not an integer"},
                      BadRow{"name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1000,10,2,500\n", "share below 1000 needs num_gpu 1"},
                      BadRow{"name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1000,10,1,0\n", "num_gpu > 0 with gpu_milli 0"},
                      BadRow{"name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1000,10,99,1000\n", "num_gpu 99 outside"},
                      BadRow{"name,cpu_milli,memory_mib,num_gpu,gpu_milli\n,1000,10,1,1000\n", "empty pod name"},
                      BadRow{"name,cpu_milli,memory_mib,num_gpu,gpu_milli\n\"p\",1000,10,1,1000\n", "quoted fields"}));

TEST(NodeList, RejectsGpuNodeWithoutModel) {
  std::vector<NodeRow> rows;
  std::string error;
  EXPECT_FALSE(parseNodeList("sn,cpu_milli,memory_mib,gpu,model\nn1,1000,10,2,\n", "nodes.csv", rows, error));
  EXPECT_THAT(error, HasSubstr("nodes.csv:2: node with GPUs but no model"));
}

TEST(Files, MissingFileIsAnError) {
  std::vector<PodRow> rows;
  std::string error;
  EXPECT_FALSE(readPodList("/nonexistent/pods.csv", rows, error));
  EXPECT_THAT(error, HasSubstr("cannot open"));
}

}  // namespace
}  // namespace fleetsched::replay
