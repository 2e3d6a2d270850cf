// The ingestion thread's scheduling policy: the option parsers, applyThreadPolicy on a thread of
// its own, and an Ingestor whose thread the kernel reports at the policy it was given.
#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>
#include <uv.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "cache/cache.h"
#include "engine/ingest/ingest.h"
#include "engine/reactor/metrics.h"

namespace fleetsched::engine {
namespace {

TEST(IngestPriority, ParsesTheThreeNamesAndNothingElse) {
  for (IngestPriority p : {IngestPriority::Idle, IngestPriority::Low, IngestPriority::Normal}) {
    IngestPriority out = p == IngestPriority::Idle ? IngestPriority::Normal : IngestPriority::Idle;
    ASSERT_TRUE(parseIngestPriority(ingestPriorityName(p), out)) << ingestPriorityName(p);
    EXPECT_EQ(out, p);
  }
  IngestPriority out = IngestPriority::Low;
  for (const char* bad : {"", "IDLE", "batch", "nice19", "idle "}) EXPECT_FALSE(parseIngestPriority(bad, out)) << bad;
  EXPECT_EQ(out, IngestPriority::Low);
}

TEST(IngestPriority, TheDefaultYieldsToTheReactor) {
  // The documented default: a request never waits for ingestion.
  EXPECT_EQ(IngestOptions{}.priority, IngestPriority::Idle);
  EXPECT_TRUE(IngestOptions{}.cpus.empty());
}

TEST(CpuList, ReadsTheKernelNotation) {
  std::vector<int> cpus;
  ASSERT_TRUE(parseCpuList("1", cpus));
  EXPECT_EQ(cpus, std::vector<int>({1}));
  ASSERT_TRUE(parseCpuList("0,2-4,7", cpus));
  EXPECT_EQ(cpus, std::vector<int>({0, 2, 3, 4, 7}));
  ASSERT_TRUE(parseCpuList("", cpus));
  EXPECT_TRUE(cpus.empty());
  for (const char* bad : {"a", "1,", ",1", "3-1", "1-", "-1", "1 ,2", "99999", "1-2-3"}) {
    EXPECT_FALSE(parseCpuList(bad, cpus)) << bad;
  }
}

struct ThreadState {
  int policy = -1;
  int nice = 0;
  std::vector<int> cpus;
  bool ok = false;
  std::string error;
};

ThreadState stateOf(pid_t tid) {
  ThreadState s;
  s.policy = sched_getscheduler(tid);
  errno = 0;
  s.nice = getpriority(PRIO_PROCESS, static_cast<id_t>(tid));
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(tid, sizeof set, &set) == 0) {
    for (int c = 0; c < CPU_SETSIZE; ++c) {
      if (CPU_ISSET(c, &set)) s.cpus.push_back(c);
    }
  }
  return s;
}

// Applies the policy on a fresh thread (policies are per thread) and reads it back.
ThreadState applyOnThread(IngestPriority p, std::vector<int> cpus) {
  ThreadState s;
  std::thread t([&] {
    s.ok = applyThreadPolicy(p, cpus, s.error);
    ThreadState k = stateOf(gettid());
    s.policy = k.policy;
    s.nice = k.nice;
    s.cpus = k.cpus;
  });
  t.join();
  return s;
}

TEST(ApplyThreadPolicy, IdleIsSchedIdle) {
  ThreadState s = applyOnThread(IngestPriority::Idle, {});
  ASSERT_TRUE(s.ok) << s.error;
  EXPECT_EQ(s.policy, SCHED_IDLE);
}

TEST(ApplyThreadPolicy, LowIsSchedBatchAtNice19) {
  ThreadState s = applyOnThread(IngestPriority::Low, {});
  ASSERT_TRUE(s.ok) << s.error;
  EXPECT_EQ(s.policy, SCHED_BATCH);
  EXPECT_EQ(s.nice, 19);
}

TEST(ApplyThreadPolicy, NormalKeepsWhatTheThreadInherited) {
  ThreadState parent = stateOf(gettid());
  ThreadState s = applyOnThread(IngestPriority::Normal, {});
  ASSERT_TRUE(s.ok) << s.error;
  EXPECT_EQ(s.policy, parent.policy);
  EXPECT_EQ(s.nice, parent.nice);
  EXPECT_EQ(s.cpus, parent.cpus);
}

TEST(ApplyThreadPolicy, PinsToTheCpusGiven) {
  ThreadState parent = stateOf(gettid());
  ASSERT_FALSE(parent.cpus.empty());
  const int last = parent.cpus.back();
  ThreadState s = applyOnThread(IngestPriority::Idle, {last});
  ASSERT_TRUE(s.ok) << s.error;
  EXPECT_EQ(s.cpus, std::vector<int>({last}));
  EXPECT_EQ(s.policy, SCHED_IDLE);
}

TEST(ApplyThreadPolicy, RefusesCpusTheMachineDoesNotHave) {
  ThreadState s = applyOnThread(IngestPriority::Idle, {CPU_SETSIZE - 1});
  EXPECT_FALSE(s.ok);
  EXPECT_NE(s.error.find("CPU"), std::string::npos) << s.error;
}

std::vector<int> threadIds() {
  std::vector<int> ids;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/task")) ids.push_back(std::stoi(e.path().filename()));
  std::sort(ids.begin(), ids.end());
  return ids;
}

class IngestorPolicy : public ::testing::Test {
 protected:
  void SetUp() override {
    uv_loop_init(&loop_);
    // Nothing listens on port 1: the reflectors only retry with backoff until stop().
    kubeconfig_ = (std::filesystem::path(::testing::TempDir()) / ("ingest_policy_" + std::to_string(getpid()))).string();
    std::ofstream(kubeconfig_) << "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: "
                                  "http://127.0.0.1:1\ncontexts:\n- name: c\n  context:\n    cluster: c\n    user: u\n"
                                  "current-context: c\nusers:\n- name: u\n  user: {}\n";
  }
  void TearDown() override {
    uv_run(&loop_, UV_RUN_NOWAIT);  // closes the ingestor's handle on this loop
    EXPECT_EQ(uv_loop_close(&loop_), 0);
    std::filesystem::remove(kubeconfig_);
  }

  IngestOptions options(IngestPriority p, std::vector<int> cpus = {}) {
    IngestOptions o;
    o.kubeconfig = kubeconfig_;
    o.priority = p;
    o.cpus = std::move(cpus);
    return o;
  }

  uv_loop_t loop_{};
  std::string kubeconfig_;
  cache::Cache cache_;
  Metrics metrics_;
};

TEST_F(IngestorPolicy, ItsThreadRunsAtThePriorityGiven) {
  for (IngestPriority p : {IngestPriority::Idle, IngestPriority::Low}) {
    std::vector<int> before = threadIds();
    Ingestor ingestor(cache_, metrics_, options(p));
    std::string error;
    ASSERT_TRUE(ingestor.start(&loop_, error)) << error;
    std::vector<int> started;
    for (int id : threadIds()) {
      if (!std::binary_search(before.begin(), before.end(), id)) started.push_back(id);
    }
    ASSERT_FALSE(started.empty());
    for (int tid : started) {
      ThreadState s = stateOf(tid);
      EXPECT_EQ(s.policy, p == IngestPriority::Idle ? SCHED_IDLE : SCHED_BATCH) << ingestPriorityName(p);
      if (p == IngestPriority::Low) {
        EXPECT_EQ(s.nice, 19);
      }
    }
    ingestor.stop();
    uv_run(&loop_, UV_RUN_NOWAIT);
  }
}

TEST_F(IngestorPolicy, ARefusedPolicyFailsStartAndStopsCleanly) {
  Ingestor ingestor(cache_, metrics_, options(IngestPriority::Idle, {CPU_SETSIZE - 1}));
  std::string error;
  EXPECT_FALSE(ingestor.start(&loop_, error));
  EXPECT_NE(error.find("CPU"), std::string::npos) << error;
  ingestor.stop();  // a second stop is harmless
}

// /readyz turns 503 once a watch has been failing for --stale-after, and back once it recovers.
TEST(WatchFresh, StaleOnlyAfterFailingForTheWholeLimit) {
  apiclient::ReflectorStats stats;
  EXPECT_TRUE(watchFresh(stats, 1000000, 60000));  // healthy
  stats.failingSinceMs = 1000;
  EXPECT_TRUE(watchFresh(stats, 60999, 60000));
  EXPECT_FALSE(watchFresh(stats, 61000, 60000));
  EXPECT_TRUE(watchFresh(stats, 61000, 0));  // 0: never stale
  stats.failingSinceMs = 0;
  EXPECT_TRUE(watchFresh(stats, 61000, 60000));
}

}  // namespace
}  // namespace fleetsched::engine
