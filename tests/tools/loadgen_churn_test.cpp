// The load generator's churn mode against the real `fleetsched serve` (a process) watching the
// load generator's fake kube-apiserver: pods must be bound through the extender, the Bindings
// must come back through the pod watch (the cache charges and, after the pods' lifetime,
// uncharges their nodes), and the cache must end up agreeing with the API server.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/loopback.h"
#include "tools/apiserver/fake_apiserver.h"
#include "tools/loadgen/loadgen.h"

extern char** environ;

namespace fleetsched::tools::loadgen {
namespace {

using namespace std::chrono_literals;

uint16_t freePort() {
  uint16_t port = 0;
  const int fd = testing::listenOnLoopback(port);
  ::close(fd);
  return port;
}

// GET `path` from 127.0.0.1:port; status 0 when nothing answered.
testing::HttpResponse get(uint16_t port, const std::string& path) {
  testing::HttpClient client(port);
  if (!client.connected()) return {};
  client.send("GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n");
  return client.next();
}

// A sample's value in a Prometheus text page (-1 when missing).
double sample(const std::string& page, const std::string& series) {
  const size_t at = page.find("\n" + series + " ");
  return at == std::string::npos ? -1 : std::atof(page.c_str() + at + series.size() + 2);
}

// The sum of /debug/nodes' MILLICPU_FREE column: it moves whenever a node is charged or uncharged.
long long freeMilliCpu(const std::string& table) {
  std::istringstream in(table);
  std::string line;
  long long sum = 0;
  std::getline(in, line);  // header
  while (std::getline(in, line)) sum += std::atoll(line.c_str() + line.rfind('\t') + 1);
  return sum;
}

TEST(LoadgenChurn, BindsComeBackThroughThePodWatch) {
  const char* binary = std::getenv("FLEETSCHED_BIN");
  ASSERT_NE(binary, nullptr);
  const uint16_t apiPort = freePort(), servePort = freePort();

  LoadgenOptions o;
  o.target = "127.0.0.1:" + std::to_string(servePort);
  o.corpusNodes = 100;
  o.corpusPods = 64;
  o.seed = 5;
  o.apiserverPort = apiPort;
  o.churn = true;
  o.podLifetime = 0.3;
  o.readyTimeout = 30;
  o.warmup = 0;
  // A fixed 1.5 s closed loop, not a pod count: however fast the machine, the pods bound in its
  // first 1.2 s outlive their 0.3 s and are deleted during the run, and those bound in its last
  // 0.3 s are still bound at its end (400 pods once took under 0.3 s: no deletion).
  o.duration = 1.5;
  o.quiet = true;
  LoadgenResult result;
  bool ran = false;
  std::atomic<bool> finished{false};
  std::thread load([&] {
    ran = runLoad(o, result);
    finished = true;
  });

  // serve once the API server listens (it would retry, only later).
  for (int i = 0; i < 500 && !testing::HttpClient(apiPort).connected(); ++i) std::this_thread::sleep_for(10ms);
  const std::string kubeconfig = ::testing::TempDir() + "loadgen_churn.kubeconfig";
  std::ofstream(kubeconfig) << apiserver::kubeconfig(apiPort);
  const std::string log = ::testing::TempDir() + "loadgen_churn.serve.log";
  std::vector<std::string> args = {binary, "serve", "--listen", o.target, "--kubeconfig", kubeconfig,
                                   "--bind", "--enable-debug-handlers",
                                   // At the default idle priority, the thread that posts the
                                   // Bindings got no CPU beside busy tests: bind p50 0.4 s, 4 pods.
                                   "--ingest-priority=normal"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = -1;
  const int spawned = posix_spawn(&pid, binary, &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) load.join();
  ASSERT_EQ(spawned, 0);

  // While the load runs: the cache's free CPU, as /debug/nodes shows it.
  std::set<long long> freeCpu;
  while (!finished) {
    if (auto r = get(servePort, "/debug/nodes"); r.status == 200) freeCpu.insert(freeMilliCpu(r.body));
    std::this_thread::sleep_for(20ms);
  }
  load.join();
  SCOPED_TRACE("pods " + std::to_string(result.pods) + ", unschedulable " + std::to_string(result.podsUnschedulable) +
               ", API server: bound " + std::to_string(result.apiPodsBound) + ", deleted " +
               std::to_string(result.apiPodsDeleted) + ", live " + std::to_string(result.apiLiveBound) + ", bind p50 " +
               std::to_string(result.bind.latency.percentile(50) / 1000) + " us, " + std::to_string(result.seconds) + " s");
  EXPECT_TRUE(ran);
  EXPECT_EQ(result.filter.errors + result.prioritize.errors + result.bind.errors, 0u);
  EXPECT_GE(result.pods, 20u);
  EXPECT_GT(result.pods, result.podsUnschedulable);
  EXPECT_GT(result.bind.latency.count(), 0u);
  // Every pod bound through the extender was bound on the API server, none refused, and some
  // lived out their lifetime during the run.
  // (A pod started after the measured window, before its timer ended the run, is bound but not
  // counted: at most one per connection and depth.)
  EXPECT_GE(result.apiPodsBound, result.pods);
  EXPECT_LE(result.apiPodsBound, result.pods + static_cast<uint64_t>(o.connections * o.depth));
  EXPECT_EQ(result.apiBindingsRefused, 0u);
  EXPECT_GT(result.apiPodsDeleted, result.podsUnschedulable);
  EXPECT_GT(result.apiLiveBound, 0u);
  // Nodes were charged and uncharged while pods came and went.
  EXPECT_GE(freeCpu.size(), 3u);

  // The watch delivered every Binding and deletion: the cache holds what the API server holds
  // (its metrics are refreshed every second).
  std::string metrics;
  const double inFlight = static_cast<double>(o.connections * o.depth);
  const std::string modified = R"(fleetsched_watch_events_total{resource="pods",type="modified"})";
  const std::string deleted = R"(fleetsched_watch_events_total{resource="pods",type="deleted"})";
  for (int i = 0; i < 50; ++i) {
    metrics = get(servePort, "/metrics").body;
    if (sample(metrics, modified) == static_cast<double>(result.apiPodsBound) &&
        sample(metrics, deleted) == static_cast<double>(result.apiPodsDeleted) &&
        sample(metrics, "fleetsched_cache_pods") == static_cast<double>(result.apiLiveBound) &&
        sample(metrics, "fleetsched_bind_pods_remembered") <= inFlight) {
      break;
    }
    std::this_thread::sleep_for(100ms);
  }
  EXPECT_EQ(sample(metrics, modified), static_cast<double>(result.apiPodsBound));
  EXPECT_EQ(sample(metrics, deleted), static_cast<double>(result.apiPodsDeleted));
  EXPECT_EQ(sample(metrics, "fleetsched_cache_pods"), static_cast<double>(result.apiLiveBound));
  EXPECT_EQ(sample(metrics, R"(fleetsched_reservations{state="live"})"), 0);
  // Pods filtered but never bound (no node kept them) were deleted on the API server, and their
  // deletion came through the watch: serve remembers only the pods still in flight. It kept
  // every one of them (2,942 in a release build's run) before it listened for deletions. A slow
  // run (ASan, a busy machine: 487 pods) may fill no node and leave no pod unschedulable.
  EXPECT_LE(sample(metrics, "fleetsched_bind_pods_remembered"), inFlight);

  ::kill(pid, SIGTERM);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (HasFailure()) {
    std::ifstream in(log);
    std::stringstream text;
    text << in.rdbuf();
    std::fprintf(stderr, "fleetsched serve's log:\n%s", text.str().c_str());
  }
}

}  // namespace
}  // namespace fleetsched::tools::loadgen
