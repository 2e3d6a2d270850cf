#include "cache/file_source.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "cache/demo_fleet.h"

namespace fleetsched::cache {
namespace {

std::string testData(const std::string& name) {
  const char* dir = std::getenv("FLEETSCHED_TEST_DATA");
  return std::string(dir != nullptr ? dir : "tests/data") + "/" + name;
}

class TempFile {
 public:
  TempFile(const std::string& tag, const std::string& contents)
      : path_((std::filesystem::temp_directory_path() /
               ("fleetsched-cache-" + tag + "-" + std::to_string(::getpid()) + ".json"))
                  .string()) {
    std::ofstream(path_) << contents;
  }
  ~TempFile() { std::filesystem::remove(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(FileSource, LoadsKubectlNodeAndPodLists) {
  Cache cache;
  Reader reader(cache);
  std::string error;
  FileLoadStats stats;
  ASSERT_TRUE(loadClusterFiles(cache, testData("codec/nodes.json"), testData("codec/pods.json"), error, &stats))
      << error;
  EXPECT_EQ(stats.nodes, 3U);
  EXPECT_EQ(stats.pods, 6U);  // every pod in the file is read; two are bound
  Snapshot snap = reader.acquire();
  ASSERT_EQ(snap.nodeCount(), 3U);
  const plugins::NodeInfo* a = snap.find("gpu-a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->gpuModelName, "NVIDIA-A100-SXM4-80GB");
  EXPECT_EQ(a->zoneName, "us-east-1a");
  EXPECT_EQ(a->gpuCount, 8);
  // Two of the five pods are bound and running (infer-0 on gpu-a, old-job-z on gpu-b).
  EXPECT_EQ(a->usedPods, 1);
  EXPECT_EQ(snap.find("gpu-b")->usedPods, 1);
  EXPECT_EQ(cache.stats().boundPods, 2U);
}

// Defect 8 of issue 26: SIGHUP reloaded a node list without nodes and wiped the fleet (readyz
// stayed 200). A reload now refuses it and keeps the previous state, unless allowed.
TEST(FileSource, ReloadRefusesAnEmptyFleetUnlessAllowed) {
  Cache cache;
  Reader reader(cache);
  std::string error;
  ASSERT_TRUE(reloadClusterFiles(cache, testData("codec/nodes.json"), testData("codec/pods.json"), false, error))
      << error;
  ASSERT_EQ(reader.acquire().nodeCount(), 3U);
  for (const char* empty : {R"({"kind":"NodeList","apiVersion":"v1","items":[]})", R"({"kind":"NodeList","items":null})"}) {
    TempFile nodes("empty-nodes", empty);
    FileLoadStats stats;
    error.clear();
    EXPECT_FALSE(reloadClusterFiles(cache, nodes.path(), testData("codec/pods.json"), false, error, &stats)) << empty;
    EXPECT_NE(error.find("holds no nodes; keeping the 3 nodes"), std::string::npos) << error;
    EXPECT_NE(error.find("--allow-empty-fleet"), std::string::npos) << error;
    Snapshot snap = reader.acquire();
    EXPECT_EQ(snap.nodeCount(), 3U);
    EXPECT_NE(snap.find("gpu-a"), nullptr);
    EXPECT_EQ(cache.stats().boundPods, 2U);  // the pods half was not applied either
  }
  TempFile nodes("empty-nodes-allowed", R"({"kind":"NodeList","items":[]})");
  ASSERT_TRUE(reloadClusterFiles(cache, nodes.path(), "", true, error)) << error;
  EXPECT_EQ(reader.acquire().nodeCount(), 0U);
  // A reload with nodes again is accepted either way.
  ASSERT_TRUE(reloadClusterFiles(cache, testData("codec/nodes.json"), "", false, error)) << error;
  EXPECT_EQ(reader.acquire().nodeCount(), 3U);
}

TEST(FileSource, DemoFleetJsonLoadsLikeTheStructs) {
  Cache fromStructs;
  {
    auto w = fromStructs.write();
    w.replaceNodes(demoFleet().nodes);
  }
  TempFile file("demo", demoFleetJson());
  Cache fromFile;
  std::string error;
  ASSERT_TRUE(loadNodesFile(fromFile, file.path(), error)) << error;
  Reader r1(fromStructs), r2(fromFile);
  Snapshot a = r1.acquire();
  Snapshot b = r2.acquire();
  ASSERT_EQ(a.nodeCount(), b.nodeCount());
  a.forEachNode([&](const plugins::NodeInfo& x) {
    const plugins::NodeInfo* y = b.find(x.name);
    ASSERT_NE(y, nullptr) << x.name;
    EXPECT_EQ(x.zoneName, y->zoneName);
    EXPECT_EQ(x.gpuModelName, y->gpuModelName);
    EXPECT_EQ(x.capacityType, y->capacityType);
    EXPECT_EQ(x.allocMilliCpu, y->allocMilliCpu);
    EXPECT_EQ(x.allocMemory, y->allocMemory);
    EXPECT_EQ(x.allocPods, y->allocPods);
    EXPECT_EQ(x.gpuCount, y->gpuCount);
    EXPECT_EQ(x.gpuMemoryMiB, y->gpuMemoryMiB);
    ASSERT_EQ(x.labels.size(), y->labels.size());
    for (size_t i = 0; i < x.labels.size(); ++i) {
      EXPECT_EQ(x.labels[i].key, y->labels[i].key);
      EXPECT_EQ(x.labels[i].value, y->labels[i].value);
    }
  });
}

TEST(FileSource, ErrorsLeaveTheOldStateAndReloadReplacesIt) {
  Cache cache;
  Reader reader(cache);
  std::string error;
  TempFile demo("demo2", demoFleetJson());
  ASSERT_TRUE(loadNodesFile(cache, demo.path(), error)) << error;
  const uint64_t version = reader.acquire().version();

  TempFile truncated("truncated", demoFleetJson().substr(0, 5000));
  EXPECT_FALSE(loadNodesFile(cache, truncated.path(), error));
  EXPECT_NE(error.find(truncated.path()), std::string::npos) << error;
  EXPECT_FALSE(loadClusterFiles(cache, demo.path(), "/nonexistent/pods.json", error));
  EXPECT_NE(error.find("/nonexistent/pods.json"), std::string::npos) << error;
  {
    Snapshot snap = reader.acquire();
    EXPECT_EQ(snap.version(), version);
    EXPECT_EQ(snap.nodeCount(), 48U);
  }

  ASSERT_TRUE(loadNodesFile(cache, testData("codec/nodes.json"), error)) << error;
  Snapshot snap = reader.acquire();
  EXPECT_EQ(snap.version(), version + 1);
  EXPECT_EQ(snap.nodeCount(), 3U);
  EXPECT_EQ(snap.find(demoFleet().nodes[0].name), nullptr);
}

}  // namespace
}  // namespace fleetsched::cache
