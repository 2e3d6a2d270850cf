// `fleetsched serve` as a process: how it starts, refuses to start, and shares a port.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/loopback.h"

extern char** environ;

namespace {

std::string gBinary;

// A port nobody listens on now (bound to 0, read back, closed).
uint16_t freePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

bool accepts(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
}

// A connected client socket on 127.0.0.1:port (-1 when refused), reads time out after 10 s.
int dial(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  timeval tv{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  return fd;
}

void sendAll(int fd, const std::string& data) { ::send(fd, data.data(), data.size(), MSG_NOSIGNAL); }

// Everything the peer sends until it closes (or 10 s pass).
std::string readToEof(int fd) {
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) out.append(buf, static_cast<size_t>(n));
  return out;
}

// One HTTP/1.1 exchange with Connection: close; the whole reply, or "" when nothing answered.
std::string exchange(uint16_t port, const std::string& method, const std::string& path, const std::string& body = "") {
  const int fd = dial(port);
  if (fd < 0) return "";
  std::string req = method + " " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: " +
                    std::to_string(body.size()) + "\r\n\r\n" + body;
  sendAll(fd, req);
  std::string out = readToEof(fd);
  ::close(fd);
  return out;
}


// The verbs listener's fleetsched_http_received_bytes_total, scraped from the probe listener.
double verbBytesReceived(uint16_t probes) {
  const std::string m = exchange(probes, "GET", "/metrics");
  const std::string series = "\nfleetsched_http_received_bytes_total ";
  const size_t at = m.find(series);
  return at == std::string::npos ? -1 : std::stod(m.substr(at + series.size()));
}

struct Proc {
  pid_t pid = -1;
  std::string errFile;
  int status = 0;
  bool exited = false;

  // Waits up to `ms` for the process to exit.
  bool waitExit(int ms) {
    if (exited) return true;
    auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (std::chrono::steady_clock::now() < until) {
      if (::waitpid(pid, &status, WNOHANG) == pid) return exited = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }
  void stop() {
    if (pid <= 0 || exited) return;
    ::kill(pid, SIGTERM);
    if (!waitExit(5000)) {
      ::kill(pid, SIGKILL);
      waitExit(5000);
    }
  }
  std::string err() const {
    std::ifstream in(errFile);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  ~Proc() {
    stop();
    if (!errFile.empty()) std::filesystem::remove(errFile);
  }
};

void spawn(Proc& p, const std::vector<std::string>& args, const std::string& tag) {
  p.errFile = (std::filesystem::temp_directory_path() /
               ("fleetsched-serve-" + std::to_string(::getpid()) + "-" + tag + ".err"))
                  .string();
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 2, p.errFile.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  std::vector<char*> argv;
  argv.push_back(gBinary.data());
  std::vector<std::string> copy = args;
  for (std::string& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  ASSERT_EQ(posix_spawn(&p.pid, gBinary.c_str(), &fa, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&fa);
}

void waitListening(Proc& p, uint16_t port) {
  for (int i = 0; i < 250 && !accepts(port); ++i) {
    ASSERT_FALSE(p.waitExit(0)) << "serve exited: " << p.err();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE(accepts(port)) << p.err();
}

// Waits until serve's /readyz on `probes` answers 200 (its cache has synced).
void waitReady(Proc& p, uint16_t probes) {
  waitListening(p, probes);
  for (int i = 0; i < 250 && exchange(probes, "GET", "/readyz").rfind("HTTP/1.1 200", 0) != 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_EQ(exchange(probes, "GET", "/readyz").rfind("HTTP/1.1 200", 0), 0u) << p.err();
}

// A pod ml/p (UID u-1) asking for 100m of CPU, for the bind tests.
constexpr const char* kPodU1 =
    R"({"metadata":{"name":"p","namespace":"ml","uid":"u-1"},)"
    R"("spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"100m"}}}]}})";

// Defect 7 of issue 26: SO_REUSEPORT was always set, so a second serve on a port in use started
// and silently took a share of kube-scheduler's connections.
TEST(ServeProcess, SecondServeOnAPortInUseFailsWithExitCode1) {
  const uint16_t port = freePort();
  const std::string listen = "--listen=127.0.0.1:" + std::to_string(port);
  Proc first;
  spawn(first, {"serve", listen}, "first");
  waitListening(first, port);

  Proc second;
  spawn(second, {"serve", listen}, "second");
  ASSERT_TRUE(second.waitExit(10000)) << "a second serve on the same port kept running: " << second.err();
  ASSERT_TRUE(WIFEXITED(second.status));
  EXPECT_EQ(WEXITSTATUS(second.status), 1);
  EXPECT_NE(second.err().find("address already in use"), std::string::npos) << second.err();
  EXPECT_NE(second.err().find("--reuse-port"), std::string::npos) << second.err();
  EXPECT_TRUE(accepts(port));  // the first one is unharmed
}

TEST(ServeProcess, ReusePortSharesThePortWhenBothAskForIt) {
  const uint16_t port = freePort();
  const std::string listen = "--listen=127.0.0.1:" + std::to_string(port);
  Proc first, second;
  spawn(first, {"serve", listen, "--reuse-port"}, "rp-first");
  waitListening(first, port);
  spawn(second, {"serve", listen, "--reuse-port"}, "rp-second");
  EXPECT_FALSE(second.waitExit(1500)) << second.err();
  second.stop();
  first.stop();
  ASSERT_TRUE(WIFEXITED(first.status));
  EXPECT_EQ(WEXITSTATUS(first.status), 0);
}

// Issue 26: the sidecar's verbs listen on loopback only; kubelet probes and Prometheus use a
// second listener that serves nothing else.
TEST(ServeProcess, ProbeListenerServesProbesAndMetricsButNoVerbs) {
  const uint16_t verbs = freePort();
  uint16_t probes = freePort();
  while (probes == verbs) probes = freePort();
  Proc p;
  spawn(p, {"serve", "--listen=127.0.0.1:" + std::to_string(verbs), "--probe-listen=127.0.0.1:" + std::to_string(probes)},
        "probes");
  waitListening(p, probes);
  waitListening(p, verbs);
  EXPECT_EQ(exchange(probes, "GET", "/healthz").rfind("HTTP/1.1 200", 0), 0u);
  EXPECT_EQ(exchange(probes, "GET", "/readyz").rfind("HTTP/1.1 200", 0), 0u);
  std::string metrics = exchange(probes, "GET", "/metrics");
  EXPECT_EQ(metrics.rfind("HTTP/1.1 200", 0), 0u);
  EXPECT_NE(metrics.find("fleetsched_cache_nodes"), std::string::npos);
  const std::string args = R"({"Pod":{"metadata":{"name":"p","namespace":"ml","uid":"u"}},"NodeNames":[]})";
  for (const char* verb : {"/filter", "/prioritize", "/preempt", "/bind"}) {
    EXPECT_EQ(exchange(probes, "POST", verb, args).rfind("HTTP/1.1 404", 0), 0u) << verb;
  }
  EXPECT_EQ(exchange(verbs, "POST", "/filter", args).rfind("HTTP/1.1 200", 0), 0u);
  // /debug/* is off unless enabled, on both listeners, and the answer says how to turn it on.
  for (uint16_t port : {probes, verbs}) {
    for (const char* path : {"/debug/nodes", "/debug/audit", "/debug/pods/ml/p"}) {
      const std::string r = exchange(port, "GET", path);
      EXPECT_EQ(r.rfind("HTTP/1.1 404", 0), 0u) << path << ": " << r;
      EXPECT_NE(r.find("--enable-debug-handlers"), std::string::npos) << r;
    }
  }
}

// Issue 26: /debug/* only with --enable-debug-handlers, on the probe listener when there is one
// (never beside the verbs), else on the verbs listener. /debug/pods shows a pod's last filter
// node by node; -v=4 logs one line per decision with the reasons by count.
TEST(ServeProcess, DebugHandlersWhenEnabledExplainDecisions) {
  const std::string args =
      R"({"Pod":{"metadata":{"name":"train-0","namespace":"ml","uid":"u1"},"spec":{"containers":[{"name":"c",)"
      R"("resources":{"requests":{"cpu":"4","nvidia.com/gpu":"2"}}}]}},"NodeNames":[)"
      R"("ip-10-0-0-10.us-west-2.compute.internal","ip-10-0-1-22.us-west-2.compute.internal"]})";
  {
    const auto [verbs, probes] = std::pair{freePort(), freePort()};
    if (verbs == probes) GTEST_SKIP() << "the kernel handed out one port twice";
    Proc p;
    spawn(p, {"serve", "--listen=127.0.0.1:" + std::to_string(verbs), "--probe-listen=127.0.0.1:" + std::to_string(probes),
              "--enable-debug-handlers", "--debug-decisions=2", "-v=4"},
          "debug-probes");
    waitListening(p, probes);
    waitListening(p, verbs);
    EXPECT_EQ(exchange(probes, "GET", "/debug/nodes").rfind("HTTP/1.1 200", 0), 0u);
    const std::string onVerbs = exchange(verbs, "GET", "/debug/nodes");
    EXPECT_EQ(onVerbs.rfind("HTTP/1.1 404", 0), 0u) << onVerbs;
    EXPECT_NE(onVerbs.find("--probe-listen"), std::string::npos) << onVerbs;
    EXPECT_EQ(exchange(probes, "GET", "/debug/pods/ml/train-0").rfind("HTTP/1.1 404", 0), 0u);
    EXPECT_EQ(exchange(verbs, "POST", "/filter", args).rfind("HTTP/1.1 200", 0), 0u);
    const std::string pod = exchange(probes, "GET", "/debug/pods/ml/train-0");
    EXPECT_EQ(pod.rfind("HTTP/1.1 200", 0), 0u) << pod;
    EXPECT_NE(pod.find(R"("ip-10-0-0-10.us-west-2.compute.internal":"pass")"), std::string::npos) << pod;
    EXPECT_NE(pod.find(R"("ip-10-0-1-22.us-west-2.compute.internal":"unresolvable: node is spot capacity)"),
              std::string::npos)
        << pod;
    EXPECT_EQ(exchange(probes, "GET", "/debug/pods/ML/train-0").rfind("HTTP/1.1 400", 0), 0u);
    EXPECT_EQ(exchange(probes, "GET", "/debug/pods/ml/../../x").rfind("HTTP/1.1 400", 0), 0u);
    EXPECT_EQ(exchange(probes, "GET", "/debug/pods/ml/nobody").rfind("HTTP/1.1 404", 0), 0u);
    ::kill(p.pid, SIGTERM);
    ASSERT_TRUE(p.waitExit(25000));
    const std::string err = p.err();
    EXPECT_NE(err.find(R"(] "filter" pod="ml/train-0" uid="u1" nodes=2 kept=1 reasons={"node is spot capacity; )"),
              std::string::npos)
        << err;
  }
  {
    // Without --probe-listen: on the verbs listener.
    const uint16_t verbs = freePort();
    Proc p;
    spawn(p, {"serve", "--listen=127.0.0.1:" + std::to_string(verbs), "--enable-debug-handlers"}, "debug-verbs");
    waitListening(p, verbs);
    EXPECT_EQ(exchange(verbs, "GET", "/debug/nodes").rfind("HTTP/1.1 200", 0), 0u);
    EXPECT_EQ(exchange(verbs, "POST", "/filter", args).rfind("HTTP/1.1 200", 0), 0u);
    EXPECT_EQ(exchange(verbs, "GET", "/debug/pods/ml/train-0").rfind("HTTP/1.1 200", 0), 0u);
    ::kill(p.pid, SIGTERM);
    ASSERT_TRUE(p.waitExit(25000));
    EXPECT_EQ(p.err().find("\"filter\""), std::string::npos) << "a decision line below -v=4";
  }
}

// Two listeners on free ports: {verbs, probes}.
std::pair<uint16_t, uint16_t> twoPorts() {
  const uint16_t verbs = freePort();
  uint16_t probes = freePort();
  while (probes == verbs) probes = freePort();
  return {verbs, probes};
}

// Starts serve with a filter request half sent on `fd` and read by the server (so it is in
// flight, not an idle connection); returns the rest of the request.
std::string startWithRequestInFlight(Proc& p, uint16_t verbs, uint16_t probes, const std::string& grace,
                                     const std::string& tag, int& fd) {
  spawn(p, {"serve", "--listen=127.0.0.1:" + std::to_string(verbs), "--probe-listen=127.0.0.1:" + std::to_string(probes),
            "--shutdown-grace=" + grace},
        tag);
  waitListening(p, probes);
  waitListening(p, verbs);
  const std::string body = R"({"Pod":{"metadata":{"name":"p","namespace":"ml","uid":"u"}},"NodeNames":[]})";
  const std::string head = "POST /filter HTTP/1.1\r\nHost: x\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n";
  const std::string first = head + body.substr(0, 20);
  fd = dial(verbs);
  EXPECT_GE(fd, 0);
  sendAll(fd, first);
  for (int i = 0; i < 250 && verbBytesReceived(probes) < static_cast<double>(first.size()); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_GE(verbBytesReceived(probes), static_cast<double>(first.size()));
  return body.substr(20);
}

// Issue 26, lifecycle: SIGTERM closed every connection at once, so the request kube-scheduler
// had in flight (a bind already posted to kube-apiserver) got EOF. Now the verbs listener closes,
// /readyz turns 503, the request in flight is answered in full, and serve exits 0.
TEST(ServeProcess, SigtermAnswersTheRequestInFlightThenExitsZero) {
  const auto [verbs, probes] = twoPorts();
  Proc p;
  int fd = -1;
  const std::string rest = startWithRequestInFlight(p, verbs, probes, "10", "drain", fd);
  ASSERT_GE(fd, 0);
  const auto t0 = std::chrono::steady_clock::now();
  ::kill(p.pid, SIGTERM);
  for (int i = 0; i < 100 && accepts(verbs); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(accepts(verbs)) << "the verbs listener still accepts after SIGTERM";
  EXPECT_EQ(exchange(probes, "GET", "/readyz").rfind("HTTP/1.1 503", 0), 0u) << "/readyz is not 503 while draining";
  EXPECT_FALSE(p.waitExit(200)) << "exited with a request in flight: " << p.err();

  sendAll(fd, rest);
  const std::string reply = readToEof(fd);
  ::close(fd);
  EXPECT_EQ(reply.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << reply;
  EXPECT_NE(reply.find("\r\nConnection: close\r\n"), std::string::npos) << reply;
  const size_t headEnd = reply.find("\r\n\r\n");
  const size_t lengthAt = reply.find("Content-Length: ");
  ASSERT_NE(headEnd, std::string::npos);
  ASSERT_NE(lengthAt, std::string::npos);
  EXPECT_EQ(reply.size() - headEnd - 4, std::stoul(reply.substr(lengthAt + 16))) << "reply cut short: " << reply;

  ASSERT_TRUE(p.waitExit(5000)) << p.err();
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
  std::fprintf(stderr, "SIGTERM to exit, with the request finished after ~200 ms: %lld ms\n",
               static_cast<long long>(ms.count()));
  ASSERT_TRUE(WIFEXITED(p.status)) << p.err();
  EXPECT_EQ(WEXITSTATUS(p.status), 0);
  EXPECT_NE(p.err().find("drained in"), std::string::npos) << p.err();
}

// A request that never completes is cut at --shutdown-grace, and serve still exits 0.
TEST(ServeProcess, ShutdownGraceCutsWhatIsLeftAndExitsZero) {
  const auto [verbs, probes] = twoPorts();
  Proc p;
  int fd = -1;
  startWithRequestInFlight(p, verbs, probes, "1", "grace", fd);
  ASSERT_GE(fd, 0);
  const auto t0 = std::chrono::steady_clock::now();
  ::kill(p.pid, SIGTERM);
  EXPECT_FALSE(p.waitExit(700)) << "exited before the grace period: " << p.err();
  ASSERT_TRUE(p.waitExit(5000)) << p.err();
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
  EXPECT_GE(ms.count(), 900);
  EXPECT_EQ(readToEof(fd), "");
  ::close(fd);
  ASSERT_TRUE(WIFEXITED(p.status)) << p.err();
  EXPECT_EQ(WEXITSTATUS(p.status), 0);
  EXPECT_NE(p.err().find("--shutdown-grace of 1s is over: cutting 1 request(s) in flight"), std::string::npos)
      << p.err();
}

TEST(ServeProcess, SecondSigtermExitsAtOnce) {
  const auto [verbs, probes] = twoPorts();
  Proc p;
  int fd = -1;
  startWithRequestInFlight(p, verbs, probes, "60", "twice", fd);
  ASSERT_GE(fd, 0);
  ::kill(p.pid, SIGTERM);
  EXPECT_FALSE(p.waitExit(300)) << p.err();
  const auto t0 = std::chrono::steady_clock::now();
  ::kill(p.pid, SIGTERM);
  ASSERT_TRUE(p.waitExit(2000)) << p.err();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(1000));
  ::close(fd);
  ASSERT_TRUE(WIFEXITED(p.status)) << p.err();
  EXPECT_EQ(WEXITSTATUS(p.status), 0);
  EXPECT_NE(p.err().find("SIGTERM again: cutting 1 request(s) in flight"), std::string::npos) << p.err();
}

// A kube-apiserver stand-in for `serve --kubeconfig --bind`: lists one node (gpu-a) and no pods,
// refuses streaming lists (422, so the reflector pages), holds watches open, and answers a
// Binding POST 201 after bindDelayMs. One thread per connection, blocking sockets.
class FakeApiServer {
 public:
  explicit FakeApiServer(int bindDelayMs) : bindDelayMs_(bindDelayMs) {
    fd_ = fleetsched::testing::listenOnLoopback(port_);
    acceptor_ = std::thread([this] { acceptLoop(); });
  }
  ~FakeApiServer() {
    stop_ = true;
    acceptor_.join();
    std::lock_guard lock(mu_);
    for (std::thread& t : conns_) t.join();
    ::close(fd_);
  }
  uint16_t port() const { return port_; }
  bool bindingPosted() const { return bindings_.load() > 0; }
  int podLists() const { return podLists_.load(); }
  // The Lease (leader election): held by `holder`, who renews it before every read, so it never
  // expires and every write is refused; or, with "", a Lease that is missing until created.
  void leaseHeldBy(std::string holder) {
    std::lock_guard lock(leaseMu_);
    otherHolder_ = std::move(holder);
  }
  std::vector<std::string> leaseWrites() {
    std::lock_guard lock(leaseMu_);
    return leaseWrites_;
  }

 private:
  void acceptLoop() {
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0) continue;
      int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) continue;
      std::lock_guard lock(mu_);
      conns_.emplace_back([this, c] { serve(c); });
    }
  }

  // Reads more input into `in`; false when the client left or the server stops.
  bool fill(int c, std::string& in) {
    while (!stop_) {
      pollfd p{c, POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0) continue;
      char buf[8192];
      ssize_t n = ::recv(c, buf, sizeof buf, 0);
      if (n <= 0) return false;
      in.append(buf, static_cast<size_t>(n));
      return true;
    }
    return false;
  }

  static void reply(int c, int status, const std::string& body) {
    std::string r = "HTTP/1.1 " + std::to_string(status) + " X\r\nContent-Type: application/json\r\n" +
                    "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
    ::send(c, r.data(), r.size(), MSG_NOSIGNAL);
  }

  void serve(int c) {
    std::string in;
    for (;;) {
      size_t end;
      while ((end = in.find("\r\n\r\n")) == std::string::npos) {
        if (!fill(c, in)) return (void)::close(c);
      }
      const std::string head = in.substr(0, end);
      size_t length = 0;
      if (size_t at = head.find("Content-Length: "); at != std::string::npos)
        length = std::stoul(head.substr(at + 16));
      while (in.size() < end + 4 + length) {
        if (!fill(c, in)) return (void)::close(c);
      }
      const std::string body = in.substr(end + 4, length);
      in.erase(0, end + 4 + length);
      const size_t sp = head.find(' ');
      const std::string target = head.substr(sp + 1, head.find(' ', sp + 1) - sp - 1);
      const bool pods = target.starts_with("/api/v1/pods");
      if (target.starts_with("/apis/coordination.k8s.io/v1/namespaces/kube-system/leases")) {
        lease(c, head.substr(0, head.find(' ')), body);
      } else if (head.starts_with("POST") && target.ends_with("/binding")) {
        ++bindings_;
        std::this_thread::sleep_for(std::chrono::milliseconds(bindDelayMs_));
        reply(c, 201, "{}");
      } else if (target.find("sendInitialEvents=true") != std::string::npos) {
        reply(c, 422, R"({"kind":"Status","apiVersion":"v1","status":"Failure","code":422})");
      } else if (target.find("watch=1") != std::string::npos) {
        const std::string h =
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
        ::send(c, h.data(), h.size(), MSG_NOSIGNAL);
        while (fill(c, in)) {
        }
        return (void)::close(c);
      } else if (head.starts_with("GET") && (pods || target.starts_with("/api/v1/nodes"))) {
        if (pods) ++podLists_;
        const std::string node =
            R"({"metadata":{"name":"gpu-a","uid":"n-1","resourceVersion":"100"},"status":{"allocatable":)"
            R"({"cpu":"8","memory":"32Gi","pods":"110"},)"
            R"("capacity":{"cpu":"8","memory":"32Gi","pods":"110"}}})";
        const std::string kind = pods ? "PodList" : "NodeList";
        const std::string meta = R"(","apiVersion":"v1","metadata":{"resourceVersion":"100"},"items":[)";
        reply(c, 200, R"({"kind":")" + kind + meta + (pods ? "" : node) + "]}");
      } else {
        reply(c, 404, "{}");
      }
    }
  }

  // GET, POST (create) and PUT of the one Lease, with resourceVersions, as kube-apiserver keeps it.
  // Lease requests wait for the first pod list to be served, so a replica always acquires with a
  // synced cache and must list again before it binds; without the wait, acquiring while the
  // initial list is still in flight needs no second list and the count below would race.
  void lease(int c, const std::string& method, std::string body) {
    for (int i = 0; i < 1000 && podLists_.load() == 0 && !stop_; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::lock_guard lock(leaseMu_);
    if (!otherHolder_.empty()) {
      if (method != "GET") return reply(c, 409, R"({"kind":"Status","code":409,"reason":"Conflict"})");
      ++leaseVersion_;
      return reply(c, 200,
                   R"({"metadata":{"name":"fleetsched","namespace":"kube-system","resourceVersion":")" +
                       std::to_string(leaseVersion_) + R"("},"spec":{"holderIdentity":")" + otherHolder_ +
                       R"(","leaseDurationSeconds":15,"renewTime":"2026-12-06T00:00:00.)" +
                       std::to_string(100000 + leaseVersion_) + R"(Z"}})");
    }
    if (method == "GET") return lease_.empty() ? reply(c, 404, "{}") : reply(c, 200, lease_);
    if ((method == "POST") != lease_.empty()) return reply(c, 409, "{}");
    leaseWrites_.push_back(body);
    // The stored object carries a new resourceVersion instead of the one sent.
    if (size_t at = body.find(R"(,"resourceVersion":")"); at != std::string::npos) {
      body.erase(at, body.find('"', at + 20) + 1 - at);
    }
    const size_t meta = body.find(R"("metadata":{)");
    if (meta == std::string::npos) return reply(c, 400, "{}");
    body.insert(meta + 12, R"("resourceVersion":")" + std::to_string(++leaseVersion_) + R"(",)");
    lease_ = body;
    reply(c, method == "POST" ? 201 : 200, lease_);
  }

  int bindDelayMs_;
  std::atomic<int> podLists_{0};
  std::mutex leaseMu_;
  std::string otherHolder_;
  std::string lease_;
  uint64_t leaseVersion_ = 10;
  std::vector<std::string> leaseWrites_;
  int fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> bindings_{0};
  std::thread acceptor_;
  std::mutex mu_;
  std::vector<std::thread> conns_;
};

// A kubeconfig for a plain-http API server on 127.0.0.1:port, in a temporary file.
std::string writeKubeconfig(uint16_t port) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("fleetsched-serve-" + std::to_string(::getpid()) + "-" + std::to_string(port) +
                             ".kubeconfig"))
                               .string();
  std::ofstream(path) << "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: "
                         "http://127.0.0.1:"
                      << port
                      << "\ncontexts:\n- name: c\n  context:\n    cluster: c\n    user: u\n"
                         "current-context: c\nusers:\n- name: u\n  user: {}\n";
  return path;
}

// Issue 26, lifecycle, the case it names: kube-scheduler's /bind, whose Binding fleetsched has
// already posted to kube-apiserver, got EOF when SIGTERM arrived. The Binding finishes and its
// answer reaches kube-scheduler before serve exits 0.
TEST(ServeProcess, SigtermWaitsForABindPostedToTheApiServer) {
  FakeApiServer api(1500);
  const std::string kubeconfig = writeKubeconfig(api.port());
  const auto [verbs, probes] = twoPorts();
  Proc p;
  spawn(p,
        {"serve", "--listen=127.0.0.1:" + std::to_string(verbs),
         "--probe-listen=127.0.0.1:" + std::to_string(probes), "--kubeconfig=" + kubeconfig, "--bind",
         "--ingest-priority=normal", "--shutdown-grace=10"},
        "bind");
  waitReady(p, probes);
  const std::string pod = kPodU1;
  const std::string filtered =
      exchange(verbs, "POST", "/filter", R"({"Pod":)" + pod + R"(,"NodeNames":["gpu-a"]})");
  ASSERT_NE(filtered.find(R"("NodeNames":["gpu-a"])"), std::string::npos) << filtered;

  const int fd = dial(verbs);
  ASSERT_GE(fd, 0);
  const std::string args = R"({"PodName":"p","PodNamespace":"ml","PodUID":"u-1","Node":"gpu-a"})";
  sendAll(fd, "POST /bind HTTP/1.1\r\nHost: x\r\nContent-Length: " + std::to_string(args.size()) +
                  "\r\n\r\n" + args);
  for (int i = 0; i < 250 && !api.bindingPosted(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_TRUE(api.bindingPosted()) << p.err();
  const auto t0 = std::chrono::steady_clock::now();
  ::kill(p.pid, SIGTERM);
  for (int i = 0; i < 50 && accepts(verbs); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(accepts(verbs)) << "the verbs listener still accepts after SIGTERM";
  EXPECT_EQ(exchange(probes, "GET", "/readyz").rfind("HTTP/1.1 503", 0), 0u)
      << "/readyz is not 503 while draining";

  const std::string reply = readToEof(fd);
  ::close(fd);
  EXPECT_EQ(reply.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << "the bind's answer was lost: " << reply;
  EXPECT_NE(reply.find("\r\nConnection: close\r\n"), std::string::npos) << reply;
  EXPECT_TRUE(reply.ends_with("\r\n\r\n" R"({"Error":""})")) << reply;
  ASSERT_TRUE(p.waitExit(5000)) << p.err();
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
  std::fprintf(stderr,
               "SIGTERM to exit with a bind in flight (kube-apiserver answers 1.5 s after the post): %lld "
               "ms\n",
               static_cast<long long>(ms.count()));
  ASSERT_TRUE(WIFEXITED(p.status)) << p.err();
  EXPECT_EQ(WEXITSTATUS(p.status), 0);
  EXPECT_NE(p.err().find("drained in"), std::string::npos) << p.err();
  std::filesystem::remove(kubeconfig);
}

// serve --bind --leader-elect with short Lease timings, as both leader election tests run it.
void spawnElecting(Proc& p, uint16_t verbs, uint16_t probes, const std::string& kubeconfig, const char* name) {
  spawn(p,
        {"serve", "--listen=127.0.0.1:" + std::to_string(verbs),
         "--probe-listen=127.0.0.1:" + std::to_string(probes), "--kubeconfig=" + kubeconfig, "--bind",
         "--ingest-priority=normal", "--leader-elect", "--leader-elect-lease-duration=2s",
         "--leader-elect-renew-deadline=1500ms", "--leader-elect-retry-period=200ms"},
        name);
}

// Issue 26, HA: with --leader-elect a replica that does not hold the Lease answers bind with an
// Error naming the leader and preempt with 503, counts both, and never posts a Binding; filter
// and /readyz are unaffected.
TEST(ServeProcess, LeaderElectFollowerRefusesBindAndPreempt) {
  FakeApiServer api(0);
  api.leaseHeldBy("other-replica_1");
  const std::string kubeconfig = writeKubeconfig(api.port());
  const auto [verbs, probes] = twoPorts();
  Proc p;
  spawnElecting(p, verbs, probes, kubeconfig, "follower");
  waitReady(p, probes);
  const std::string pod = kPodU1;
  const std::string filtered = exchange(verbs, "POST", "/filter", R"({"Pod":)" + pod + R"(,"NodeNames":["gpu-a"]})");
  ASSERT_NE(filtered.find(R"("NodeNames":["gpu-a"])"), std::string::npos) << filtered;
  const std::string args = R"({"PodName":"p","PodNamespace":"ml","PodUID":"u-1","Node":"gpu-a"})";
  std::string bound;
  for (int i = 0; i < 100; ++i) {  // until the elector has read the Lease once
    bound = exchange(verbs, "POST", "/bind", args);
    if (bound.find("leader is") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(bound.ends_with(R"({"Error":"not the leader; leader is other-replica_1"})")) << bound;
  const std::string preempted =
      exchange(verbs, "POST", "/preempt", R"({"Pod":)" + pod + R"(,"NodeNameToMetaVictims":{}})");
  EXPECT_EQ(preempted.rfind("HTTP/1.1 503", 0), 0u) << preempted;
  EXPECT_NE(preempted.find("not the leader; leader is other-replica_1"), std::string::npos) << preempted;
  const std::string metrics = exchange(probes, "GET", "/metrics");
  EXPECT_NE(metrics.find("\nfleetsched_not_leader_total{verb=\"preempt\"} 1\n"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("\nfleetsched_leader 0\n"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("\nfleetsched_not_leader_total{verb=\"bind\"} "), std::string::npos) << metrics;
  EXPECT_FALSE(api.bindingPosted());
  EXPECT_TRUE(api.leaseWrites().empty());
  EXPECT_EQ(exchange(probes, "GET", "/readyz").rfind("HTTP/1.1 200", 0), 0u);
  ::kill(p.pid, SIGTERM);
  ASSERT_TRUE(p.waitExit(5000)) << p.err();
  EXPECT_TRUE(api.leaseWrites().empty()) << "a follower wrote the Lease on SIGTERM";
  std::filesystem::remove(kubeconfig);
}

// The leader: acquires a missing Lease by creating it, lists the pods again before its first
// bind, binds, and on SIGTERM writes the Lease back with no holder and a 1 s duration (client-go's
// ReleaseOnCancel), so a follower takes over at once.
TEST(ServeProcess, LeaderElectLeaderBindsAfterCatchingUpAndReleasesOnSigterm) {
  FakeApiServer api(0);
  const std::string kubeconfig = writeKubeconfig(api.port());
  const auto [verbs, probes] = twoPorts();
  Proc p;
  spawnElecting(p, verbs, probes, kubeconfig, "leader");
  waitListening(p, probes);
  const std::string pod = kPodU1;
  const std::string args = R"({"PodName":"p","PodNamespace":"ml","PodUID":"u-1","Node":"gpu-a"})";
  std::string bound;
  for (int i = 0; i < 250 && !bound.ends_with(R"({"Error":""})"); ++i) {
    exchange(verbs, "POST", "/filter", R"({"Pod":)" + pod + R"(,"NodeNames":["gpu-a"]})");
    bound = exchange(verbs, "POST", "/bind", args);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE(bound.ends_with(R"({"Error":""})")) << bound << p.err();
  EXPECT_TRUE(api.bindingPosted());
  EXPECT_GE(api.podLists(), 2) << "the new leader bound without listing the pods again";
  const std::vector<std::string> created = api.leaseWrites();
  ASSERT_FALSE(created.empty());
  EXPECT_NE(created[0].find(R"("leaseDurationSeconds":2)"), std::string::npos) << created[0];
  EXPECT_NE(exchange(probes, "GET", "/metrics").find("\nfleetsched_leader 1\n"), std::string::npos);
  ::kill(p.pid, SIGTERM);
  ASSERT_TRUE(p.waitExit(5000)) << p.err();
  ASSERT_TRUE(WIFEXITED(p.status)) << p.err();
  EXPECT_EQ(WEXITSTATUS(p.status), 0);
  const std::vector<std::string> writes = api.leaseWrites();
  ASSERT_GE(writes.size(), 2u);
  EXPECT_NE(writes.back().find(R"("holderIdentity":"","leaseDurationSeconds":1,)"), std::string::npos)
      << "the Lease was not released: " << writes.back();
  EXPECT_NE(p.err().find("released the Lease"), std::string::npos) << p.err();
  std::filesystem::remove(kubeconfig);
}

// Issue 26: /readyz turns 503 once the watches have failed for --stale-after (the API server
// went away): the cache is missing changes, so traffic should go to a replica that is not.
TEST(ServeProcess, ReadyzFailsOnceTheWatchesHaveFailedForStaleAfter) {
  auto api = std::make_unique<FakeApiServer>(0);
  const std::string kubeconfig = writeKubeconfig(api->port());
  const auto [verbs, probes] = twoPorts();
  Proc p;
  spawn(p,
        {"serve", "--listen=127.0.0.1:" + std::to_string(verbs),
         "--probe-listen=127.0.0.1:" + std::to_string(probes), "--kubeconfig=" + kubeconfig,
         "--ingest-priority=normal", "--stale-after=1"},
        "stale");
  waitListening(p, probes);
  auto readyz = [&] { return exchange(probes, "GET", "/readyz").substr(0, 12); };
  for (int i = 0; i < 250 && readyz() != "HTTP/1.1 200"; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_EQ(readyz(), "HTTP/1.1 200") << p.err();
  // Healthy watches held open longer than --stale-after keep it ready.
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  EXPECT_EQ(readyz(), "HTTP/1.1 200") << p.err();

  api.reset();  // the watches end, and every reconnect is refused
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 300 && readyz() != "HTTP/1.1 503"; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
  EXPECT_EQ(readyz(), "HTTP/1.1 503") << p.err();
  EXPECT_GE(ms.count(), 900) << "not ready before --stale-after passed";
  EXPECT_NE(p.err().find("not ready until it recovers"), std::string::npos) << p.err();
  // The verbs still answer from the cache.
  EXPECT_EQ(exchange(verbs, "GET", "/healthz").rfind("HTTP/1.1 200", 0), 0u);
  ::kill(p.pid, SIGTERM);
  ASSERT_TRUE(p.waitExit(5000)) << p.err();
  std::filesystem::remove(kubeconfig);
}

// Issue 26: a connection that never sends a byte is closed after --first-byte-timeout, not
// after the 120 s idle timeout.
TEST(ServeProcess, FirstByteTimeoutClosesASilentConnection) {
  const uint16_t port = freePort();
  Proc p;
  spawn(p, {"serve", "--listen=127.0.0.1:" + std::to_string(port), "--first-byte-timeout=1"}, "first-byte");
  waitListening(p, port);
  const int fd = dial(port);
  ASSERT_GE(fd, 0);
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(readToEof(fd), "");
  const auto waited = std::chrono::steady_clock::now() - t0;
  ::close(fd);
  EXPECT_GE(waited, std::chrono::milliseconds(900));
  EXPECT_LT(waited, std::chrono::milliseconds(5000)) << "the silent connection was not closed";
}

// Beyond --max-connections-per-client, a new connection from the same address is closed at once.
TEST(ServeProcess, MaxConnectionsPerClientClosesTheExtraConnection) {
  const uint16_t port = freePort();
  Proc p;
  spawn(p, {"serve", "--listen=127.0.0.1:" + std::to_string(port), "--max-connections-per-client=1"},
        "per-client");
  waitListening(p, port);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // waitListening's probes are gone
  const int first = dial(port);
  ASSERT_GE(first, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // accepted before the second
  const int second = dial(port);
  ASSERT_GE(second, 0);
  sendAll(second, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(readToEof(second), "");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(2000));
  ::close(second);
  sendAll(first, "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(readToEof(first).rfind("HTTP/1.1 200", 0), 0u);
  ::close(first);
}

// --max-buffered-bytes reaches the reactor: a body held while it arrives counts on /metrics, and
// a second body that would not fit beside it gets 503 naming the flag.
TEST(ServeProcess, MaxBufferedBytesRefusesABodyThatWouldNotFit) {
  const uint16_t port = freePort();
  Proc p;
  spawn(p, {"serve", "--listen=127.0.0.1:" + std::to_string(port), "--max-body-bytes=1000000",
            "--max-buffered-bytes=1000000"},
        "buffered");
  waitListening(p, port);
  const int held = dial(port);
  ASSERT_GE(held, 0);
  sendAll(held, "POST /filter HTTP/1.1\r\nHost: x\r\nContent-Length: 900000\r\n\r\n{");
  const std::string series = "\nfleetsched_http_buffered_bytes ";
  double buffered = -1;
  for (int i = 0; i < 100 && buffered != 900000; ++i) {
    const std::string m = exchange(port, "GET", "/metrics");
    const size_t at = m.find(series);
    buffered = at == std::string::npos ? -1 : std::stod(m.substr(at + series.size()));
    if (buffered != 900000) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(buffered, 900000);
  const std::string refused = exchange(port, "POST", "/filter", std::string(200000, ' '));
  EXPECT_EQ(refused.rfind("HTTP/1.1 503", 0), 0u) << refused.substr(0, 200);
  EXPECT_NE(refused.find("--max-buffered-bytes"), std::string::npos) << refused;
  ::close(held);
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s PATH-TO-fleetsched\n", argv[0]);
    return 2;
  }
  gBinary = argv[1];
  return RUN_ALL_TESTS();
}
