// Loopback tests of engine::Server over TLS (ServerConfig::tls): real sockets on 127.0.0.1, the
// loop on its own thread, blocking OpenSSL clients on the test thread. The CA, server and client
// certificates are made at test time (tls_pki.h).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "engine/reactor/server.h"
#include "engine/reactor/tls.h"
#include "engine/reactor/tls_reload.h"
#include "tests/engine/reactor/tls_pki.h"
#include "tests/loopback.h"

namespace fleetsched::engine {
namespace {

using namespace std::chrono_literals;
using testing::KeyPair;
using testing::makeCert;
using testing::Role;

// Answers "<verb>:<body>", with " verified" when the reactor says the client certificate verified.
class EchoHandler : public BatchHandler {
 public:
  void handleBatch(std::span<ExtenderRequest*> batch) override {
    for (ExtenderRequest* r : batch) {
      r->response = std::string(verbName(r->verb)) + ":" + std::string(r->body);
      if (r->peerVerified) r->response.append(" verified");
      ++requests;
    }
  }
  std::atomic<int> requests{0};
};

using Response = testing::HttpResponse;

int connectLoopback(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval tv{3, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Plain bytes on a socket: a client that does not speak TLS.
class RawClient {
 public:
  explicit RawClient(uint16_t port) : fd_(connectLoopback(port)) {}
  ~RawClient() {
    if (fd_ >= 0) ::close(fd_);
  }
  void send(std::string_view d) {
    while (!d.empty()) {
      ssize_t n = ::send(fd_, d.data(), d.size(), MSG_NOSIGNAL);
      if (n <= 0) return;
      d.remove_prefix(static_cast<size_t>(n));
    }
  }
  Response next() {
    return testing::readHttpResponse(buf_, [this] { return fill(); });
  }
  // The server closed (EOF or reset); what arrived before is in received().
  bool closedByPeer() {
    while (fill()) {
    }
    return eof_;
  }
  const std::string& received() const { return buf_; }
  int fd() const { return fd_; }

 private:
  bool fill() {
    char tmp[16384];
    ssize_t n = ::recv(fd_, tmp, sizeof tmp, 0);
    if (n <= 0) {
      eof_ = n == 0 || errno == ECONNRESET;
      return false;
    }
    buf_.append(tmp, static_cast<size_t>(n));
    return true;
  }
  int fd_;
  bool eof_ = false;
  std::string buf_;
};

struct ClientOptions {
  const KeyPair* clientCert = nullptr;  // presented when set
  const KeyPair* trust = nullptr;       // the CA that must have signed the server's certificate
  int maxVersion = 0;                   // e.g. TLS1_2_VERSION; 0: the newest
};

// A blocking TLS client (OpenSSL over the socket). handshake() then send()/next().
class TlsClient {
 public:
  TlsClient(uint16_t port, const ClientOptions& o) : fd_(connectLoopback(port)) {
    ctx_ = SSL_CTX_new(TLS_client_method());
    if (o.maxVersion != 0) SSL_CTX_set_max_proto_version(ctx_, o.maxVersion);
    if (o.trust != nullptr) {
      X509_STORE_add_cert(SSL_CTX_get_cert_store(ctx_), o.trust->cert.get());
      SSL_CTX_set_verify(ctx_, SSL_VERIFY_PEER, nullptr);
    }
    if (o.clientCert != nullptr) {
      SSL_CTX_use_certificate(ctx_, o.clientCert->cert.get());
      SSL_CTX_use_PrivateKey(ctx_, o.clientCert->key.get());
    }
    ssl_ = SSL_new(ctx_);
    SSL_set_fd(ssl_, fd_);
    SSL_set_tlsext_host_name(ssl_, "localhost");
    SSL_set1_host(ssl_, "localhost");
  }
  ~TlsClient() {
    SSL_free(ssl_);
    SSL_CTX_free(ctx_);
    if (fd_ >= 0) ::close(fd_);
    ERR_clear_error();
  }
  bool handshake() { return SSL_connect(ssl_) == 1; }
  bool send(std::string_view d) {
    while (!d.empty()) {
      int n = SSL_write(ssl_, d.data(), static_cast<int>(d.size()));
      if (n <= 0) return false;
      d.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }
  Response next() {
    return testing::readHttpResponse(buf_, [this] { return fill(); });
  }
  // The connection ended (close_notify, EOF, reset or alert) without another byte of data.
  bool ended() {
    char tmp[256];
    int n = SSL_read(ssl_, tmp, sizeof tmp);
    return n <= 0;
  }
  int lastReadError() const { return lastError_; }
  void closeNotify() { SSL_shutdown(ssl_); }
  SSL* ssl() { return ssl_; }
  int fd() const { return fd_; }

 private:
  bool fill() {
    char tmp[16384];
    int n = SSL_read(ssl_, tmp, sizeof tmp);
    if (n <= 0) {
      lastError_ = SSL_get_error(ssl_, n);
      return false;
    }
    buf_.append(tmp, static_cast<size_t>(n));
    return true;
  }
  int fd_;
  SSL_CTX* ctx_ = nullptr;
  SSL* ssl_ = nullptr;
  std::string buf_;
  int lastError_ = 0;
};

std::string post(std::string_view path, std::string_view body, std::string_view extra = "") {
  std::string r = "POST ";
  r += path;
  r += " HTTP/1.1\r\nHost: fleetsched\r\nContent-Type: application/json\r\n";
  r += extra;
  r += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n";
  r += body;
  return r;
}

std::string get(std::string_view path) { return "GET " + std::string(path) + " HTTP/1.1\r\nHost: fleetsched\r\n\r\n"; }

// One PKI for the whole program: a CA, the server's and a client's certificates it signs, and
// a client certificate from another CA.
struct Pki {
  KeyPair ca = makeCert("fleetsched test CA", Role::kCa);
  KeyPair server = makeCert("fleetsched", Role::kServer, &ca);
  KeyPair client = makeCert("kube-scheduler", Role::kClient, &ca);
  KeyPair otherCa = makeCert("another CA", Role::kCa);
  KeyPair otherClient = makeCert("kube-scheduler", Role::kClient, &otherCa);
  KeyPair expiredClient = makeCert("kube-scheduler", Role::kClient, &ca, -7200, 3600);
};
const Pki& pki() {
  static const Pki p;
  return p;
}

class TlsServerTest : public ::testing::Test {
 protected:
  // ctx null: the PKI's server certificate, and its CA for clients when clientCa.
  void start(bool clientCa = true, ServerConfig config = {}, std::shared_ptr<const TlsContext> ctx = nullptr) {
    std::string error;
    if (!ctx) {
      ctx = TlsContext::fromPem(pki().server.certPem, pki().server.keyPem,
                                clientCa ? std::string_view(pki().ca.certPem) : std::string_view(), error);
    }
    ASSERT_TRUE(ctx) << error;
    config.tls = ctx;
    config.host = "127.0.0.1";
    config.port = 0;
    config.lingerMs = 200;
    uv_loop_init(&loop_);
    server_ = std::make_unique<Server>(&loop_, config, handler_, metrics_);
    ASSERT_EQ(server_->listen(), 0);
    port_ = server_->port();
    uv_async_init(&loop_, &stop_, [](uv_async_t* a) {
      auto* self = static_cast<TlsServerTest*>(a->data);
      if (self->onStop_) self->onStop_();
      self->server_->close();
      uv_close(reinterpret_cast<uv_handle_t*>(a), nullptr);
    });
    stop_.data = this;
    if (beforeRun_) beforeRun_();
    thread_ = std::thread([this] { uv_run(&loop_, UV_RUN_DEFAULT); });
  }
  void TearDown() override {
    if (!server_) return;
    uv_async_send(&stop_);
    thread_.join();
    server_.reset();
    uv_run(&loop_, UV_RUN_DEFAULT);
    EXPECT_EQ(uv_loop_close(&loop_), 0) << "a libuv handle leaked";
  }
  ClientOptions good() const { return {&pki().client, &pki().ca, 0}; }
  // A request from a client with a good certificate still gets its answer.
  void expectServing() {
    TlsClient c(port_, good());
    ASSERT_TRUE(c.handshake());
    ASSERT_TRUE(c.send(post("/filter", "still")));
    Response r = c.next();
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.body, "filter:still verified");
  }
  double metric(const std::string& series) {
    TlsClient c(port_, good());
    if (!c.handshake() || !c.send(get("/metrics"))) return -2;
    std::string text = c.next().body;
    size_t at = text.find("\n" + series + " ");
    if (at == std::string::npos) return -1;
    return std::stod(text.substr(at + series.size() + 2));
  }
  double errors(std::string_view kind) {
    return metric("fleetsched_http_errors_total{kind=\"" + std::string(kind) + "\"}");
  }

  uv_loop_t loop_;
  uv_async_t stop_;
  std::function<void()> beforeRun_;  // on the test thread, before the loop's thread starts
  std::function<void()> onStop_;     // on the loop's thread, before the server closes
  EchoHandler handler_;
  Metrics metrics_;
  std::unique_ptr<Server> server_;
  std::thread thread_;
  uint16_t port_ = 0;
};

TEST_F(TlsServerTest, ClientWithCertificateGetsFilterAndBindAnswers) {
  start();
  for (int version : {0, TLS1_2_VERSION}) {
    ClientOptions o = good();
    o.maxVersion = version;
    TlsClient c(port_, o);
    ASSERT_TRUE(c.handshake()) << "TLS max version " << version;
    EXPECT_EQ(SSL_version(c.ssl()), version == 0 ? TLS1_3_VERSION : TLS1_2_VERSION);
    // keep-alive: several requests, then two pipelined in one write
    ASSERT_TRUE(c.send(post("/filter", R"({"Pod":{}})")));
    Response r = c.next();
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.body, R"(filter:{"Pod":{}} verified)");
    EXPECT_EQ(r.headers["content-type"], "application/json");
    ASSERT_TRUE(c.send(post("/bind", "b1") + post("/prioritize", "p2")));
    EXPECT_EQ(c.next().body, "bind:b1 verified");
    EXPECT_EQ(c.next().body, "prioritize:p2 verified");
    ASSERT_TRUE(c.send(get("/healthz")));
    EXPECT_EQ(c.next().body, "ok\n");
  }
  EXPECT_EQ(handler_.requests.load(), 6);
}

// Bodies and answers larger than a record (16 KiB) and than one socket write, in both directions.
TEST_F(TlsServerTest, LargeBodiesAndAnswersCrossIntact) {
  start();
  TlsClient c(port_, good());
  ASSERT_TRUE(c.handshake());
  std::string body(3 * 1024 * 1024 + 17, '\0');
  for (size_t i = 0; i < body.size(); ++i) body[i] = static_cast<char>('a' + (i * 7) % 26);
  std::thread sender([&] { c.send(post("/filter", body) + post("/bind", "after")); });
  Response r = c.next();
  sender.join();
  ASSERT_EQ(r.status, 200);
  EXPECT_TRUE(r.body == "filter:" + body + " verified") << "body differs, " << r.body.size() << " bytes";
  EXPECT_EQ(c.next().body, "bind:after verified");
}

TEST_F(TlsServerTest, ClientWithoutCertificateIsRefusedAtTheHandshake) {
  start();
  for (int version : {0, TLS1_2_VERSION}) {
    ClientOptions o = good();
    o.clientCert = nullptr;
    o.maxVersion = version;
    TlsClient c(port_, o);
    // TLS 1.2 fails in SSL_connect; in TLS 1.3 the client finishes first and reads the alert.
    if (c.handshake()) {
      c.send(post("/bind", "x"));
      EXPECT_EQ(c.next().status, 0) << "an answer without a client certificate";
      EXPECT_TRUE(c.ended());
    }
  }
  EXPECT_EQ(handler_.requests.load(), 0);
  EXPECT_EQ(errors("tls_handshake"), 2);
  expectServing();
}

TEST_F(TlsServerTest, CertificateFromAnotherCaIsRefused) {
  start();
  for (const KeyPair* cert : {&pki().otherClient, &pki().expiredClient, &pki().server}) {
    ClientOptions o = good();
    o.clientCert = cert;
    TlsClient c(port_, o);
    if (c.handshake()) {
      c.send(post("/bind", "x"));
      EXPECT_EQ(c.next().status, 0) << "an answer for " << (cert == &pki().server ? "a server certificate" : "a bad client certificate");
    }
  }
  EXPECT_EQ(handler_.requests.load(), 0);
  EXPECT_EQ(errors("tls_handshake"), 3);
  expectServing();
}

TEST_F(TlsServerTest, PlainHttpToTheTlsPortGetsA400AndIsClosed) {
  start();
  RawClient c(port_);
  c.send(post("/bind", R"({"PodName":"p"})"));
  Response r = c.next();
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.body, "Client sent an HTTP request to an HTTPS server.\n");
  EXPECT_TRUE(c.closedByPeer());
  EXPECT_EQ(handler_.requests.load(), 0);
  expectServing();
}

TEST_F(TlsServerTest, GarbageIsClosedCleanly) {
  start();
  std::mt19937 rng(26);
  for (size_t size : {1u, 5u, 300u, 70000u}) {
    std::string junk(size, '\0');
    for (char& ch : junk) ch = static_cast<char>(rng());
    junk[0] = 0x16;  // a handshake record type, so the junk gets past the first byte check
    RawClient c(port_);
    c.send(junk);
    if (size < 5) ::shutdown(c.fd(), SHUT_WR);  // an incomplete record header ends with the input
    EXPECT_TRUE(c.closedByPeer()) << size << " bytes";
  }
  // Garbage after a good handshake: the record cannot be decrypted.
  {
    TlsClient c(port_, good());
    ASSERT_TRUE(c.handshake());
    ASSERT_TRUE(c.send(post("/filter", "1")));
    EXPECT_EQ(c.next().body, "filter:1 verified");
    const std::string junk = "\x17\x03\x03\x00\x20" + std::string(32, 'z');
    ASSERT_EQ(::send(c.fd(), junk.data(), junk.size(), MSG_NOSIGNAL), static_cast<ssize_t>(junk.size()));
    EXPECT_TRUE(c.ended());
  }
  EXPECT_EQ(errors("tls_error"), 1);
  EXPECT_GE(errors("tls_handshake"), 3);
  expectServing();
}

TEST_F(TlsServerTest, SilentHandshakeTimesOut) {
  ServerConfig cfg;
  cfg.headerTimeoutMs = 150;
  start(true, cfg);
  RawClient c(port_);
  c.send(std::string("\x16\x03\x01\x00\x80", 5));  // a ClientHello header, then nothing
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_TRUE(c.closedByPeer());
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);
  EXPECT_EQ(errors("tls_handshake"), 1);
}

// The client's close_notify ends its input like a FIN: what it asked is still answered, then our
// close_notify follows.
TEST_F(TlsServerTest, CloseNotifyAfterARequestStillGetsTheAnswer) {
  start();
  TlsClient c(port_, good());
  ASSERT_TRUE(c.handshake());
  ASSERT_TRUE(c.send(post("/filter", "last")));
  c.closeNotify();
  Response r = c.next();
  EXPECT_EQ(r.body, "filter:last verified");
  EXPECT_TRUE(c.ended());
  EXPECT_EQ(c.lastReadError(), 0);
  expectServing();
}

TEST_F(TlsServerTest, ConnectionCloseEndsWithCloseNotify) {
  start();
  TlsClient c(port_, good());
  ASSERT_TRUE(c.handshake());
  ASSERT_TRUE(c.send(post("/filter", "x", "Connection: close\r\n")));
  EXPECT_EQ(c.next().headers["connection"], "close");
  char tmp[16];
  EXPECT_EQ(SSL_read(c.ssl(), tmp, sizeof tmp), 0);
  EXPECT_EQ(SSL_get_error(c.ssl(), 0), SSL_ERROR_ZERO_RETURN) << "no close_notify before the FIN";
}

TEST_F(TlsServerTest, WithoutAClientCaNoCertificateIsAskedAndNoneIsVerified) {
  start(false);
  ClientOptions o = good();
  o.clientCert = nullptr;
  TlsClient c(port_, o);
  ASSERT_TRUE(c.handshake());
  ASSERT_TRUE(c.send(post("/bind", "anon")));
  EXPECT_EQ(c.next().body, "bind:anon");  // answered, but not marked verified
}

// ---- TlsContext: what serve refuses at start-up ----

class TlsFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("fleetsched-tls-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }
  std::filesystem::path dir_;
};

TEST_F(TlsFilesTest, GoodFilesLoad) {
  std::string error;
  auto ctx = TlsContext::load({write("tls.crt", pki().server.certPem + pki().ca.certPem),
                               write("tls.key", pki().server.keyPem), write("ca.crt", pki().ca.certPem)},
                              error);
  ASSERT_TRUE(ctx) << error;
  EXPECT_TRUE(ctx->verifiesClients());
  ctx = TlsContext::load({write("tls.crt", pki().server.certPem), write("tls.key", pki().server.keyPem), ""}, error);
  ASSERT_TRUE(ctx) << error;
  EXPECT_FALSE(ctx->verifiesClients());
}

TEST_F(TlsFilesTest, BadFilesAreRefusedWithTheReason) {
  const std::string crt = write("tls.crt", pki().server.certPem), key = write("tls.key", pki().server.keyPem);
  const std::string ca = write("ca.crt", pki().ca.certPem);
  struct Case {
    TlsFiles files;
    std::string want;
  };
  const std::vector<Case> cases = {
      {{crt, "", ""}, "needs both"},
      {{"", key, ""}, "needs both"},
      {{(dir_ / "missing.crt").string(), key, ""}, "missing.crt: cannot read: No such file"},
      {{crt, (dir_ / "missing.key").string(), ""}, "missing.key: cannot read"},
      {{crt, key, (dir_ / "missing-ca.crt").string()}, "missing-ca.crt: cannot read"},
      {{write("junk.crt", "not a certificate\n"), key, ""}, "junk.crt: no PEM certificate"},
      {{crt, write("junk.key", "not a key\n"), ""}, "junk.key: no usable PEM private key"},
      {{crt, write("other.key", pki().client.keyPem), ""}, "other.key does not match certificate file"},
      {{crt, key, write("empty-ca.crt", "")}, "empty-ca.crt: empty"},
      {{crt, key, write("junk-ca.crt", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")},
       "junk-ca.crt: no PEM certificate"},
  };
  for (const Case& c : cases) {
    std::string error;
    EXPECT_FALSE(TlsContext::load(c.files, error)) << c.want;
    EXPECT_NE(error.find(c.want), std::string::npos) << "error: " << error << "\nwant: " << c.want;
  }
}

// ---- TlsReloader: the listener follows its certificate files ----

class TlsReloadTest : public TlsServerTest {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("fleetsched-tls-reload-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    files_ = {(dir_ / "tls.crt").string(), (dir_ / "tls.key").string(), (dir_ / "ca.crt").string()};
  }
  void TearDown() override {
    TlsServerTest::TearDown();
    std::filesystem::remove_all(dir_);
  }
  // Replaces a file the way kubelet updates a mounted Secret: the new bytes appear at once.
  void put(const std::string& path, const std::string& text) {
    const std::string tmp = path + ".tmp";
    std::ofstream(tmp) << text;
    std::filesystem::rename(tmp, path);
  }
  void putPair(const KeyPair& server) {
    put(files_.certFile, server.certPem);
    put(files_.keyFile, server.keyPem);
    put(files_.clientCaFile, pki().ca.certPem);
  }
  // The common name of the certificate a new connection is served.
  std::string servedName() {
    TlsClient c(port_, good());
    if (!c.handshake()) return "(handshake failed)";
    X509* peer = SSL_get1_peer_certificate(c.ssl());
    char cn[256] = {};
    X509_NAME_get_text_by_NID(X509_get_subject_name(peer), NID_commonName, cn, sizeof cn);
    X509_free(peer);
    return cn;
  }
  // Starts the server with a reloader checking every intervalMs.
  void startReloading(uint64_t intervalMs) {
    reloader_ = std::make_unique<TlsReloader>(files_);
    std::string error;
    std::shared_ptr<const TlsContext> ctx = reloader_->load(error);
    ASSERT_TRUE(ctx) << error;
    beforeRun_ = [this, intervalMs] {
      reloader_->start(&loop_, *server_, metrics_, intervalMs);
      uv_async_init(&loop_, &check_, [](uv_async_t* a) {
        auto* self = static_cast<TlsReloadTest*>(a->data);
        self->checked_.set_value(self->reloader_->check());
      });
      check_.data = this;
    };
    onStop_ = [this] {
      reloader_->close();
      uv_close(reinterpret_cast<uv_handle_t*>(&check_), nullptr);
    };
    start(true, {}, ctx);
  }
  // One check on the loop's thread, where the timer runs it (the server's context is the loop's).
  TlsReloader::Result check() {
    checked_ = {};
    std::future<TlsReloader::Result> result = checked_.get_future();
    uv_async_send(&check_);
    return result.get();
  }

  std::filesystem::path dir_;
  TlsFiles files_;
  std::unique_ptr<TlsReloader> reloader_;
  uv_async_t check_;
  std::promise<TlsReloader::Result> checked_;
};

TEST_F(TlsReloadTest, NewConnectionsGetTheRenewedCertificateOpenOnesKeepServing) {
  const KeyPair first = makeCert("fleetsched", Role::kServer, &pki().ca);
  const KeyPair renewed = makeCert("fleetsched-renewed", Role::kServer, &pki().ca, -60, 7 * 86400);
  putPair(first);
  startReloading(20);
  ASSERT_EQ(servedName(), "fleetsched");
  TlsClient open(port_, good());
  ASSERT_TRUE(open.handshake());

  putPair(renewed);
  std::string name;
  for (int i = 0; i < 250 && (name = servedName()) != "fleetsched-renewed"; ++i) std::this_thread::sleep_for(20ms);
  EXPECT_EQ(name, "fleetsched-renewed") << "the listener never took the renewed certificate";
  ASSERT_TRUE(open.send(post("/filter", "old")));
  EXPECT_EQ(open.next().body, "filter:old verified");  // the connection made before the change
  EXPECT_EQ(metric("fleetsched_tls_reloads_total{result=\"success\"}"), 1);
  EXPECT_EQ(metric("fleetsched_tls_reloads_total{result=\"failure\"}"), 0);
  // The gauge follows the certificate served: the renewed one lapses in about 7 days.
  const double notAfter = metric("fleetsched_tls_certificate_expiry_timestamp_seconds");
  const double now = static_cast<double>(std::time(nullptr));
  EXPECT_NEAR(notAfter - now, 7 * 86400 - 60, 120);
}

TEST_F(TlsReloadTest, FilesThatDoNotBuildLeaveTheCurrentCertificateServing) {
  const KeyPair first = makeCert("fleetsched", Role::kServer, &pki().ca);
  const KeyPair next = makeCert("fleetsched-next", Role::kServer, &pki().ca);
  putPair(first);
  startReloading(60'000);  // ticks by hand below: check() runs what every tick runs
  EXPECT_EQ(check(), TlsReloader::Result::kUnchanged);

  put(files_.keyFile, next.keyPem);  // half an update: the next key beside the old certificate
  EXPECT_EQ(check(), TlsReloader::Result::kFailed);
  EXPECT_NE(reloader_->lastError().find("does not match certificate file"), std::string::npos) << reloader_->lastError();
  EXPECT_EQ(check(), TlsReloader::Result::kFailed);  // same bytes: no second attempt
  EXPECT_EQ(servedName(), "fleetsched");
  EXPECT_EQ(metric("fleetsched_tls_reloads_total{result=\"failure\"}"), 1);

  std::filesystem::remove(files_.certFile);  // gone for a moment
  EXPECT_EQ(check(), TlsReloader::Result::kFailed);
  EXPECT_NE(reloader_->lastError().find("cannot read"), std::string::npos) << reloader_->lastError();
  EXPECT_EQ(servedName(), "fleetsched");

  put(files_.certFile, next.certPem);  // the update completes
  EXPECT_EQ(check(), TlsReloader::Result::kReloaded);
  EXPECT_EQ(reloader_->lastError(), "");
  EXPECT_EQ(servedName(), "fleetsched-next");
  EXPECT_EQ(check(), TlsReloader::Result::kUnchanged);
}

}  // namespace
}  // namespace fleetsched::engine
