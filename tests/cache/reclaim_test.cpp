// A reader thread and a writer thread hammer one cache for a second. Run under AddressSanitizer
// (scripts/test.sh does) this catches a version freed while a reader holds it; the invariant
// checks catch a reader seeing a half-applied batch; the final counts catch leaked versions.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

#include "cache/cache.h"
#include "tests/cache/fixtures.h"

namespace fleetsched::cache {
namespace {

using testing::NodeMaker;
using testing::PodMaker;
using testing::Strings;

constexpr int kNodes = 200;
constexpr int kPods = 2000;

TEST(Reclamation, ReaderAndWriterThreadsHammerForASecond) {
  Strings s;
  std::vector<codec::Node> nodes;
  for (int i = 0; i < kNodes; ++i) {
    const std::string name = "node-" + std::to_string(i);
    nodes.push_back(
        NodeMaker(s, name).zone(i % 2 ? "z1" : "z2").gpus(8).label("kubernetes.io/hostname", name).build());
  }
  // Every pod asks for 100m cpu and one GPU, so per node usedMilliCpu == 100 * usedPods and
  // the GPU scalar used == usedPods: a torn batch would break these equalities.
  std::vector<codec::Pod> pods;
  for (int i = 0; i < kPods; ++i) {
    // Half the UIDs API-server shaped (kept as binary UUIDs), half plain text.
    char uuid[40];
    std::snprintf(uuid, sizeof uuid, "00000000-0000-4000-8000-%012d", i);
    pods.push_back(PodMaker(s, i % 2 ? std::string(uuid) : "pod-" + std::to_string(i))
                       .on("node-" + std::to_string((i * 7) % kNodes))
                       .cpu(100)
                       .gpus(1)
                       .gpuMilli("250")
                       .owner("Job", "job-" + std::to_string(i % 13))
                       .build());
  }
  std::vector<codec::Pod> moved = pods;
  for (int i = 0; i < kPods; ++i) moved[i].nodeName = nodes[(i * 11) % kNodes].name;

  Cache cache;
  {
    auto w = cache.write();
    w.replaceNodes(nodes);
  }

  std::atomic<bool> stop{false};
  std::atomic<uint64_t> snapshots{0};
  std::atomic<uint64_t> violations{0};
  std::thread reader([&] {
    Reader r(cache);
    std::vector<uint32_t> perZone;
    uint64_t lastVersion = 0;
    while (!stop.load(std::memory_order_relaxed)) {
      Snapshot snap = r.acquire();
      if (snap.version() < lastVersion) violations.fetch_add(1);
      lastVersion = snap.version();
      int64_t podsSeen = 0;
      snap.forEachNode([&](const plugins::NodeInfo& n) {
        const auto* gpu = n.scalar("nvidia.com/gpu");
        // usedPods also counts the binder's cpu-less reservations, so compare against the
        // GPU scalar, which only real pods charge.
        if (gpu == nullptr) {
          violations.fetch_add(1);
          return;
        }
        if (n.usedMilliCpu != 100 * gpu->used || gpu->used > n.usedPods) violations.fetch_add(1);
        int sumMilli = 0;
        for (int g = 0; g < n.gpuCount; ++g) sumMilli += n.gpuUsedMilli[g];
        if (sumMilli > 250 * gpu->used) violations.fetch_add(1);
        podsSeen += gpu->used;
        // Labels are freed with their version and their string ids reused: a reader must see
        // its version's text.
        if (n.labels.find("kubernetes.io/hostname") != n.name) violations.fetch_add(1);
        const auto gen = n.labels.find("generation");
        if (gen && gen->find_first_not_of("0123456789") != std::string_view::npos) violations.fetch_add(1);
      });
      // Whole batches only: the writer publishes all pods or none of a round.
      if (podsSeen != 0 && podsSeen != kPods && podsSeen != kPods / 2) violations.fetch_add(1);
      perZone.assign(snap.zoneCount(), 0);
      snap.workloadZoneCounts("default/Job/job-3", perZone);
      if (const auto* n = snap.find("node-17"); n == nullptr || n->name != "node-17") violations.fetch_add(1);
      snapshots.fetch_add(1, std::memory_order_relaxed);
    }
  });

  // A second writer: the binder reserving from another thread while ingestion runs. Its pods
  // use no cpu, so the reader's equalities hold; the writer lock serialises the two.
  std::atomic<uint64_t> reserved{0};
  std::thread binder([&] {
    uint64_t i = 0;
    while (!stop.load(std::memory_order_relaxed)) {
      const std::string uid = "resv-" + std::to_string(i % 16);
      ReservationRequest r{.podUid = uid, .node = nodes[i % kNodes].name, .workload = "default/Job/job-3"};
      if (cache.reserve(r, Clock::now()) != ReserveResult::UnknownNode) reserved.fetch_add(1);
      if (i % 3 == 0) cache.unreserve(uid);
      ++i;
    }
    for (int k = 0; k < 16; ++k) cache.unreserve("resv-" + std::to_string(k));
  });

  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  uint64_t rounds = 0;
  // At least a few rounds even on a slow (sanitizer) build.
  while (rounds < 4 || std::chrono::steady_clock::now() < deadline) {
    {
      auto w = cache.write();
      for (const auto& p : (rounds % 2 ? moved : pods)) w.upsertPod(p);
    }
    {
      auto w = cache.write();
      for (int i = 0; i < kPods; i += 2) w.deletePod(pods[i].uid);
    }
    {
      // Node churn: a node leaves and comes back (its pods park and return in the same batch),
      // and another is relabelled (its old labels retired, new strings take freed ids).
      auto w = cache.write();
      w.deleteNode(nodes[rounds % kNodes].name);
      w.upsertNode(nodes[rounds % kNodes]);
      codec::Node relabelled = nodes[(rounds + 1) % kNodes];
      relabelled.labels.push_back({"generation", s.keep(std::to_string(rounds))});
      w.upsertNode(relabelled);
    }
    {
      auto w = cache.write();
      for (const auto& p : pods) w.deletePod(p.uid);
    }
    ++rounds;
  }
  stop = true;
  reader.join();
  binder.join();

  EXPECT_EQ(violations.load(), 0U);
  EXPECT_GT(snapshots.load(), 10U);
  EXPECT_GT(reserved.load(), 10U);
  EXPECT_EQ(cache.stats().reservationsLive, 0U);
  // With no reader left, one more publish frees every retired version.
  cache.upsertNode(NodeMaker(s, "last").build());
  EXPECT_EQ(cache.stats().retiredPending, 0U);
  EXPECT_EQ(cache.stats().boundPods, 0U);
}

}  // namespace
}  // namespace fleetsched::cache
