// Loopback tests of the load generator against a small blocking HTTP server on port 0: it must
// send well-formed kube-scheduler requests (filter, then prioritize after filter's reply), count
// what it measured, and report failures instead of hiding them.
#include "tools/loadgen/loadgen.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <llhttp.h>
#include <netinet/in.h>
#include <simdjson.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace fleetsched::tools::loadgen {
namespace {

// Answers filter with the first `keep` nodes of the request (NodeNames or Nodes, as sent) and
// prioritize with 200 "[]" (or `failStatus` when set), recording the request path sequence per
// connection and the nodes of every request, and checking each body is JSON with a Pod.
class TestServer {
 public:
  // closeAfter > 0: drop each connection after that many requests, unanswered.
  // arrayForFilter: answer filter with "[]" too, which is no ExtenderFilterResult.
  explicit TestServer(int failStatus = 0, int closeAfter = 0, size_t keep = 3, bool arrayForFilter = false)
      : failStatus_(failStatus), closeAfter_(closeAfter), keep_(keep), arrayForFilter_(arrayForFilter) {
    listenFd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(listenFd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_EQ(::listen(listenFd_, 16), 0);
    socklen_t len = sizeof addr;
    ::getsockname(listenFd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    acceptor_ = std::thread([this] { acceptLoop(); });
  }
  ~TestServer() {
    ::shutdown(listenFd_, SHUT_RDWR);
    ::close(listenFd_);
    acceptor_.join();
    for (auto& t : workers_) t.join();
  }
  std::string target() const { return "127.0.0.1:" + std::to_string(port_); }

  std::mutex mu;
  std::vector<std::vector<std::string>> paths;  // per connection
  // Per request, in arrival order over all connections: the path and the nodes' names it carried.
  std::vector<std::pair<std::string, std::vector<std::string>>> requests;
  std::atomic<int> badBodies{0};
  std::set<std::string> podNames;  // metadata.name of every Pod sent

 private:
  struct Conn {
    TestServer* server;
    int fd;
    size_t index;
    std::string url, body;
    int served = 0;
    bool dropped = false;
  };

  void acceptLoop() {
    for (;;) {
      int fd = ::accept(listenFd_, nullptr, nullptr);
      if (fd < 0) return;
      size_t index;
      {
        std::lock_guard lock(mu);
        index = paths.size();
        paths.emplace_back();
      }
      workers_.emplace_back([this, fd, index] { serve(fd, index); });
    }
  }

  void serve(int fd, size_t index) {
    llhttp_settings_t settings;
    llhttp_settings_init(&settings);
    settings.on_url = [](llhttp_t* p, const char* at, size_t n) {
      static_cast<Conn*>(p->data)->url.append(at, n);
      return 0;
    };
    settings.on_body = [](llhttp_t* p, const char* at, size_t n) {
      static_cast<Conn*>(p->data)->body.append(at, n);
      return 0;
    };
    settings.on_message_complete = [](llhttp_t* p) {
      auto* c = static_cast<Conn*>(p->data);
      c->server->onRequest(*c);
      c->url.clear();
      c->body.clear();
      return 0;
    };
    llhttp_t parser;
    llhttp_init(&parser, HTTP_REQUEST, &settings);
    Conn conn{this, fd, index, {}, {}};
    parser.data = &conn;
    char buf[65536];
    for (;;) {
      ssize_t n = ::read(fd, buf, sizeof buf);
      if (n <= 0) break;
      if (llhttp_execute(&parser, buf, static_cast<size_t>(n)) != HPE_OK) break;
      if (conn.dropped) break;
    }
    ::close(fd);
  }

  void onRequest(Conn& c) {
    if (closeAfter_ && ++c.served > closeAfter_) {
      c.dropped = true;
      return;
    }
    simdjson::dom::parser parser;
    simdjson::dom::element doc, pod, list;
    if (parser.parse(c.body).get(doc) != simdjson::SUCCESS || doc["Pod"].get(pod) != simdjson::SUCCESS) ++badBodies;
    // The nodes the request carries, and the reply filter gives: the first keep_ of them.
    std::vector<std::string> names;
    std::string kept;
    const bool nodeNames = doc["NodeNames"].get(list) == simdjson::SUCCESS && !list.is_null();
    if (nodeNames) {
      for (simdjson::dom::element n : list.get_array()) {
        names.emplace_back(n.get_string().value());
        if (names.size() <= keep_) kept += (names.size() > 1 ? ",\"" : "\"") + names.back() + "\"";
      }
    } else if (doc["Nodes"]["items"].get(list) == simdjson::SUCCESS) {
      for (simdjson::dom::element n : list.get_array()) {
        names.emplace_back(n["metadata"]["name"].get_string().value());
        if (names.size() <= keep_) kept += (names.size() > 1 ? "," : "") + simdjson::minify(n);
      }
    }
    {
      std::lock_guard lock(mu);
      paths[c.index].push_back(c.url);
      std::string_view podName;
      if (pod["metadata"]["name"].get(podName) == simdjson::SUCCESS) podNames.emplace(podName);
      requests.emplace_back(c.url, names);
    }
    std::string body = "[]";
    if (c.url.ends_with("/filter") && !arrayForFilter_) {
      body = nodeNames ? R"({"Nodes":null,"NodeNames":[)" + kept + R"(],"FailedNodes":{},"Error":""})"
                       : R"({"Nodes":{"metadata":{},"items":[)" + kept + R"(]},"NodeNames":null,"FailedNodes":{},"Error":""})";
    }
    const bool fail = failStatus_ && c.url.ends_with("/prioritize");
    std::string reply = fail ? "HTTP/1.1 " + std::to_string(failStatus_) + " Oops\r\nContent-Length: 0\r\n\r\n"
                             : "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
                                   std::to_string(body.size()) + "\r\n\r\n" + body;
    ssize_t off = 0;
    while (off < static_cast<ssize_t>(reply.size())) {
      ssize_t n = ::write(c.fd, reply.data() + off, reply.size() - static_cast<size_t>(off));
      if (n <= 0) return;
      off += n;
    }
  }

  int failStatus_;
  int closeAfter_;
  size_t keep_;
  bool arrayForFilter_;
  int listenFd_ = -1;
  uint16_t port_ = 0;
  std::thread acceptor_;
  std::vector<std::thread> workers_;
};

bool writeFile(const std::string& path, const std::string& text) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) return false;
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  return std::fclose(f) == 0 && ok;
}

LoadgenOptions smallRun(const std::string& target) {
  LoadgenOptions o;
  o.target = target;
  o.urlPrefix = "/sched/";
  o.corpusNodes = 30;
  o.corpusPods = 8;
  o.duration = 0.3;
  o.warmup = 0.1;
  o.quiet = true;
  return o;
}

TEST(Loadgen, ClosedLoopSendsFilterThenPrioritizePerPod) {
  TestServer server;
  LoadgenOptions o = smallRun(server.target());
  o.connections = 2;
  o.depth = 1;
  LoadgenResult r;
  ASSERT_TRUE(runLoad(o, r));
  EXPECT_GT(r.pods, 10u);
  EXPECT_EQ(r.filter.errors + r.prioritize.errors, 0u);
  EXPECT_EQ(r.pod.latency.count(), r.pods);
  EXPECT_GE(r.filter.latency.count(), r.pods);
  EXPECT_EQ(server.badBodies.load(), 0);
  std::lock_guard lock(server.mu);
  ASSERT_EQ(server.paths.size(), 2u);
  size_t total = 0;
  for (const auto& seq : server.paths) {
    total += seq.size();
    for (size_t i = 0; i < seq.size(); ++i) {
      EXPECT_EQ(seq[i], i % 2 == 0 ? "/sched/filter" : "/sched/prioritize") << i;
    }
  }
  EXPECT_EQ(total, r.requests);
}

// kube-scheduler sends prioritize only the nodes filter kept, in filter's reply order; each
// request's filter answer here keeps the first three nodes it was sent, so every prioritize
// carries the first three of a filter request sent before it (pipelined pods interleave).
void expectPrioritizeGetsWhatFilterKept(TestServer& server, size_t fleetNodes) {
  std::lock_guard lock(server.mu);
  size_t prioritized = 0;
  std::set<std::vector<std::string>> keptByFilter;
  for (const auto& [path, names] : server.requests) {
    if (path.ends_with("/filter")) {
      EXPECT_EQ(names.size(), fleetNodes);
      keptByFilter.emplace(names.begin(), names.begin() + std::min<size_t>(3, names.size()));
    } else {
      ++prioritized;
      ASSERT_EQ(names.size(), 3u);
      EXPECT_TRUE(keptByFilter.contains(names)) << names[0];
    }
  }
  EXPECT_GT(prioritized, 10u);
}

// The filter lists of a run: distinct orders of the same fleet, or one list.
std::set<std::vector<std::string>> filterLists(TestServer& server, size_t fleetNodes) {
  std::lock_guard lock(server.mu);
  std::set<std::vector<std::string>> lists;
  std::set<std::string> fleet;
  for (const auto& [path, names] : server.requests) {
    if (!path.ends_with("/filter")) continue;
    lists.insert(names);
    fleet.insert(names.begin(), names.end());
    EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), fleetNodes) << "a node twice";
  }
  EXPECT_EQ(fleet.size(), fleetNodes);
  return lists;
}

TEST(Loadgen, KubeSchedulerOrderGivesEachPodItsOwnOrder) {
  TestServer server;
  LoadgenOptions o = smallRun(server.target());
  LoadgenResult r;
  ASSERT_TRUE(runLoad(o, r));
  EXPECT_EQ(filterLists(server, o.corpusNodes).size(), o.corpusPods);
}

TEST(Loadgen, RepeatedOrderSendsEveryPodOneList) {
  TestServer server;
  LoadgenOptions o = smallRun(server.target());
  o.order = NodeOrder::kRepeated;
  LoadgenResult r;
  ASSERT_TRUE(runLoad(o, r));
  EXPECT_EQ(filterLists(server, o.corpusNodes).size(), 1u);
}

TEST(Loadgen, PrioritizeCarriesOnlyTheNodesFilterKept) {
  TestServer server;
  LoadgenOptions o = smallRun(server.target());
  LoadgenResult r;
  ASSERT_TRUE(runLoad(o, r));
  EXPECT_EQ(r.filter.errors + r.prioritize.errors, 0u);
  expectPrioritizeGetsWhatFilterKept(server, o.corpusNodes);
}

TEST(Loadgen, AllNodesToPrioritizeWhenAskedFor) {
  TestServer server;
  LoadgenOptions o = smallRun(server.target());
  o.prioritizeAllNodes = true;
  LoadgenResult r;
  ASSERT_TRUE(runLoad(o, r));
  std::lock_guard lock(server.mu);
  for (const auto& [path, names] : server.requests) EXPECT_EQ(names.size(), o.corpusNodes) << path;
}

TEST(Loadgen, OneFeasibleNodeMeansNoPrioritize) {
  TestServer server(0, 0, /*keep=*/1);
  LoadgenOptions o = smallRun(server.target());
  LoadgenResult r;
  ASSERT_TRUE(runLoad(o, r));
  EXPECT_EQ(r.pods, 0u);  // pods/s counts filter+prioritize pairs
  EXPECT_GT(r.podsWithoutPrioritize, 10u);
  EXPECT_EQ(r.prioritize.latency.count(), 0u);
  EXPECT_EQ(r.filter.errors, 0u);
  std::lock_guard lock(server.mu);
  for (const auto& [path, names] : server.requests) EXPECT_TRUE(path.ends_with("/filter")) << path;
}

TEST(Loadgen, FilterReplyThatIsNoFilterResultIsAnError) {
  TestServer server(0, 0, 3, /*arrayForFilter=*/true);
  LoadgenOptions o = smallRun(server.target());
  LoadgenResult r;
  ASSERT_TRUE(runLoad(o, r));
  EXPECT_GT(r.filter.errors, 0u);
  EXPECT_EQ(r.pods + r.podsWithoutPrioritize, 0u);
  EXPECT_EQ(runLoadgen(o), 3);
}

TEST(Loadgen, PipelinedFullModeRequestsAreWellFormed) {
  TestServer server;
  LoadgenOptions o = smallRun(server.target());
  o.mode = ArgsMode::kFull;
  o.fullModeNodes = 5;
  o.depth = 4;
  LoadgenResult r;
  ASSERT_TRUE(runLoad(o, r));
  EXPECT_GT(r.pods, 10u);
  EXPECT_EQ(server.badBodies.load(), 0);
  EXPECT_EQ(r.filter.errors + r.prioritize.errors, 0u);
  expectPrioritizeGetsWhatFilterKept(server, o.fullModeNodes);
}

// A cluster's dump (kubectl get -o json): the run sends those pods with those nodes, each filter
// a permutation of the node list, and full mode carries the nodes' own objects.
TEST(Loadgen, ADumpSendsItsOwnPodsAndNodes) {
  const std::string nodes = ::testing::TempDir() + "loadgen_dump_nodes.json";
  const std::string pods = ::testing::TempDir() + "loadgen_dump_pods.json";
  std::string list = R"({"apiVersion":"v1","kind":"NodeList","items":[)";
  for (int i = 0; i < 12; ++i) {
    list += (i ? "," : "") + std::string(R"({"metadata":{"name":"dump-)") + std::to_string(i) +
            R"(","labels":{"topology.kubernetes.io/zone":"z)" + std::to_string(i % 3) + R"("}},"status":{}})";
  }
  ASSERT_TRUE(writeFile(nodes, list + "]}"));
  ASSERT_TRUE(writeFile(pods, R"({"kind":"PodList","items":[{"metadata":{"name":"p-a","namespace":"ml","uid":"u1"},)"
                              R"("spec":{"containers":[{"name":"c"}]}},{"metadata":{"name":"p-b"},"spec":{}}]})"));
  for (ArgsMode mode : {ArgsMode::kNodeNames, ArgsMode::kFull}) {
    TestServer server;
    LoadgenOptions o = smallRun(server.target());
    o.mode = mode;
    o.fullModeNodes = 100;
    o.nodesFile = nodes;
    o.podsFile = pods;
    LoadgenResult r;
    ASSERT_TRUE(runLoad(o, r));
    EXPECT_GT(r.pods, 4u);
    EXPECT_EQ(server.badBodies.load(), 0);
    std::set<std::vector<std::string>> lists = filterLists(server, 12);
    EXPECT_EQ(lists.size(), 2u);  // one order per pod
    EXPECT_TRUE(lists.begin()->front().starts_with("dump-"));
    std::lock_guard lock(server.mu);
    EXPECT_EQ(server.podNames, (std::set<std::string>{"p-a", "p-b"}));
  }
}

TEST(Loadgen, ADumpThatIsNoListIsRefusedWithItsReason) {
  const std::string nodes = ::testing::TempDir() + "loadgen_dump_bad_nodes.json";
  const std::string pods = ::testing::TempDir() + "loadgen_dump_bad_pods.json";
  ASSERT_TRUE(writeFile(nodes, R"({"items":[{"metadata":{"name":"n"}}]})"));
  ASSERT_TRUE(writeFile(pods, R"({"metadata":{"name":"one-pod"}})"));
  LoadgenOptions o = smallRun("127.0.0.1:1");
  o.nodesFile = nodes;
  LoadgenResult r;
  EXPECT_FALSE(runLoad(o, r));  // no --pods-file
  o.podsFile = pods;
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(runLoad(o, r));
  EXPECT_NE(::testing::internal::GetCapturedStderr().find("is not a list"), std::string::npos);
  o.podsFile = nodes;
  o.nodesFile = ::testing::TempDir() + "loadgen_dump_missing.json";
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(runLoad(o, r));
  EXPECT_NE(::testing::internal::GetCapturedStderr().find("cannot read"), std::string::npos);
}

TEST(Loadgen, OpenLoopKeepsTheRate) {
  TestServer server;
  LoadgenOptions o = smallRun(server.target());
  o.rate = 200;
  o.duration = 0.5;
  LoadgenResult r;
  ASSERT_TRUE(runLoad(o, r));
  // 100 pods are scheduled in the measured window; allow for a slow machine at the edges.
  EXPECT_GE(r.pods, 90u);
  EXPECT_LE(r.pods, 101u);
}

// --max-pods ends an open-loop run once its last pod is answered, not at the end of --duration:
// the stop used to be noticed only by the next answer, and when every pod was already answered
// the run waited out its whole duration.
TEST(Loadgen, OpenLoopEndsAtMaxPods) {
  TestServer server;
  LoadgenOptions o = smallRun(server.target());
  o.rate = 200;
  o.warmup = 0;
  o.duration = 20;
  o.maxPods = 20;
  LoadgenResult r;
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(runLoad(o, r));
  EXPECT_EQ(r.pods, 20u);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
}

TEST(Loadgen, ErrorRepliesAreCountedNotMeasured) {
  TestServer server(500);
  LoadgenOptions o = smallRun(server.target());
  LoadgenResult r;
  ASSERT_TRUE(runLoad(o, r));
  EXPECT_GT(r.prioritize.errors, 0u);
  EXPECT_EQ(r.prioritize.latency.count(), 0u);
  EXPECT_EQ(r.pods, 0u);
  EXPECT_EQ(r.filter.errors, 0u);
  EXPECT_EQ(runLoadgen(o), 3);
}

TEST(Loadgen, DroppedConnectionsAreCountedAndReconnected) {
  TestServer server(0, /*closeAfter=*/7);
  LoadgenOptions o = smallRun(server.target());
  o.duration = 0.6;
  LoadgenResult r;
  ASSERT_TRUE(runLoad(o, r));
  EXPECT_GT(r.reconnects, 0u);
  EXPECT_GT(r.filter.errors + r.prioritize.errors, 0u);
  EXPECT_GT(r.pods, 3u);  // work went on over the new connections
  std::lock_guard lock(server.mu);
  EXPECT_GT(server.paths.size(), 1u);
}

TEST(Loadgen, NoServerIsAFailedRun) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  std::string target = "127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
  ::close(fd);  // nothing listens there now
  LoadgenResult r;
  EXPECT_FALSE(runLoad(smallRun(target), r));
}

TEST(Loadgen, ReportsRenderTheResult) {
  TestServer server;
  LoadgenOptions o = smallRun(server.target());
  LoadgenResult r;
  ASSERT_TRUE(runLoad(o, r));
  std::string json = formatJson(o, r);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(json).get(doc), simdjson::SUCCESS) << json;
  double pods = 0, p99 = 0;
  ASSERT_EQ(doc["pods"].get(pods), simdjson::SUCCESS);
  EXPECT_EQ(static_cast<uint64_t>(pods), r.pods);
  ASSERT_EQ(doc["verbs"]["filter"]["p99Us"].get(p99), simdjson::SUCCESS);
  EXPECT_NEAR(p99, static_cast<double>(r.filter.latency.percentile(99)) / 1e3, 1e-3 * p99 + 1e-3);
  std::string svg = formatSvg(o, r);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("<polyline"), std::string::npos);
  std::string table = formatTable(o, r);
  EXPECT_NE(table.find("prioritize"), std::string::npos);
}

}  // namespace
}  // namespace fleetsched::tools::loadgen
