// The accounting audit compares what the cache charged each node at one moment (the ledger)
// with a pod list taken at that same moment, summed over its pages. Pods bound after the ledger
// was taken must not show up as mismatches: during a scheduling burst hundreds are bound while
// the list is being read, and an audit that cried wolf then would be ignored when it matters.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "cache/cache.h"
#include "cache/file_source.h"
#include "codec/decoder.h"
#include "engine/ingest/audit.h"
#include "tests/engine/test_data.h"

namespace fleetsched::engine {
namespace {

using testdata::dataDir;

std::string podJson(const std::string& name, const std::string& node, int gpus, const std::string& phase = "Running") {
  std::string limits = gpus > 0 ? R"(,"limits":{"nvidia.com/gpu":")" + std::to_string(gpus) + "\"}" : "";
  return R"({"metadata":{"name":")" + name + R"(","namespace":"ml","uid":"uid-)" + name +
         R"(","resourceVersion":"1"},"spec":{"nodeName":")" + node +
         R"(","containers":[{"name":"c","resources":{"requests":{"cpu":"250m","memory":"1Gi"})" + limits +
         R"(}}]},"status":{"phase":")" + phase + R"("}})";
}

std::string page(const std::vector<std::string>& pods, const std::string& continueToken = "") {
  std::string s = R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"7")";
  if (!continueToken.empty()) s += R"(,"continue":")" + continueToken + "\"";
  s += R"(},"items":[)";
  for (size_t i = 0; i < pods.size(); ++i) s += (i ? "," : "") + pods[i];
  return s + "]}";
}

std::string padded(std::string s) {
  s.append(codec::kDecodePadding, '\0');
  return s;
}

class Audit : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    ASSERT_TRUE(cache::loadClusterFiles(cache_, dataDir() + "/codec/nodes.json", "", error)) << error;
    for (const std::string& p : bound_) bind(p);
  }
  void bind(const std::string& json) {
    codec::Pod pod;
    std::string buf = padded(json);
    ASSERT_TRUE(decoder_.decodePod(std::string_view(buf.data(), json.size()), pod)) << decoder_.errorMessage();
    cache_.upsertPod(pod);
  }
  AuditLedger ledger() {
    cache::Snapshot snap = reader_.acquire();
    return captureLedger(snap, cache_);
  }
  // Tallies `pages` (JSON, each but the last with a continue token) against `l`.
  AuditResult compare(const AuditLedger& l, const std::vector<std::string>& pages) {
    PodListTally tally(l);
    for (size_t i = 0; i < pages.size(); ++i) {
      std::string buf = padded(pages[i]);
      std::string next, error;
      EXPECT_TRUE(tally.addPage(std::string_view(buf.data(), pages[i].size()), decoder_, next, error)) << error;
      EXPECT_EQ(next.empty(), i + 1 == pages.size()) << "page " << i;
    }
    AuditResult r;
    auditReport(l, &tally, r);
    return r;
  }

  std::vector<std::string> bound_ = {podJson("a1", "gpu-a", 2), podJson("a2", "gpu-a", 1), podJson("b1", "gpu-b", 4),
                                     podJson("c1", "cpu-1", 0)};
  cache::Cache cache_;
  cache::Reader reader_{cache_};
  codec::Decoder decoder_;
};

TEST_F(Audit, ListOfTheSameMomentIsClean) {
  AuditResult r = compare(ledger(), {page(bound_)});
  EXPECT_EQ(r.mismatchedNodes, 0u) << r.json;
  EXPECT_EQ(r.overcommittedNodes, 0u);
  EXPECT_EQ(r.checkedPods, 4u);
  EXPECT_EQ(r.nodes, 3u);
  EXPECT_NE(r.json.find("\"comparedWithApiServer\":true"), std::string::npos);
  EXPECT_NE(r.json.find("\"clean\":true"), std::string::npos);
}

TEST_F(Audit, PodsBoundAfterTheLedgerAreOnNeitherSide) {
  AuditLedger before = ledger();
  bind(podJson("late", "gpu-b", 2));  // the watch moves on while the list is read
  EXPECT_EQ(compare(before, {page(bound_)}).mismatchedNodes, 0u);
  // The same list against the cache as it is now would differ on gpu-b: why the ledger is taken first.
  AuditResult now = compare(ledger(), {page(bound_)});
  EXPECT_EQ(now.mismatchedNodes, 1u);
  EXPECT_NE(now.json.find(R"("node":"gpu-b","gpuAllocatable":8,"cache":{"gpus":6,"milliCpu":500,"pods":2},)"
                          R"("podList":{"gpus":4,"milliCpu":250,"pods":1})"),
            std::string::npos)
      << now.json;
}

TEST_F(Audit, PodTheCacheMissedIsReported) {
  std::vector<std::string> list = bound_;
  list.push_back(podJson("missed", "gpu-a", 3));
  AuditResult r = compare(ledger(), {page(list)});
  EXPECT_EQ(r.mismatchedNodes, 1u);
  EXPECT_NE(r.json.find(R"("node":"gpu-a","gpuAllocatable":8,"cache":{"gpus":3,"milliCpu":500,"pods":2},)"
                        R"("podList":{"gpus":6,"milliCpu":750,"pods":3})"),
            std::string::npos)
      << r.json;
  EXPECT_NE(r.json.find("\"clean\":false"), std::string::npos);
}

TEST_F(Audit, PagesAddUp) {
  std::vector<std::string> list = bound_;
  list.push_back(podJson("done", "gpu-a", 8, "Succeeded"));  // terminal: holds nothing
  list.push_back(podJson("pending", "", 1, "Pending"));       // not bound: holds nothing
  AuditResult r = compare(ledger(), {page({list[0], list[1]}, "tok-1"), page({list[2], list[3], list[4]}, "tok-2"),
                                     page({list[5]})});
  EXPECT_EQ(r.mismatchedNodes, 0u) << r.json;
  EXPECT_EQ(r.checkedPods, 4u);
}

TEST_F(Audit, BadPageIsAnErrorNotAReport) {
  AuditLedger l = ledger();
  PodListTally tally(l);
  const std::string bad = R"({"kind":"PodList","items":[{"metadata":)";
  std::string buf = padded(bad);
  std::string next, error;
  EXPECT_FALSE(tally.addPage(std::string_view(buf.data(), bad.size()), decoder_, next, error));
  EXPECT_NE(error.find("pod list: "), std::string::npos) << error;
}

TEST_F(Audit, LiveReservationsAreShownNotCounted) {
  cache::ReservationRequest req;
  req.podUid = "uid-reserved";
  req.node = "gpu-b";
  req.milliCpu = 100;
  req.gpuResource = "nvidia.com/gpu";
  req.gpuAmount = 1;
  cache_.reserve(req, cache::Clock::now());
  AuditResult r = compare(ledger(), {page(bound_)});
  EXPECT_EQ(r.mismatchedNodes, 0u);
  EXPECT_NE(r.json.find(R"("node":"gpu-b")"), std::string::npos) << r.json;
  EXPECT_NE(r.json.find(R"("reservationsLive":1)"), std::string::npos) << r.json;
}

TEST_F(Audit, CacheAloneFindsNoMismatchOnlyOvercommit) {
  AuditResult r;
  cache::Snapshot snap = reader_.acquire();
  auditCache(snap, cache_, r);
  EXPECT_EQ(r.nodes, 3u);
  EXPECT_EQ(r.mismatchedNodes, 0u);
  EXPECT_NE(r.json.find("\"comparedWithApiServer\":false"), std::string::npos);
  EXPECT_NE(r.json.find("\"clean\":true"), std::string::npos);
}

}  // namespace
}  // namespace fleetsched::engine
