// Ingestor::postBinding against a recording HTTP server: which requests reach kube-apiserver.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine/ingest/ingest.h"
#include "tests/loopback.h"

namespace fleetsched::engine {
namespace {

// Answers every request 500, but request lines given to answerOk 200 with their body, and records
// each request line.
class RecordingServer {
 public:
  RecordingServer() {
    fd_ = fleetsched::testing::listenOnLoopback(port_);
    thread_ = std::thread([this] { run(); });
  }
  ~RecordingServer() {
    stop_ = true;
    thread_.join();
    ::close(fd_);
  }
  uint16_t port() const { return port_; }
  std::vector<std::string> lines() {
    std::lock_guard lock(mu_);
    return lines_;
  }
  void answerOk(const std::string& requestLine, const std::string& body) {
    std::lock_guard lock(mu_);
    ok_[requestLine] = body;
  }

 private:
  void run() {
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) continue;
      timeval tv{2, 0};
      ::setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
      std::string in;
      char buf[8192];
      size_t head = std::string::npos;
      while ((head = in.find("\r\n\r\n")) == std::string::npos) {
        ssize_t n = ::recv(c, buf, sizeof buf, 0);
        if (n <= 0) break;
        in.append(buf, static_cast<size_t>(n));
      }
      if (head != std::string::npos) {
        std::string reply = "HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json\r\n"
                            "Content-Length: 2\r\nConnection: close\r\n\r\n{}";
        {
          std::lock_guard lock(mu_);
          const std::string line = in.substr(0, in.find("\r\n"));
          lines_.push_back(line);
          if (auto it = ok_.find(line); it != ok_.end()) {
            reply = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
                    std::to_string(it->second.size()) + "\r\nConnection: close\r\n\r\n" + it->second;
          }
        }
        ::send(c, reply.data(), reply.size(), MSG_NOSIGNAL);
      }
      ::close(c);
    }
  }

  int fd_ = -1;
  uint16_t port_ = 0;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::vector<std::string> lines_;
  std::map<std::string, std::string> ok_;
};

class IngestBinding : public ::testing::Test {
 protected:
  void SetUp() override {
    uv_loop_init(&loop_);
    kubeconfig_ = (std::filesystem::path(::testing::TempDir()) / ("ingest_binding_" + std::to_string(getpid()))).string();
    std::ofstream(kubeconfig_) << "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: "
                                  "http://127.0.0.1:"
                               << server_.port()
                               << "\ncontexts:\n- name: c\n  context:\n    cluster: c\n    user: u\n"
                                  "current-context: c\nusers:\n- name: u\n  user: {}\n";
    IngestOptions o;
    o.kubeconfig = kubeconfig_;
    o.priority = IngestPriority::Normal;
    ingestor_ = std::make_unique<Ingestor>(cache_, metrics_, o);
    std::string error;
    ASSERT_TRUE(ingestor_->start(&loop_, error)) << error;
  }
  void TearDown() override {
    ingestor_->stop();
    uv_run(&loop_, UV_RUN_NOWAIT);
    EXPECT_EQ(uv_loop_close(&loop_), 0);
    std::filesystem::remove(kubeconfig_);
  }

  // Posts the Binding and runs the reactor loop until its answer.
  std::string bind(const std::string& ns, const std::string& name) {
    BindingRequest b;
    b.podNamespace = ns;
    b.podName = name;
    b.podUid = "u-1";
    b.node = "gpu-a";
    bool done = false;
    std::string error;
    ingestor_->postBinding(b, [&](std::string e) {
      error = std::move(e);
      done = true;
    });
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!done && std::chrono::steady_clock::now() < until) uv_run(&loop_, UV_RUN_NOWAIT), usleep(1000);
    EXPECT_TRUE(done);
    return error;
  }

  // Reads the pod and runs the reactor loop until the answer: {error, body}.
  std::pair<std::string, std::string> readPod(const std::string& ns, const std::string& name) {
    bool done = false;
    std::pair<std::string, std::string> out;
    ingestor_->readPod(ns, name, [&](std::string e, std::string body) {
      out = {std::move(e), std::move(body)};
      done = true;
    });
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!done && std::chrono::steady_clock::now() < until) uv_run(&loop_, UV_RUN_NOWAIT), usleep(1000);
    EXPECT_TRUE(done);
    return out;
  }

  // The request lines whose path contains `part`, after waiting a moment for stragglers.
  std::vector<std::string> requestsWith(const std::string& part) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    std::vector<std::string> out;
    for (const std::string& l : server_.lines()) {
      if (l.find(part) != std::string::npos) out.push_back(l);
    }
    return out;
  }

  RecordingServer server_;
  uv_loop_t loop_{};
  std::string kubeconfig_;
  cache::Cache cache_;
  Metrics metrics_;
  std::unique_ptr<Ingestor> ingestor_;
};

// Issue 26, defect 2: '?' in a namespace injected dryRun=All, "../" reached another API group,
// and a CR-LF name still produced a FailedBinding Event in the namespace the caller named.
TEST_F(IngestBinding, InvalidNamesSendNothingAndPostNoEvent) {
  const char* const bad[][2] = {{"ml?dryRun=All", "train-0"},
                                {"../apis/events.k8s.io/v1/namespaces/ml", "train-0"},
                                {"ml", "train-0\r\nX-Injected: 1"},
                                {"ml", "../../nodes/gpu-a"}};
  for (const auto& [ns, name] : bad) {
    std::string error = bind(ns, name);
    EXPECT_NE(error.find("invalid pod"), std::string::npos) << ns << "/" << name << ": " << error;
  }
  EXPECT_TRUE(requestsWith("POST").empty()) << requestsWith("POST")[0];
}

TEST_F(IngestBinding, ValidNamesPostTheBindingAndAFailureEvent) {
  std::string error = bind("ml", "train-0.x");
  EXPECT_NE(error.find("HTTP 500"), std::string::npos) << error;
  std::vector<std::string> posts = requestsWith("POST");
  ASSERT_EQ(posts.size(), 2u);
  EXPECT_EQ(posts[0], "POST /api/v1/namespaces/ml/pods/train-0.x/binding HTTP/1.1");
  EXPECT_EQ(posts[1], "POST /api/v1/namespaces/ml/events HTTP/1.1");
}

// A bind whose filter reached another replica: the pod is read from kube-apiserver.
TEST_F(IngestBinding, ReadPodGetsThePodOrSaysWhyNot) {
  const std::string pod = R"({"kind":"Pod","metadata":{"name":"train-0.x","namespace":"ml","uid":"u-1"}})";
  server_.answerOk("GET /api/v1/namespaces/ml/pods/train-0.x HTTP/1.1", pod);
  EXPECT_EQ(readPod("ml", "train-0.x"), std::make_pair(std::string(), pod));
  auto [error, body] = readPod("ml", "train-1");
  EXPECT_EQ(error.rfind("reading pod ml/train-1: HTTP 500", 0), 0u) << error;
  EXPECT_EQ(body, "");
  std::vector<std::string> gets = requestsWith("/pods/train");
  ASSERT_EQ(gets.size(), 2u);
  EXPECT_EQ(gets[1], "GET /api/v1/namespaces/ml/pods/train-1 HTTP/1.1");
  EXPECT_TRUE(requestsWith("POST").empty());
}

}  // namespace
}  // namespace fleetsched::engine
