// CurlTransport against a bare TCP listener: what the client actually puts on the wire.
#include "apiclient/curl_transport.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <string>
#include <thread>

#include "tests/loopback.h"

namespace fleetsched::apiclient {
namespace {

// Accepts one connection on 127.0.0.1, keeps its first bytes (a TLS ClientHello carries the SNI
// name in clear), and closes it.
class FirstBytes {
 public:
  FirstBytes() {
    fd_ = fleetsched::testing::listenOnLoopback(port_, 1);
    thread_ = std::thread([this] {
      int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      timeval tv{5, 0};
      ::setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
      char buf[4096];
      ssize_t n = ::recv(c, buf, sizeof buf, 0);
      if (n > 0) bytes_.assign(buf, static_cast<size_t>(n));
      ::close(c);
    });
  }
  ~FirstBytes() {
    ::shutdown(fd_, SHUT_RDWR);
    if (thread_.joinable()) thread_.join();
    ::close(fd_);
  }
  uint16_t port() const { return port_; }
  std::string take() {
    thread_.join();
    return bytes_;
  }

 private:
  int fd_ = -1;
  uint16_t port_ = 0;
  std::thread thread_;
  std::string bytes_;
};

// Runs one GET through a CurlTransport for `config` until it ends (here: with an error).
void oneExchange(ClusterConfig config) {
  uv_loop_t loop;
  uv_loop_init(&loop);
  {
    CurlTransport t(&loop, std::move(config));
    Request r;
    r.path = "/version";
    r.timeoutMs = 5000;
    bool done = false;
    t.start(std::move(r), ResponseHandler{nullptr, nullptr, [&](const std::string&) { done = true; }});
    while (!done && uv_run(&loop, UV_RUN_ONCE) != 0) {
    }
    EXPECT_TRUE(done);
    t.close();
  }
  uv_run(&loop, UV_RUN_DEFAULT);
  EXPECT_EQ(uv_loop_close(&loop), 0);
}

// Issue 26, defect 9: a kubeconfig's tls-server-name was parsed but never applied, so a server
// whose certificate names another host (kube-apiserver's loopback certificate:
// apiserver-loopback-client) failed verification. The name must reach the wire as SNI while
// the connection still goes to the server's address.
TEST(CurlTransport, TlsServerNameIsSentAsSniToTheServersAddress) {
  FirstBytes server;
  ClusterConfig c;
  c.server = "https://127.0.0.1:" + std::to_string(server.port());
  c.tlsServerName = "apiserver-loopback-client";
  oneExchange(c);
  std::string hello = server.take();
  ASSERT_FALSE(hello.empty()) << "nothing connected to the server's address";
  EXPECT_EQ(hello[0], '\x16') << "not a TLS handshake";
  EXPECT_NE(hello.find("apiserver-loopback-client"), std::string::npos) << "no SNI for the tls-server-name";
}

TEST(CurlTransport, WithoutTlsServerNameAnIpServerSendsNoName) {
  FirstBytes server;
  ClusterConfig c;
  c.server = "https://127.0.0.1:" + std::to_string(server.port());
  oneExchange(c);
  std::string hello = server.take();
  ASSERT_FALSE(hello.empty());
  EXPECT_EQ(hello.find("apiserver-loopback-client"), std::string::npos);
}

}  // namespace
}  // namespace fleetsched::apiclient
