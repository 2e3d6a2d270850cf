// The C ABI (capi/fleetsched.h) as the Go plugin uses it: JSON in, verdicts and scores out,
// reservations that the next cycle sees, preemption's what-if, and errors instead of crashes.
#include "capi/fleetsched.h"

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "plugins/config.h"

namespace {

std::string node(std::string_view name, int gpus, std::string_view zone = "us-east-1a") {
  std::string alloc = R"("cpu":"32","memory":"128Gi","pods":"110")";
  std::string labels = R"("topology.kubernetes.io/zone":")" + std::string(zone) + "\"";
  if (gpus > 0) {
    alloc += R"(,"nvidia.com/gpu":")" + std::to_string(gpus) + "\"";
    labels += R"(,"nvidia.com/gpu.product":"NVIDIA-A100-SXM4-80GB")";
  }
  return R"({"metadata":{"name":")" + std::string(name) + R"(","labels":{)" + labels +
         R"(}},"status":{"allocatable":{)" + alloc + "}}}";
}

std::string pod(std::string_view uid, int gpus, std::string_view nodeName = "", std::string_view gpuIndex = "") {
  std::string meta = R"("name":")" + std::string(uid) + R"(","namespace":"ml","uid":")" + std::string(uid) + "\"";
  if (!gpuIndex.empty()) meta += R"(,"annotations":{"fleetsched.io/gpu-index":")" + std::string(gpuIndex) + "\"}";
  std::string limits = gpus > 0 ? R"(,"limits":{"nvidia.com/gpu":")" + std::to_string(gpus) + "\"}" : "";
  std::string spec = R"("containers":[{"name":"c","resources":{"requests":{"cpu":"1","memory":"1Gi"})" + limits + "}}]";
  if (!nodeName.empty()) spec += R"(,"nodeName":")" + std::string(nodeName) + "\"";
  return "{\"metadata\":{" + meta + "},\"spec\":{" + spec + R"(},"status":{"phase":")" +
         (nodeName.empty() ? "Pending" : "Running") + "\"}}";
}

struct EngineDeleter {
  void operator()(fs_engine* e) const { fs_engine_free(e); }
};
using Engine = std::unique_ptr<fs_engine, EngineDeleter>;

Engine make(std::string_view config = "") {
  char err[256] = {};
  Engine e(fs_engine_new(config.data(), config.size(), err, sizeof err));
  EXPECT_NE(e, nullptr) << err;
  return e;
}

void addNode(fs_engine* e, const std::string& json) {
  char err[256] = {};
  ASSERT_EQ(fs_node_upsert(e, json.data(), json.size(), err, sizeof err), 0) << err;
}
void addPod(fs_engine* e, const std::string& json) {
  char err[256] = {};
  ASSERT_EQ(fs_pod_upsert(e, json.data(), json.size(), err, sizeof err), 0) << err;
}

std::map<std::string, uint32_t> names(fs_engine* e) {
  std::vector<char> buf(1 << 16);
  uint64_t set = 0;
  uint32_t count = 0;
  size_t len = 0;
  EXPECT_EQ(fs_node_names(e, buf.data(), buf.size(), &set, &count, &len), 0U);
  std::map<std::string, uint32_t> out;
  size_t at = 0;
  for (uint32_t id = 0; id < count; ++id) {
    std::string name(buf.data() + at);
    at += name.size() + 1;
    if (!name.empty()) out[name] = id;
  }
  EXPECT_EQ(at, len);
  return out;
}

struct Verdicts {
  fs_prefilter_result result{};
  std::vector<uint8_t> verdict;
  std::vector<uint16_t> pods;
};

Verdicts prefilter(fs_engine* e, const std::string& json) {
  Verdicts v;
  v.verdict.assign(1024, 0);
  v.pods.assign(1024, 0);
  char err[256] = {};
  EXPECT_EQ(fs_prefilter(e, json.data(), json.size(), v.verdict.data(), v.pods.data(), v.verdict.size(), &v.result, err,
                         sizeof err),
            0)
      << err;
  return v;
}

TEST(Capi, InvalidConfigurationGetsServeMessage) {
  const std::string config = "apiVersion: fleetsched.io/v1\nkind: FleetschedConfiguration\nprofiles:\n"
                             "- name: default\n  plugins:\n  - name: NoSuchPlugin\n";
  std::string expected;
  ASSERT_FALSE(fleetsched::plugins::loadConfig(config, expected).has_value());
  char err[512] = {};
  EXPECT_EQ(fs_engine_new(config.data(), config.size(), err, sizeof err), nullptr);
  EXPECT_EQ(std::string(err), expected);
}

TEST(Capi, FiltersEveryNodeOnceAndNamesFailures) {
  Engine e = make();
  addNode(e.get(), node("gpu-a", 8));
  addNode(e.get(), node("cpu-b", 0));
  Verdicts v = prefilter(e.get(), pod("p1", 2));
  ASSERT_EQ(v.result.code, FS_SUCCESS);
  EXPECT_EQ(v.result.feasible, 1U);
  auto ids = names(e.get());
  ASSERT_EQ(ids.size(), 2U);
  EXPECT_EQ(v.verdict[ids["gpu-a"]], 0);
  const uint8_t k = v.verdict[ids["cpu-b"]];
  ASSERT_GE(k, 1);
  char reason[256] = {};
  size_t len = 0;
  EXPECT_NE(fs_reason(e.get(), k, reason, sizeof reason, &len), FS_SUCCESS);
  EXPECT_NE(std::string(reason).find("nvidia.com/gpu"), std::string::npos) << reason;
  for (uint32_t id = v.result.id_limit; id < 8; ++id) EXPECT_EQ(v.verdict[id], 0) << "untouched past id_limit";
}

// fs_reserve of `pod` on gpu-a: its code, and the Binding's annotations by key.
struct Reserved {
  int32_t code = FS_ERROR;
  std::map<std::string, std::string> annotations;
  std::string err;
  std::string gpuIndex() const {
    auto it = annotations.find("fleetsched.io/gpu-index");
    return it == annotations.end() ? "" : it->second;
  }
};
Reserved reserve(fs_engine* e, const std::string& pod, size_t cap = FS_BINDING_ANNOTATIONS_MAX) {
  std::vector<char> buf(cap + 1);
  char err[256] = {};
  size_t len = 99;
  Reserved r;
  r.code = fs_reserve(e, pod.data(), pod.size(), "gpu-a", 5, buf.data(), cap, &len, err, sizeof err);
  r.err = err;
  std::string_view pairs(buf.data(), len);
  while (!pairs.empty()) {
    const size_t k = pairs.find('\0');
    const size_t v = pairs.find('\0', k + 1);
    r.annotations.emplace(pairs.substr(0, k), pairs.substr(k + 1, v - k - 1));
    pairs.remove_prefix(v + 1);
  }
  return r;
}

TEST(Capi, ReservationsAreSeenByTheNextCycleAndReleased) {
  Engine e = make();
  addNode(e.get(), node("gpu-a", 4));
  const std::string p1 = pod("p1", 2), p2 = pod("p2", 2), p3 = pod("p3", 2);
  Reserved r = reserve(e.get(), p1);
  ASSERT_EQ(r.code, FS_SUCCESS) << r.err;
  EXPECT_EQ(r.gpuIndex(), "0-1");
  r = reserve(e.get(), p2);
  ASSERT_EQ(r.code, FS_SUCCESS) << r.err;
  EXPECT_EQ(r.gpuIndex(), "2-3");
  // The node is full now: the next pod's cycle rejects it, and reserving there is refused.
  EXPECT_NE(prefilter(e.get(), p3).verdict[0], 0);
  EXPECT_EQ(reserve(e.get(), p3).code, FS_UNSCHEDULABLE);
  fs_stats s{};
  fs_engine_stats(e.get(), &s);
  EXPECT_EQ(s.reservations_live, 2U);
  EXPECT_EQ(s.gpus_total, 4U);
  EXPECT_EQ(s.gpus_free, 0U);
  // Unreserve (the framework's forget) leaves no charge.
  ASSERT_EQ(fs_unreserve(e.get(), "p1", 2), 0);
  EXPECT_EQ(prefilter(e.get(), p3).verdict[0], 0);
  fs_engine_stats(e.get(), &s);
  EXPECT_EQ(s.gpus_free, 2U);
  // The informer showing p2 bound confirms its reservation: no double charge.
  addPod(e.get(), pod("p2", 2, "gpu-a", "2-3"));
  fs_engine_stats(e.get(), &s);
  EXPECT_EQ(s.reservations_live, 0U);
  EXPECT_EQ(s.gpus_free, 2U);
  EXPECT_EQ(s.bound_pods, 1U);
  r = reserve(e.get(), p3);
  ASSERT_EQ(r.code, FS_SUCCESS) << r.err;
  EXPECT_EQ(r.gpuIndex(), "0-1");
}

// The Binding's annotations are cache::bindingAnnotations', as the extender's bind posts them:
// the GPU index, and assume-time in wall-clock nanoseconds.
TEST(Capi, ReserveReturnsTheBindingsAnnotations) {
  Engine e = make();
  addNode(e.get(), node("gpu-a", 4));
  const auto wallNanos = [] {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
  };
  const int64_t before = wallNanos();
  const Reserved r = reserve(e.get(), pod("p1", 1));
  const int64_t after = wallNanos();
  ASSERT_EQ(r.code, FS_SUCCESS) << r.err;
  ASSERT_EQ(r.annotations.size(), 2U);
  EXPECT_EQ(r.gpuIndex(), "0");
  const int64_t assumed = std::stoll(r.annotations.at("fleetsched.io/assume-time"));
  EXPECT_GE(assumed, before);
  EXPECT_LE(assumed, after);
  // A CPU pod: the device plugin has nothing to hand off, the Binding nothing to carry.
  const Reserved cpu = reserve(e.get(), pod("p2", 0));
  ASSERT_EQ(cpu.code, FS_SUCCESS) << cpu.err;
  EXPECT_TRUE(cpu.annotations.empty());
  // A buffer below the maximum is refused before anything is reserved.
  const Reserved small = reserve(e.get(), pod("p3", 1), FS_BINDING_ANNOTATIONS_MAX - 1);
  EXPECT_EQ(small.code, FS_ERROR);
  EXPECT_NE(small.err.find("FS_BINDING_ANNOTATIONS_MAX"), std::string::npos) << small.err;
  fs_stats s{};
  fs_engine_stats(e.get(), &s);
  EXPECT_EQ(s.reservations_live, 2U);
}

TEST(Capi, WhatIfFollowsRemovedAndAddedPods) {
  Engine e = make();
  addNode(e.get(), node("gpu-a", 1));
  addPod(e.get(), pod("victim", 1, "gpu-a", "0"));
  const std::string preemptor = pod("big", 1);
  Verdicts v = prefilter(e.get(), preemptor);
  ASSERT_NE(v.verdict[0], 0);
  char err[256] = {};
  const uint64_t c = v.result.cycle;
  EXPECT_NE(fs_filter_node(e.get(), c, preemptor.data(), preemptor.size(), "gpu-a", 5, "", 0, "", 0, err, sizeof err),
            FS_SUCCESS);
  const std::string victim = "victim";
  EXPECT_EQ(fs_filter_node(e.get(), c, preemptor.data(), preemptor.size(), "gpu-a", 5, victim.data(), victim.size(), "",
                           0, err, sizeof err),
            FS_SUCCESS)
      << err;
  // The victim reprieved (added back) takes the GPU again.
  const std::string back = pod("victim", 1, "gpu-a") + std::string(1, '\0');
  EXPECT_NE(fs_filter_node(e.get(), c, preemptor.data(), preemptor.size(), "gpu-a", 5, victim.data(), victim.size(),
                           back.data(), back.size(), err, sizeof err),
            FS_SUCCESS);
  // A stale cycle token decodes the pod again instead of using another pod's state.
  EXPECT_EQ(fs_filter_node(e.get(), c + 100, preemptor.data(), preemptor.size(), "gpu-a", 5, victim.data(),
                           victim.size(), "", 0, err, sizeof err),
            FS_SUCCESS)
      << err;
}

// The what-if decides on the node as the engine holds it now: a deletion heard after fs_prefilter
// counts (kube-scheduler's NodeInfo lost the pod first).
TEST(Capi, WhatIfDecidesOnTheCurrentNode) {
  Engine e = make();
  addNode(e.get(), node("gpu-a", 2));
  addPod(e.get(), pod("old", 1, "gpu-a", "0"));
  addPod(e.get(), pod("gone", 1, "gpu-a", "1"));
  const std::string big = pod("big", 2);
  Verdicts v = prefilter(e.get(), big);
  ASSERT_NE(v.verdict[0], 0);
  EXPECT_EQ(v.pods[0], 2);
  char err[256] = {};
  const uint64_t c = v.result.cycle;
  ASSERT_EQ(fs_pod_delete(e.get(), "gone", 4), 0);
  const std::string old = "old";
  EXPECT_EQ(fs_filter_node(e.get(), c, big.data(), big.size(), "gpu-a", 5, old.data(), old.size(), "", 0, err, sizeof err),
            FS_SUCCESS)
      << err;
  EXPECT_EQ(prefilter(e.get(), big).pods[0], 1);
}

TEST(Capi, ScoresAreOnTheFrameworkScale) {
  Engine e = make();
  addNode(e.get(), node("half", 8));
  addNode(e.get(), node("empty", 8));
  addPod(e.get(), pod("p0", 4, "half", "0-1-2-3"));
  const std::string p = pod("p1", 4);
  Verdicts v = prefilter(e.get(), p);
  auto ids = names(e.get());
  std::vector<uint32_t> feasible{ids["half"], ids["empty"]};
  int64_t out[2] = {-1, -1};
  char err[256] = {};
  ASSERT_EQ(fs_score(e.get(), v.result.cycle, p.data(), p.size(), feasible.data(), 2, out, err, sizeof err), 0) << err;
  for (int64_t s : out) {
    EXPECT_GE(s, 0);
    EXPECT_LE(s, 100);
    EXPECT_EQ(s % 10, 0);
  }
  EXPECT_EQ(out[0], 100) << "binpacking prefers the half-used node";
  EXPECT_LT(out[1], out[0]);
  uint32_t bad = 999;
  EXPECT_EQ(fs_score(e.get(), v.result.cycle, p.data(), p.size(), &bad, 1, out, err, sizeof err), -1);
}

TEST(Capi, MalformedObjectsGetErrorsAndChangeNothing) {
  Engine e = make();
  addNode(e.get(), node("gpu-a", 4));
  char err[256] = {};
  const std::vector<std::string> bad = {"", "{", "[]", "{\"metadata\":{\"name\":1}}", "\xff\xfe",
                                        R"({"metadata":{"uid":"x"},"spec":{"containers":[{"resources":{"requests":{"cpu":"lots"}}}]}})"};
  for (const std::string& b : bad) {
    err[0] = '\0';
    EXPECT_EQ(fs_node_upsert(e.get(), b.data(), b.size(), err, sizeof err), -1) << b;
    EXPECT_NE(err[0], '\0');
    err[0] = '\0';
    EXPECT_EQ(fs_pod_upsert(e.get(), b.data(), b.size(), err, sizeof err), -1) << b;
    EXPECT_NE(err[0], '\0');
    fs_prefilter_result r{};
    uint8_t verdict[64];
    EXPECT_EQ(fs_prefilter(e.get(), b.data(), b.size(), verdict, nullptr, sizeof verdict, &r, err, sizeof err), -1) << b;
  }
  fs_stats s{};
  fs_engine_stats(e.get(), &s);
  EXPECT_EQ(s.nodes, 1U);
  EXPECT_EQ(prefilter(e.get(), pod("ok", 1)).result.feasible, 1U);
}

TEST(Capi, InvalidPodAnnotationRejectsEveryNode) {
  Engine e = make();
  addNode(e.get(), node("gpu-a", 4));
  std::string p = pod("p1", 1);
  p.replace(p.find("\"uid\""), 0, R"("annotations":{"fleetsched.io/gpu-milli":"half"},)");
  Verdicts v = prefilter(e.get(), p);
  EXPECT_EQ(v.result.code, FS_UNSCHEDULABLE_AND_UNRESOLVABLE);
  char reason[256] = {};
  EXPECT_EQ(fs_reason(e.get(), 0, reason, sizeof reason, nullptr), FS_UNSCHEDULABLE_AND_UNRESOLVABLE);
  EXPECT_NE(std::string(reason).find("gpu-milli"), std::string::npos) << reason;
}

}  // namespace
