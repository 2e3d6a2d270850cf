// The fake kube-apiserver's live pods (loadgen --churn): created pods and Bindings are watch
// events with rising resourceVersions, a watch from an older resourceVersion gets what it
// missed (or 410 once it left the log), lists end with the live pods, and Bindings are refused
// as kube-apiserver refuses them.
#include "tools/apiserver/fake_apiserver.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "tests/loopback.h"

namespace fleetsched::tools::apiserver {
namespace {

using namespace std::chrono_literals;

std::string podObject(const std::string& name, const std::string& uid) {
  return R"({"metadata":{"name":")" + name + R"(","namespace":"ns","uid":")" + uid +
         R"(","resourceVersion":"1","annotations":{"a":"b"}},"spec":{"containers":[]},"status":{"phase":"Pending"}})";
}

std::string binding(const std::string& name, const std::string& uid, const std::string& node) {
  return R"({"apiVersion":"v1","kind":"Binding","metadata":{"name":")" + name + R"(","namespace":"ns","uid":")" + uid +
         R"(","annotations":{"fleetsched.io/gpu-index":"0,1"}},"target":{"apiVersion":"v1","kind":"Node","name":")" +
         node + R"("}})";
}

testing::HttpResponse post(uint16_t port, const std::string& path, const std::string& body) {
  testing::HttpClient client(port);
  client.send("POST " + path + " HTTP/1.1\r\nHost: x\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" +
              body);
  return client.next();
}

// A watch request's raw reply, read as it streams in.
class Watch {
 public:
  Watch(uint16_t port, const std::string& query) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    const std::string req = "GET /api/v1/pods?watch=true" + query + " HTTP/1.1\r\nHost: x\r\n\r\n";
    if (connected_) ::send(fd_, req.data(), req.size(), MSG_NOSIGNAL);
  }
  ~Watch() { ::close(fd_); }
  Watch(const Watch&) = delete;
  Watch& operator=(const Watch&) = delete;
  // What arrived so far, reading until `until` shows up or 2 s pass.
  const std::string& read(const std::string& until) {
    const auto deadline = std::chrono::steady_clock::now() + 2s;
    while (connected_ && text_.find(until) == std::string::npos && std::chrono::steady_clock::now() < deadline) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      char buf[65536];
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) break;
      text_.append(buf, static_cast<size_t>(n));
    }
    return text_;
  }

 private:
  int fd_ = -1;
  bool connected_ = false;
  std::string text_;
};

class FakeApiServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    nodes_.add(R"({"metadata":{"name":"n1","resourceVersion":"1"}})");
    server_.setPodLifetime(200ms);
    port_ = server_.start();
    ASSERT_NE(port_, 0);
  }
  Collection nodes_{"NodeList"};
  Collection pods_{"PodList"};
  FakeApiServer server_{nodes_, pods_};
  uint16_t port_ = 0;
};

TEST_F(FakeApiServerTest, PodsAreCreatedBoundAndDeletedThroughTheWatch) {
  Watch watch(port_, "&resourceVersion=1000");
  server_.createPod("ns", "p1", podObject("p1", "u1"));
  EXPECT_NE(watch.read(R"("type":"ADDED")").find(R"("resourceVersion":"1001")"), std::string::npos);

  // The list holds the live pod, at the resourceVersion it was last changed.
  testing::HttpClient lister(port_);
  lister.send("GET /api/v1/pods?limit=500 HTTP/1.1\r\nHost: x\r\n\r\n");
  const testing::HttpResponse list = lister.next();
  EXPECT_NE(list.body.find(R"("metadata":{"resourceVersion":"1001"},"items":[{"metadata":{"name":"p1")"),
            std::string::npos)
      << list.body;

  EXPECT_EQ(post(port_, "/api/v1/namespaces/ns/pods/p1/binding", binding("p1", "u1", "n1")).status, 201);
  const std::string& events = watch.read(R"("type":"MODIFIED")");
  const size_t modified = events.find(R"("type":"MODIFIED")");
  ASSERT_NE(modified, std::string::npos) << events;
  const std::string bound = events.substr(modified);
  EXPECT_NE(bound.find(R"("resourceVersion":"1002")"), std::string::npos) << bound;
  EXPECT_NE(bound.find(R"("annotations":{"fleetsched.io/gpu-index":"0,1","a":"b"})"), std::string::npos) << bound;
  EXPECT_NE(bound.find(R"("spec":{"nodeName":"n1","containers":[]})"), std::string::npos) << bound;

  // Refusals as kube-apiserver's.
  const testing::HttpResponse again = post(port_, "/api/v1/namespaces/ns/pods/p1/binding", binding("p1", "u1", "n1"));
  EXPECT_EQ(again.status, 409);
  EXPECT_NE(again.body.find(R"(already assigned to node \"n1\")"), std::string::npos) << again.body;
  server_.createPod("ns", "p2", podObject("p2", "u2"));
  EXPECT_EQ(post(port_, "/api/v1/namespaces/ns/pods/p2/binding", binding("p2", "other", "n1")).status, 409);
  EXPECT_EQ(post(port_, "/api/v1/namespaces/ns/pods/p3/binding", binding("p3", "u3", "n1")).status, 404);
  EXPECT_EQ(post(port_, "/api/v1/namespaces/ns/events", "{}").status, 201);

  // The lifetime ends the bound pod; the pending one stays.
  EXPECT_NE(watch.read(R"("type":"DELETED")").find(R"("type":"DELETED","object":{"metadata":{"name":"p1")"),
            std::string::npos);
  const LivePodStats stats = server_.livePodStats();
  EXPECT_EQ(stats.created, 2u);
  EXPECT_EQ(stats.bound, 1u);
  EXPECT_EQ(stats.deleted, 1u);
  EXPECT_EQ(stats.bindingsRefused, 3u);
  EXPECT_EQ(stats.live, 1u);
  EXPECT_EQ(stats.liveBound, 0u);
  EXPECT_EQ(stats.resourceVersion, 1004u);
}

TEST_F(FakeApiServerTest, AWatchResumesFromItsResourceVersionOrIsTooOld) {
  for (std::string name : {"p0", "p1", "p2"}) server_.createPod("ns", name, podObject(name, "u"));
  server_.deletePod("ns", "p0");
  // A watch from 1002 gets the two changes after it, and nothing before.
  Watch resumed(port_, "&resourceVersion=1002");
  const std::string& text = resumed.read(R"("type":"DELETED")");
  EXPECT_EQ(text.find(R"("name":"p0","namespace":"ns","uid":"u","resourceVersion":"1001")"), std::string::npos);
  EXPECT_NE(text.find(R"("name":"p2","namespace":"ns","uid":"u","resourceVersion":"1003")"), std::string::npos);
  EXPECT_NE(text.find(R"("type":"DELETED","object":{"metadata":{"name":"p0","namespace":"ns","uid":"u","resourceVersion":"1004")"),
            std::string::npos)
      << text;
  // Once the log has moved past it: 410 Expired, as an ERROR event.
  for (size_t i = 0; i < FakeApiServer::kEventLogSize; ++i) {
    server_.deletePod("ns", "p1");
    server_.createPod("ns", "p1", podObject("p1", "u"));
  }
  Watch old(port_, "&resourceVersion=1002");
  EXPECT_NE(old.read(R"("code":410)").find(R"({"type":"ERROR","object":{"kind":"Status")"), std::string::npos);
}

}  // namespace
}  // namespace fleetsched::tools::apiserver
