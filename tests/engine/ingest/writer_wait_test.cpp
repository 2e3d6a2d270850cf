// The reactor never waits for the cache writer lock: a bind or preempt that finds it taken is
// deferred, filter and prioritize are answered meanwhile, and the deferred requests run in
// arrival order once the lock is free. The ingestion thread is real (its API server address has
// nothing listening, so every Binding fails with a connection error and its reservation must be
// released); the lock is held by a thread of the test, as a starved ingestion thread would.
#include <gtest/gtest.h>
#include <uv.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <unistd.h>

#include "cache/cache.h"
#include "cache/file_source.h"
#include "engine/ingest/ingest.h"
#include "engine/reactor/metrics.h"
#include "engine/service/extender_service.h"
#include "plugins/config.h"
#include "tests/engine/test_data.h"

namespace fleetsched::engine {
namespace {

namespace fs = std::filesystem;

using testdata::dataDir;
using testdata::readFile;

// A request as the reactor hands it over: padded body, completion recorded.
struct Call {
  Call(Verb verb, std::string json) : padded(std::move(json)) {
    size_t n = padded.size();
    padded.append(kBodyPadding, '\0');
    req.verb = verb;
    req.body = std::string_view(padded.data(), n);
    req.reactorData = this;
    req.complete = [](ExtenderRequest* r) { ++static_cast<Call*>(r->reactorData)->completions; };
  }
  std::string padded;
  ExtenderRequest req;
  int completions = 0;
};

// Holds the cache's writer lock on its own thread until release().
class LockHolder {
 public:
  explicit LockHolder(cache::Cache& cache)
      : thread_([this, &cache] {
          cache::Cache::Writer w = cache.write();
          std::unique_lock<std::mutex> lock(m_);
          held_ = true;
          cv_.notify_all();
          cv_.wait(lock, [this] { return released_; });
        }) {
    std::unique_lock<std::mutex> lock(m_);
    cv_.wait(lock, [this] { return held_; });
  }
  void release() {
    {
      std::lock_guard<std::mutex> lock(m_);
      released_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  ~LockHolder() {
    if (thread_.joinable()) release();
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  bool held_ = false;
  bool released_ = false;
  std::thread thread_;
};

class WriterWait : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    ASSERT_TRUE(cache::loadClusterFiles(cache_, dataDir() + "/codec/nodes.json", dataDir() + "/codec/pods.json", error))
        << error;
    ASSERT_EQ(uv_loop_init(&loop_), 0);
    // Nothing listens on port 1: reflectors retry with backoff, Bindings fail at once.
    kubeconfig_ = (fs::path(::testing::TempDir()) / ("writer_wait_" + std::to_string(getpid()))).string();
    std::ofstream(kubeconfig_) << "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: "
                                  "http://127.0.0.1:1\ncontexts:\n- name: c\n  context:\n    cluster: c\n    user: u\n"
                                  "current-context: c\nusers:\n- name: u\n  user: {}\n";
    IngestOptions o;
    o.kubeconfig = kubeconfig_;
    ingestor_ = std::make_unique<Ingestor>(cache_, metrics_, o);
    ASSERT_TRUE(ingestor_->start(&loop_, error)) << error;
    service_.enableBinding(ingestor_.get());
  }
  void TearDown() override {
    ingestor_->stop();
    uv_run(&loop_, UV_RUN_NOWAIT);
    EXPECT_EQ(uv_loop_close(&loop_), 0);
    fs::remove(kubeconfig_);
  }

  void handle(Call& c) {
    ExtenderRequest* batch[] = {&c.req};
    service_.handleBatch(batch);
  }
  // Runs the reactor loop until `done` or 10 s.
  template <class Done>
  bool runUntil(Done done) {
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!done()) {
      if (std::chrono::steady_clock::now() > until) return false;
      uv_run(&loop_, UV_RUN_NOWAIT);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return true;
  }
  double waits() {
    std::string text;
    metrics_.render(text);
    const std::string key = "\nfleetsched_cache_writer_waits_total ";
    size_t at = text.find(key);
    return at == std::string::npos ? -1 : std::stod(text.substr(at + key.size()));
  }

  cache::Cache cache_;
  plugins::Config config_ = plugins::defaultConfig();
  Metrics metrics_;
  ExtenderService service_{cache_, config_, metrics_};
  uv_loop_t loop_{};
  std::string kubeconfig_;
  std::unique_ptr<Ingestor> ingestor_;
};

const char* kBind = R"({"PodName":"gpu2","PodNamespace":"ml","PodUID":"u-gpu2","Node":"gpu-a"})";

TEST_F(WriterWait, ABindWaitsForTheLockWhileFilterIsServed) {
  const std::string filterBody = readFile(fs::path(dataDir()) / "service/filter/gpu2_spot_tolerant.request.json");
  Call first(Verb::Filter, filterBody);  // remembers pod u-gpu2 for the bind
  handle(first);
  ASSERT_EQ(first.req.status, 200);

  LockHolder holder(cache_);
  Call bind(Verb::Bind, kBind);
  Call second(Verb::Bind, kBind);  // kube-scheduler retrying: must run after the first
  handle(bind);
  handle(second);
  EXPECT_TRUE(bind.req.deferred);
  EXPECT_TRUE(second.req.deferred);
  EXPECT_EQ(bind.completions, 0);
  EXPECT_EQ(waits(), 2);

  // The reactor is not blocked: filter is answered as before while the lock is still held.
  Call filter(Verb::Filter, filterBody);
  handle(filter);
  EXPECT_FALSE(filter.req.deferred);
  EXPECT_EQ(filter.req.response,
            readFile(fs::path(dataDir()) / "service/filter/gpu2_spot_tolerant.response.json"));
  for (int i = 0; i < 20; ++i) uv_run(&loop_, UV_RUN_NOWAIT);  // retries find the lock still taken
  EXPECT_EQ(bind.completions, 0);
  EXPECT_EQ(cache_.stats().reservationsLive, 0u);

  holder.release();
  ASSERT_TRUE(runUntil([&] { return bind.completions == 1 && second.completions == 1; }));
  // Both reserved in turn (the second replacing nothing: the first's reservation was released
  // when its Binding failed) and each failure released its reservation.
  for (Call* c : {&bind, &second}) {
    EXPECT_EQ(c->req.status, 200);
    EXPECT_NE(c->req.response.find(R"("Error":"binding ml/gpu2: )"), std::string::npos) << c->req.response;
  }
  ASSERT_TRUE(runUntil([&] { return cache_.stats().reservationsLive == 0; }));
  EXPECT_GE(cache_.stats().reservationsReleased, 2u);
  EXPECT_EQ(bind.completions, 1);
  EXPECT_EQ(second.completions, 1);
}

TEST_F(WriterWait, PreemptIsAnsweredOnceTheLockIsFree) {
  const fs::path dir = fs::path(dataDir()) / "service/preempt";
  Call alone(Verb::Preempt, readFile(dir / "full_victims.request.json"));
  handle(alone);  // lock free: answered in the batch
  EXPECT_FALSE(alone.req.deferred);
  EXPECT_EQ(alone.req.response, readFile(dir / "full_victims.response.json"));

  LockHolder holder(cache_);
  Call waiting(Verb::Preempt, readFile(dir / "full_victims.request.json"));
  handle(waiting);
  EXPECT_TRUE(waiting.req.deferred);
  EXPECT_EQ(waiting.completions, 0);
  holder.release();
  ASSERT_TRUE(runUntil([&] { return waiting.completions == 1; }));
  EXPECT_EQ(waiting.req.status, 200);
  EXPECT_EQ(waiting.req.response, alone.req.response);
}

TEST_F(WriterWait, AnUndecodableBindWaitingInLineStillGetsItsError) {
  LockHolder holder(cache_);
  Call bad(Verb::Bind, R"({"PodName":)");
  handle(bad);
  EXPECT_TRUE(bad.req.deferred);
  holder.release();
  ASSERT_TRUE(runUntil([&] { return bad.completions == 1; }));
  EXPECT_EQ(bad.req.status, 400);
  EXPECT_NE(bad.req.response.find("bind: "), std::string::npos) << bad.req.response;
}

}  // namespace
}  // namespace fleetsched::engine
