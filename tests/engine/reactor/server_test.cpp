// Loopback tests of engine::Server: real sockets on 127.0.0.1, port 0, the loop on its own thread,
// blocking clients on the test thread.
#include "engine/reactor/server.h"
#include "tests/loopback.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace fleetsched::engine {
namespace {

using namespace std::chrono_literals;

// Echoes "<verb>:<body>" and records every batch. A request whose body is "block" holds the loop
// until release() so tests can make several requests land in the same loop turn. Deferred
// answers are "<verb>:<body> late": body "defer" is held until completeHeld() (on the loop
// thread), "timer" or "timer:<ms>" is completed by a uv_timer (20 ms by default), "sync" is
// deferred and completed inside handleBatch. "offloop" is held as "defer" is, and answersOffLoop
// says so for it.
class FakeHandler : public BatchHandler {
 public:
  void handleBatch(std::span<ExtenderRequest*> batch) override {
    std::vector<std::string> bodies;
    for (ExtenderRequest* r : batch) {
      bodies.emplace_back(r->body);
      // The padding promised by handler.h must be there (ASan checks the reads).
      const char* end = r->body.data() + r->body.size();
      int pad = 0;
      for (size_t i = 0; i < kBodyPadding; ++i) pad |= end[i];
      r->response = std::string(verbName(r->verb)) + ":" + std::string(r->body);
      if (pad != 0) r->response = "padding not zero";
      if (r->body == "close") r->closeConnection = true;
      if (r->body == "block") {
        entered_ = true;
        while (!released_) std::this_thread::sleep_for(1ms);
      }
      if (r->body == "defer" || r->body.starts_with("timer") || r->body == "sync" || answersOffLoop(*r)) {
        r->response.clear();
        r->deferred = true;
      }
      if (r->body == "defer" || answersOffLoop(*r)) {
        held_.push_back(r);
        ++held;
      } else if (r->body.starts_with("timer")) {
        auto* t = new Timer{{}, r};
        uv_timer_init(loop, &t->timer);
        t->timer.data = t;
        uint64_t ms = r->body.size() > 6 ? std::stoul(std::string(r->body.substr(6))) : 20;
        uv_timer_start(
            &t->timer,
            [](uv_timer_t* h) {
              auto* t = static_cast<Timer*>(h->data);
              finish(t->req);
              uv_close(reinterpret_cast<uv_handle_t*>(h),
                       [](uv_handle_t* h) { delete static_cast<Timer*>(h->data); });
            },
            ms, 0);
      } else if (r->body == "sync") {
        finish(r);
      }
    }
    std::lock_guard lock(mu_);
    batches_.push_back(std::move(bodies));
  }
  bool ready() const override { return ready_; }
  bool answersOffLoop(const ExtenderRequest& r) const override { return r.body == "offloop"; }
  // Answers every "defer" request held so far. On the loop thread (or once the loop has stopped).
  void completeHeld() {
    for (ExtenderRequest* r : held_) finish(r);
    held_.clear();
    held = 0;
  }
  static void finish(ExtenderRequest* r) {
    r->response = std::string(verbName(r->verb)) + ":" + std::string(r->body) + " late";
    r->complete(r);  // r is gone if its client is
  }
  uv_loop_t* loop = nullptr;
  std::atomic<int> held{0};

  void release() { released_ = true; }
  bool waitEntered() {
    for (int i = 0; i < 2000 && !entered_; ++i) std::this_thread::sleep_for(1ms);
    return entered_;
  }
  std::vector<std::vector<std::string>> batches() {
    std::lock_guard lock(mu_);
    return batches_;
  }
  std::atomic<bool> ready_{true};

 private:
  std::atomic<bool> entered_{false};
  std::atomic<bool> released_{false};
  struct Timer {
    uv_timer_t timer;
    ExtenderRequest* req;
  };
  std::mutex mu_;
  std::vector<std::vector<std::string>> batches_;
  std::vector<ExtenderRequest*> held_;  // loop thread only
};

using Response = testing::HttpResponse;
using Client = testing::HttpClient;

std::string post(std::string_view path, std::string_view body, std::string_view extra = "") {
  std::string r = "POST ";
  r += path;
  r += " HTTP/1.1\r\nHost: fleetsched\r\nContent-Type: application/json\r\n";
  r += extra;
  r += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n";
  r += body;
  return r;
}

std::string get(std::string_view path) {
  return "GET " + std::string(path) + " HTTP/1.1\r\nHost: fleetsched\r\n\r\n";
}

class ServerTest : public ::testing::Test {
 protected:
  void start(ServerConfig config = {}, const std::function<void(Server&)>& setup = {}) {
    config.host = "127.0.0.1";
    config.port = 0;
    uv_loop_init(&loop_);
    handler_.loop = &loop_;
    // Runs tasks from the test thread on the loop; unreferenced, so it never keeps the loop alive.
    uv_async_init(&loop_, &wake_, [](uv_async_t* a) {
      auto* self = static_cast<ServerTest*>(a->data);
      std::vector<std::function<void()>> tasks;
      {
        std::lock_guard lock(self->tasksMutex_);
        tasks.swap(self->tasks_);
      }
      for (auto& t : tasks) t();
    });
    wake_.data = this;
    uv_unref(reinterpret_cast<uv_handle_t*>(&wake_));
    server_ = std::make_unique<Server>(&loop_, config, handler_, metrics_);
    if (setup) setup(*server_);
    ASSERT_EQ(server_->listen(), 0);
    port_ = server_->port();
    ASSERT_NE(port_, 0);
    uv_async_init(&loop_, &stop_, [](uv_async_t* a) {
      static_cast<Server*>(a->data)->close();
      uv_close(reinterpret_cast<uv_handle_t*>(a), nullptr);
    });
    stop_.data = server_.get();
    thread_ = std::thread([this] { uv_run(&loop_, UV_RUN_DEFAULT); });
  }
  void TearDown() override {
    if (!server_) return;
    handler_.release();
    if (thread_.joinable()) {
      uv_async_send(&stop_);
      thread_.join();
    }
    server_.reset();
    uv_close(reinterpret_cast<uv_handle_t*>(&wake_), nullptr);
    uv_run(&loop_, UV_RUN_DEFAULT);
    EXPECT_EQ(uv_loop_close(&loop_), 0) << "a libuv handle leaked";
  }
  // Runs fn on the loop thread and waits for it.
  void onLoop(std::function<void()> fn) {
    std::promise<void> done;
    {
      std::lock_guard lock(tasksMutex_);
      tasks_.push_back([&] {
        fn();
        done.set_value();
      });
    }
    uv_async_send(&wake_);
    done.get_future().wait();
  }
  // Server::pendingRequests(), read on the loop thread.
  size_t pendingOnLoop() {
    size_t n = 0;
    onLoop([&] { n = server_->pendingRequests(); });
    return n;
  }
  void completeHeld() {
    onLoop([this] { handler_.completeHeld(); });
  }
  std::string scrape() {
    Client c(port_);
    c.send(get("/metrics"));
    return c.next().body;
  }
  // The value of one sample line in /metrics, -1 when absent.
  double metric(const std::string& series) {
    std::string text = scrape();
    size_t at = text.find("\n" + series + " ");
    if (at == std::string::npos) return -1;
    return std::stod(text.substr(at + series.size() + 2));
  }
  double errors(std::string_view kind) {
    return metric("fleetsched_http_errors_total{kind=\"" + std::string(kind) + "\"}");
  }
  // Polls until cond() or about 2 s.
  template <typename F>
  bool eventually(F cond) {
    for (int i = 0; i < 400; ++i) {
      if (cond()) return true;
      std::this_thread::sleep_for(5ms);
    }
    return cond();
  }

  uv_loop_t loop_;
  uv_async_t stop_;
  uv_async_t wake_;
  std::mutex tasksMutex_;
  std::vector<std::function<void()>> tasks_;
  FakeHandler handler_;
  Metrics metrics_;
  std::unique_ptr<Server> server_;
  std::thread thread_;
  uint16_t port_ = 0;
};

TEST_F(ServerTest, KeepAliveServesEveryVerbOnOneConnection) {
  start();
  Client c(port_);
  for (std::string_view verb : {"filter", "prioritize", "preempt", "bind"}) {
    // Not "/" + std::string(verb): GCC 12's -Wrestrict misfires on that at -O3 (PR 105651).
    c.send(post(std::string("/").append(verb), R"({"x":1})"));
    Response r = c.next();
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.body, std::string(verb) + R"(:{"x":1})");
    EXPECT_EQ(r.headers["content-type"], "application/json");
    EXPECT_EQ(r.headers.count("connection"), 0u);
  }
  EXPECT_EQ(metric("fleetsched_http_requests_total{verb=\"filter\"}"), 1);
  EXPECT_EQ(metric("fleetsched_http_request_duration_seconds_count{verb=\"bind\"}"), 1);
}

TEST_F(ServerTest, PipelinedRequestsAreAnsweredInOrderFromOneBatch) {
  start();
  Client c(port_);
  c.send(post("/filter", "1") + post("/prioritize", "2") + get("/healthz") + post("/bind", "3"));
  EXPECT_EQ(c.next().body, "filter:1");
  EXPECT_EQ(c.next().body, "prioritize:2");
  EXPECT_EQ(c.next().body, "ok\n");
  EXPECT_EQ(c.next().body, "bind:3");
  auto batches = handler_.batches();
  ASSERT_EQ(batches.size(), 1u);
  EXPECT_EQ(batches[0], (std::vector<std::string>{"1", "2", "3"}));
}

TEST_F(ServerTest, PipelineDeeperThanTheLimitIsServedAcrossTurns) {
  ServerConfig cfg;
  cfg.maxPipelined = 2;
  start(cfg);
  Client c(port_);
  std::string all;
  for (int i = 0; i < 7; ++i) all += post("/filter", std::to_string(i));
  c.send(all);
  for (int i = 0; i < 7; ++i) EXPECT_EQ(c.next().body, "filter:" + std::to_string(i));
  for (const auto& b : handler_.batches()) EXPECT_LE(b.size(), 2u);
}

TEST_F(ServerTest, RequestSplitByteByByte) {
  start();
  Client c(port_);
  std::string req = post("/filter", R"({"Pod":{"metadata":{"name":"p"}}})");
  for (char ch : req) {
    c.send(std::string_view(&ch, 1));
    std::this_thread::sleep_for(100us);
  }
  Response r = c.next();
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, R"(filter:{"Pod":{"metadata":{"name":"p"}}})");
}

// Large Content-Length bodies are read straight into their body buffers (no copy out of the
// shared read buffer) up to their end: every byte must land in place, in pieces of any size,
// and a request pipelined right behind one must still be framed on its own.
TEST_F(ServerTest, LargeBodiesReadInPlaceArriveIntactWithPipelinedRequestsBehind) {
  start();
  Client c(port_);
  auto body = [](int k, size_t n) {
    std::string b(n, '\0');
    for (size_t i = 0; i < n; ++i) b[i] = static_cast<char>('a' + (i * 7 + static_cast<size_t>(k)) % 26);
    return b;
  };
  const std::string first = body(1, 300 * 1024), second = body(2, 700 * 1024 + 13);
  const std::string wire = post("/filter", first) + post("/prioritize", "small") + post("/filter", second) +
                           post("/bind", "tail");
  // Uneven pieces with pauses, so reads end inside headers, inside bodies and between requests.
  size_t at = 0, piece = 1000;
  while (at < wire.size()) {
    const size_t n = std::min(piece, wire.size() - at);
    c.send(std::string_view(wire).substr(at, n));
    at += n;
    piece = piece * 3 + 517;
    std::this_thread::sleep_for(2ms);
  }
  Response r = c.next();
  ASSERT_EQ(r.status, 200);
  EXPECT_TRUE(r.body == "filter:" + first) << "first body differs";
  EXPECT_EQ(c.next().body, "prioritize:small");
  r = c.next();
  EXPECT_TRUE(r.body == "filter:" + second) << "second body differs";
  EXPECT_EQ(c.next().body, "bind:tail");
}

// A request that is already whole in the socket when the loop gets to it (the usual case for a
// kube-scheduler NodeNames filter under load) is read head first, then its body in place: the
// body is not copied out of the shared read buffer.
TEST_F(ServerTest, WholeLargeRequestBodyIsReadInPlace) {
  start();
  Client blocker(port_), c(port_);
  blocker.send(post("/filter", "block"));
  ASSERT_TRUE(handler_.waitEntered());
  const std::string body(240 * 1024, 'n');
  c.send(post("/filter", body));
  std::this_thread::sleep_for(50ms);  // all of it waits in the socket while the loop is busy
  handler_.release();
  EXPECT_EQ(blocker.next().body, "filter:block");
  Response r = c.next();
  ASSERT_EQ(r.status, 200);
  EXPECT_TRUE(r.body == "filter:" + body) << "body differs";
  const double copied = metric("fleetsched_http_body_copied_bytes_total");
  EXPECT_GE(copied, 0);
  EXPECT_LT(copied, 8 * 1024) << "the body was copied out of the shared read buffer";
}

TEST_F(ServerTest, TwoConnectionsRequestsShareOneBatch) {
  start();
  Client a(port_), b(port_), blocker(port_);
  blocker.send(post("/filter", "block"));
  ASSERT_TRUE(handler_.waitEntered());
  // The loop is busy: both requests wait in their sockets and are read in the same turn.
  a.send(post("/filter", "from-a"));
  b.send(post("/prioritize", "from-b"));
  std::this_thread::sleep_for(50ms);
  handler_.release();
  EXPECT_EQ(blocker.next().body, "filter:block");
  EXPECT_EQ(a.next().body, "filter:from-a");
  EXPECT_EQ(b.next().body, "prioritize:from-b");
  auto batches = handler_.batches();
  ASSERT_EQ(batches.size(), 2u);
  std::vector<std::string> second = batches[1];
  std::sort(second.begin(), second.end());
  EXPECT_EQ(second, (std::vector<std::string>{"from-a", "from-b"}));
}

TEST_F(ServerTest, ChunkedBodyAndExpectContinue) {
  start();
  Client c(port_);
  c.send("POST /filter HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n");
  EXPECT_EQ(c.next().body, "filter:abcde");

  c.send("POST /bind HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n");
  Response interim = c.next();
  EXPECT_EQ(interim.status, 100);
  c.send("{}");
  EXPECT_EQ(c.next().body, "bind:{}");
}

TEST_F(ServerTest, UrlPrefixAndBuiltInRoutes) {
  ServerConfig cfg;
  cfg.urlPrefix = "/api/scheduler/";
  start(cfg);
  Client c(port_);
  c.send(post("/api/scheduler/filter", "x"));
  EXPECT_EQ(c.next().body, "filter:x");
  c.send(post("/filter", "x"));
  Response nf = c.next();
  EXPECT_EQ(nf.status, 404);
  c.send(get("/api/scheduler/filter"));
  Response wrong = c.next();
  EXPECT_EQ(wrong.status, 405);
  EXPECT_EQ(wrong.headers["allow"], "POST");
  c.send(post("/healthz", ""));
  Response wrongGet = c.next();
  EXPECT_EQ(wrongGet.status, 405);
  EXPECT_EQ(wrongGet.headers["allow"], "GET");
  // 404 and 405 keep the connection usable.
  c.send(get("/healthz"));
  Response ok = c.next();
  EXPECT_EQ(ok.status, 200);
  EXPECT_EQ(ok.body, "ok\n");
  EXPECT_EQ(errors("not_found"), 1);
  EXPECT_EQ(errors("method_not_allowed"), 2);
}

TEST_F(ServerTest, ReadyzFollowsTheHandler) {
  start();
  Client c(port_);
  handler_.ready_ = false;
  c.send(get("/readyz"));
  EXPECT_EQ(c.next().status, 503);
  handler_.ready_ = true;
  c.send(get("/readyz"));
  EXPECT_EQ(c.next().status, 200);
}

TEST_F(ServerTest, CustomGetEndpoints) {
  start({}, [](Server& s) {
    s.addGet("/debug/pods/", [](std::string_view target, LocalResponse& out) {
      out.contentType = "application/json";
      out.body = "{\"target\":\"" + std::string(target) + "\"}";
    });
    s.addGet("/debug/audit", [](std::string_view, LocalResponse& out) {
      out.status = 500;
      out.body = "audit failed\n";
    });
  });
  Client c(port_);
  c.send(get("/debug/pods/ml/train-0?verbose=1"));
  Response r = c.next();
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.headers["content-type"], "application/json");
  EXPECT_EQ(r.body, R"({"target":"/debug/pods/ml/train-0?verbose=1"})");
  c.send(get("/debug/audit"));
  EXPECT_EQ(c.next().status, 500);
  c.send(get("/debug/none"));
  EXPECT_EQ(c.next().status, 404);
}

TEST_F(ServerTest, MetricsEndpointIsPrometheusText) {
  start();
  Client c(port_);
  c.send(get("/metrics"));
  Response r = c.next();
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.headers["content-type"], "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_NE(r.body.find("# TYPE fleetsched_http_request_duration_seconds histogram"), std::string::npos);
  EXPECT_NE(r.body.find("fleetsched_http_connections 1\n"), std::string::npos);
}

TEST_F(ServerTest, Http10AndConnectionCloseEndTheConnection) {
  start();
  {
    Client c(port_);
    c.send("GET /healthz HTTP/1.0\r\n\r\n");
    Response r = c.next();
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.headers["connection"], "close");
    EXPECT_TRUE(c.closedByPeer());
  }
  {
    Client c(port_);
    c.send("GET /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
    Response r = c.next();
    EXPECT_EQ(r.headers["connection"], "keep-alive");
    c.send("GET /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
    EXPECT_EQ(c.next().status, 200);
  }
  {
    Client c(port_);
    // Whatever follows "Connection: close" is not served.
    c.send(post("/filter", "a", "Connection: close\r\n") + post("/filter", "b"));
    Response r = c.next();
    EXPECT_EQ(r.body, "filter:a");
    EXPECT_EQ(r.headers["connection"], "close");
    EXPECT_TRUE(c.closedByPeer());
  }
}

// ExtenderRequest::closeConnection (a follower's refused bind with leader election): the answer
// says Connection: close and the connection ends, so the client reconnects (perhaps elsewhere).
TEST_F(ServerTest, HandlerCanEndTheConnectionAfterItsAnswer) {
  start();
  Client c(port_);
  c.send(post("/filter", "a"));
  EXPECT_EQ(c.next().headers.count("connection"), 0u);
  c.send(post("/bind", "close"));
  Response r = c.next();
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "bind:close");
  EXPECT_EQ(r.headers["connection"], "close");
  EXPECT_TRUE(c.closedByPeer());
  // Other connections are not affected.
  Client d(port_);
  d.send(post("/filter", "b"));
  EXPECT_EQ(d.next().headers.count("connection"), 0u);
  d.send(post("/filter", "c"));
  EXPECT_EQ(d.next().body, "filter:c");
}

TEST_F(ServerTest, OversizedHeadersGet431AndClose) {
  ServerConfig cfg;
  cfg.maxHeaderBytes = 1024;
  start(cfg);
  Client c(port_);
  c.send("GET /healthz HTTP/1.1\r\nX-Big: " + std::string(4096, 'a') + "\r\n\r\n");
  Response r = c.next();
  EXPECT_EQ(r.status, 431);
  EXPECT_EQ(r.headers["connection"], "close");
  EXPECT_TRUE(c.closedByPeer());
  EXPECT_EQ(errors("header_too_large"), 1);
}

TEST_F(ServerTest, OversizedBodyGets413BeforeItIsSent) {
  ServerConfig cfg;
  cfg.maxBodyBytes = 1000;
  start(cfg);
  Client c(port_);
  c.send("POST /filter HTTP/1.1\r\nContent-Length: 1001\r\n\r\n");
  Response r = c.next();
  EXPECT_EQ(r.status, 413);
  EXPECT_TRUE(c.closedByPeer());

  // Chunked: the limit applies to the decoded body as it arrives. The client keeps sending after
  // the 413; lingering close lets it read the answer instead of a reset.
  Client d(port_);
  d.send("POST /filter HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n");
  std::string chunk = "100\r\n" + std::string(256, 'x') + "\r\n";
  for (int i = 0; i < 8; ++i) d.send(chunk);
  EXPECT_EQ(d.next().status, 413);
  EXPECT_EQ(errors("body_too_large"), 2);
  EXPECT_EQ(handler_.batches().size(), 0u);
}

TEST_F(ServerTest, MalformedRequestGets400AndClose) {
  start();
  Client c(port_);
  c.send("BREW /pot HTCPCP/1.0\r\n\r\n");
  Response r = c.next();
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.body.rfind("bad request", 0), 0u);
  EXPECT_TRUE(c.closedByPeer());
  EXPECT_EQ(errors("bad_request"), 1);
}

TEST_F(ServerTest, ErrorAfterPipelinedRequestsComesAfterTheirResponses) {
  start();
  Client c(port_);
  c.send(post("/filter", "1") + "NOT HTTP\r\n\r\n");
  EXPECT_EQ(c.next().body, "filter:1");
  EXPECT_EQ(c.next().status, 400);
  EXPECT_TRUE(c.closedByPeer());
}

TEST_F(ServerTest, SlowHeadersAndBodiesGet408) {
  ServerConfig cfg;
  cfg.headerTimeoutMs = 100;
  cfg.bodyTimeoutMs = 100;
  start(cfg);
  Client slowHead(port_), slowBody(port_), healthy(port_);
  slowHead.send("POST /filter HTTP/1.1\r\nContent-Le");
  slowBody.send("POST /filter HTTP/1.1\r\nContent-Length: 10\r\n\r\n123");
  auto t0 = std::chrono::steady_clock::now();
  Response h = slowHead.next();
  Response b = slowBody.next();
  EXPECT_EQ(h.status, 408);
  EXPECT_EQ(b.status, 408);
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 90ms);
  EXPECT_TRUE(slowHead.closedByPeer());
  EXPECT_TRUE(slowBody.closedByPeer());
  // Others are not disturbed.
  healthy.send(post("/filter", "ok"));
  EXPECT_EQ(healthy.next().body, "filter:ok");
  EXPECT_EQ(errors("header_timeout"), 1);
  EXPECT_EQ(errors("body_timeout"), 1);
}

TEST_F(ServerTest, HeaderTimeoutIsNotResetByTrickledBytes) {
  ServerConfig cfg;
  cfg.headerTimeoutMs = 150;
  start(cfg);
  Client c(port_);
  auto t0 = std::chrono::steady_clock::now();
  c.send("GET /healthz HTTP/1.1\r\n");
  // Slowloris: one header byte every 20 ms never completes the headers.
  while (!c.readable(20) && std::chrono::steady_clock::now() - t0 < 2s) c.send("X");
  Response r = c.next();
  EXPECT_EQ(r.status, 408);
  // Were trickled bytes to extend it, the 408 could only come after the 2 s of trickling.
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 1500ms);
}

TEST_F(ServerTest, IdleKeepAliveConnectionIsClosed) {
  ServerConfig cfg;
  cfg.idleTimeoutMs = 100;
  start(cfg);
  Client c(port_);
  c.send(get("/healthz"));
  EXPECT_EQ(c.next().status, 200);
  Response r = c.next();  // waits for the idle timeout
  EXPECT_EQ(r.status, 408);
  EXPECT_TRUE(c.closedByPeer());
  EXPECT_EQ(errors("idle_timeout"), 1);
}

TEST_F(ServerTest, TooManyConnectionsGet503WhileOthersKeepWorking) {
  ServerConfig cfg;
  cfg.maxConnections = 2;
  start(cfg);
  Client a(port_), b(port_);
  a.send(get("/healthz"));
  b.send(get("/healthz"));
  EXPECT_EQ(a.next().status, 200);
  EXPECT_EQ(b.next().status, 200);
  Client extra(port_);
  Response r = extra.next();
  EXPECT_EQ(r.status, 503);
  EXPECT_TRUE(extra.closedByPeer());
  a.send(post("/filter", "still"));
  EXPECT_EQ(a.next().body, "filter:still");
  // Scrape over an existing connection: a third one would be refused.
  b.send(get("/metrics"));
  std::string text = b.next().body;
  EXPECT_NE(text.find("fleetsched_http_errors_total{kind=\"too_many_connections\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("fleetsched_http_connections 2\n"), std::string::npos);
  // A slot frees up when a client leaves.
  a.close();
  EXPECT_TRUE(eventually([&] {
    Client again(port_);
    again.send(get("/healthz"));
    return again.next().status == 200;
  }));
}

// Issue 26: a connection that never sent a byte held its slot for the 120 s idle timeout, so
// maxConnections silent sockets locked kube-scheduler out for two minutes. It is closed after
// the short first-byte timeout instead, without an answer; a client that has spoken keeps the
// idle timeout.
TEST_F(ServerTest, SilentConnectionsAreClosedAfterTheFirstByteTimeout) {
  ServerConfig cfg;
  cfg.maxConnections = 3;
  cfg.firstByteTimeoutMs = 150;
  start(cfg);
  Client spoke(port_);
  spoke.send(get("/healthz"));
  ASSERT_EQ(spoke.next().status, 200);
  Client silent1(port_), silent2(port_);
  ASSERT_TRUE(eventually([&] { return server_->connections() == 3; }));
  {
    Client lockedOut(port_);
    EXPECT_EQ(lockedOut.next().status, 503);
  }
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_TRUE(silent1.closedByPeer()) << "a silent connection outlived the first-byte timeout";
  EXPECT_TRUE(silent2.closedByPeer());
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 1500ms);
  EXPECT_TRUE(eventually([&] { return errors("first_byte_timeout") == 2; }));
  // The slots are free again, and the connection that spoke is still open.
  Client next(port_);
  next.send(get("/healthz"));
  EXPECT_EQ(next.next().status, 200);
  spoke.send(post("/filter", "still"));
  EXPECT_EQ(spoke.next().body, "filter:still");
}

// Beyond maxConnectionsPerClient, a new connection from the same address is closed at once,
// before it can take one of maxConnections' slots.
TEST_F(ServerTest, ConnectionsBeyondThePerClientLimitAreClosedAtOnce) {
  ServerConfig cfg;
  cfg.maxConnectionsPerClient = 2;
  start(cfg);
  Client a(port_), b(port_);
  a.send(get("/healthz"));
  b.send(get("/healthz"));
  EXPECT_EQ(a.next().status, 200);
  EXPECT_EQ(b.next().status, 200);
  Client extra(port_);
  extra.send(get("/healthz"));
  EXPECT_TRUE(extra.closedByPeer()) << "a third connection from one address was served";
  EXPECT_EQ(server_->connections(), 2u);
  // A slot frees up once the server has seen that client close one.
  a.close();
  ASSERT_TRUE(eventually([&] { return server_->connections() == 1; }));
  Client again(port_);
  again.send(get("/healthz"));
  EXPECT_EQ(again.next().status, 200);
  b.send(get("/metrics"));
  EXPECT_NE(b.next().body.find("fleetsched_http_errors_total{kind=\"too_many_from_client\"} 1\n"),
            std::string::npos);
}

TEST_F(ServerTest, ClientClosingMidBodyIsCountedAndForgotten) {
  start();
  {
    Client c(port_);
    c.send("POST /filter HTTP/1.1\r\nContent-Length: 100\r\n\r\n{\"Pod\":");
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_TRUE(eventually([&] { return errors("client_disconnect") == 1; }));
  EXPECT_TRUE(eventually([&] { return metric("fleetsched_http_connections") == 1; }));  // the scraper
  EXPECT_EQ(handler_.batches().size(), 0u);
}

TEST_F(ServerTest, HalfClosedClientStillGetsItsAnswer) {
  start();
  Client c(port_);
  c.send(post("/filter", "last"));
  c.shutdownWrite();
  Response r = c.next();
  EXPECT_EQ(r.body, "filter:last");
}

// The answers of a client that left are dropped; the others are written.
TEST_F(ServerTest, ClientGoneBeforeItsResponseIsWritten) {
  start();
  const std::string big = "keep" + std::string(1000, 'g');
  {
    Client blocker(port_);
    Client gone(port_);
    blocker.send(post("/filter", "block"));
    ASSERT_TRUE(handler_.waitEntered());
    gone.send(post("/filter", big) + post("/prioritize", "gone"));
    gone.close();
    std::this_thread::sleep_for(20ms);
    handler_.release();
    EXPECT_EQ(blocker.next().body, "filter:block");
  }
  Client c(port_);
  c.send(get("/healthz"));
  EXPECT_EQ(c.next().status, 200);
  c.send(post("/filter", "after"));
  EXPECT_EQ(c.next().body, "filter:after");
}

TEST_F(ServerTest, LargeResponseToASlowReaderIsWrittenCompletely) {
  start();
  Client c(port_);
  std::string body(8u << 20, 'z');
  c.send(post("/filter", body));
  std::this_thread::sleep_for(50ms);  // the server's try_write fills the socket, the rest queues
  Response r = c.next();
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body.size(), body.size() + 7);
  c.send(get("/healthz"));
  EXPECT_EQ(c.next().status, 200);
}

// What the socket does not take at once is queued: a large answer as it is, only its status line
// and headers copied. Copying a 45 MB full-Nodes answer held the loop for 17-23 ms.
TEST_F(ServerTest, LargeAnswerToASlowReaderIsQueuedWithoutACopy) {
  start();
  Client c(port_);
  std::string body(32u << 20, 'z');
  c.send(post("/filter", body));
  // The client reads nothing yet: once the answer is written (its latency observed), the socket
  // holds a few MB of it and the rest is queued, the only bytes the server still buffers.
  for (int i = 0; i < 400 && metric("fleetsched_http_request_duration_seconds_count{verb=\"filter\"}") == 0; ++i)
    std::this_thread::sleep_for(5ms);
  ASSERT_GT(metric("fleetsched_http_buffered_bytes"), 1 << 20)
      << "the answer was not queued: this test would not see a copy";
  Response r = c.next();
  EXPECT_EQ(r.status, 200);
  ASSERT_EQ(r.body.size(), body.size() + 7);
  EXPECT_EQ(r.body.substr(0, 8), "filter:z");
  EXPECT_EQ(r.body.find_first_not_of('z', 7), std::string::npos);
  EXPECT_LT(metric("fleetsched_http_write_copied_bytes_total"), 1024);
  c.send(get("/healthz"));
  EXPECT_EQ(c.next().status, 200);
  EXPECT_EQ(metric("fleetsched_http_buffered_bytes"), 0);
}

// close() with connections in every state: TearDown's uv_loop_close() fails if a handle leaks,
// and ASan reports leaked connection memory.
TEST_F(ServerTest, CloseReleasesBusyConnections) {
  start();
  Client idle(port_), partial(port_), unread(port_), silent(port_);  // silent: connected, never sends
  idle.send(get("/healthz"));
  EXPECT_EQ(idle.next().status, 200);
  partial.send("POST /filter HTTP/1.1\r\nContent-Length: 10\r\n\r\n12");
  unread.send(post("/filter", std::string(16u << 20, 'u')));  // 16 MiB answer nobody reads
  ASSERT_TRUE(unread.readable(3000));
  EXPECT_TRUE(eventually([&] { return server_->connections() == 4; }));
  uv_async_send(&stop_);
  thread_.join();
  EXPECT_EQ(server_->connections(), 0u);
  EXPECT_TRUE(idle.closedByPeer());
}

// A client that pipelines far more response bytes than it reads: the server stops reading
// while its write queue is full, resumes as the client catches up, and loses nothing.
TEST_F(ServerTest, PipelinedClientThatReadsLateGetsEveryResponseInOrder) {
  ServerConfig cfg;
  cfg.maxPipelined = 4;
  start(cfg);
  Client c(port_);
  constexpr int kRequests = 48;
  const size_t kBody = 512 * 1024;  // 24 MiB of responses in all, over the 1 MiB per-connection bound
  std::thread sender([&] {
    for (int i = 0; i < kRequests; ++i)
      c.send(post("/filter", std::string(kBody, static_cast<char>('a' + i % 26))));
  });
  std::this_thread::sleep_for(200ms);
  double received = metric("fleetsched_http_received_bytes_total");
  EXPECT_LT(received, kRequests * kBody * 0.75) << "the server kept reading a client that does not read";
  for (int i = 0; i < kRequests; ++i) {
    Response r = c.next();
    ASSERT_EQ(r.status, 200) << i;
    ASSERT_EQ(r.body.size(), kBody + 7) << i;
    ASSERT_EQ(r.body[7], static_cast<char>('a' + i % 26)) << i;
  }
  sender.join();
}

TEST_F(ServerTest, ClientGoneMidResponse) {
  start();
  {
    Client c(port_);
    c.send(post("/filter", std::string(16u << 20, 'r')));
    // Wait for the first bytes of the 16 MiB answer, then vanish with the rest unread (the
    // kernel resets the connection).
    ASSERT_TRUE(c.readable(3000));
  }
  EXPECT_TRUE(eventually([&] { return errors("write_failed") == 1; }));
  EXPECT_TRUE(eventually([&] { return metric("fleetsched_http_connections") == 1; }));
}

TEST_F(ServerTest, GarbageOnManyConnectionsLeavesTheServerHealthy) {
  start();
  std::mt19937 rng(3);
  for (int i = 0; i < 20; ++i) {
    Client c(port_);
    std::string junk(64 + rng() % 4096, '\0');
    for (char& ch : junk) ch = static_cast<char>(rng());
    if (i % 2) junk = post("/filter", "{}").substr(0, rng() % 60) + junk;  // valid start, then noise
    c.send(junk);
    Response r = c.next();
    EXPECT_TRUE(r.status == 400 || r.status == 431 || r.status == 413 || r.status == 404) << r.status;
  }
  Client ok(port_);
  ok.send(post("/filter", "fine"));
  EXPECT_EQ(ok.next().body, "filter:fine");
  EXPECT_TRUE(eventually([&] { return server_->connections() == 1; }));
}

// ---- deferred completion (ExtenderRequest::deferred) ----

TEST_F(ServerTest, DeferredRequestCompletedFromATimerIsAnswered) {
  start();
  Client c(port_);
  c.send(post("/bind", "timer"));
  Response r = c.next();
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "bind:timer late");
  EXPECT_EQ(r.headers["content-type"], "application/json");
  // Completed inside handleBatch: answered with its batch.
  c.send(post("/bind", "sync"));
  EXPECT_EQ(c.next().body, "bind:sync late");
  c.send(post("/filter", "after"));
  EXPECT_EQ(c.next().body, "filter:after");
  EXPECT_EQ(server_->deferredRequests(), 0u);
  EXPECT_EQ(metric("fleetsched_http_requests_total{verb=\"bind\"}"), 2);
  EXPECT_EQ(metric("fleetsched_http_request_duration_seconds_count{verb=\"bind\"}"), 2);
  EXPECT_EQ(metric("fleetsched_http_deferred_requests"), 0);
}

TEST_F(ServerTest, ResponsesAfterADeferredOneWaitForItInOrder) {
  start();
  Client c(port_);
  c.send(post("/bind", "defer") + post("/filter", "1") + get("/healthz") + post("/prioritize", "2"));
  ASSERT_TRUE(eventually([&] { return handler_.held == 1; }));
  ASSERT_TRUE(eventually([&] { return handler_.batches().size() == 1; }));
  EXPECT_EQ(handler_.batches()[0], (std::vector<std::string>{"defer", "1", "2"}));
  EXPECT_FALSE(c.readable(50)) << "a response overtook the deferred one";
  // Latency is observed when a response is written: none of these yet.
  EXPECT_EQ(metric("fleetsched_http_deferred_requests"), 1);
  EXPECT_EQ(metric("fleetsched_http_request_duration_seconds_count{verb=\"bind\"}"), 0);
  EXPECT_EQ(metric("fleetsched_http_request_duration_seconds_count{verb=\"filter\"}"), 0);
  EXPECT_EQ(metric("fleetsched_http_requests_total{verb=\"bind\"}"), 1);
  completeHeld();
  EXPECT_EQ(c.next().body, "bind:defer late");
  EXPECT_EQ(c.next().body, "filter:1");
  EXPECT_EQ(c.next().body, "ok\n");
  EXPECT_EQ(c.next().body, "prioritize:2");
  EXPECT_EQ(metric("fleetsched_http_deferred_requests"), 0);
  EXPECT_EQ(metric("fleetsched_http_request_duration_seconds_count{verb=\"bind\"}"), 1);
  EXPECT_EQ(metric("fleetsched_http_request_duration_seconds_count{verb=\"filter\"}"), 1);
  // Two deferred in a row, the second completed first: still answered in request order.
  c.send(post("/bind", "defer") + post("/bind", "timer:1") + post("/filter", "3"));
  ASSERT_TRUE(eventually([&] { return handler_.held == 1; }));
  EXPECT_FALSE(c.readable(50));
  completeHeld();
  EXPECT_EQ(c.next().body, "bind:defer late");
  EXPECT_EQ(c.next().body, "bind:timer:1 late");
  EXPECT_EQ(c.next().body, "filter:3");
}

TEST_F(ServerTest, OtherConnectionsFlowWhileOneIsDeferred) {
  start();
  Client a(port_), b(port_);
  a.send(post("/bind", "defer"));
  ASSERT_TRUE(eventually([&] { return handler_.held == 1; }));
  for (int i = 0; i < 3; ++i) {
    b.send(post("/filter", std::to_string(i)));
    EXPECT_EQ(b.next().body, "filter:" + std::to_string(i));
  }
  EXPECT_FALSE(a.readable(0));
  completeHeld();
  EXPECT_EQ(a.next().body, "bind:defer late");
}

// A request the handler answers off the loop thread is the last one framed on its connection
// until its answer is queued: what follows is decided after it, not beside it.
TEST_F(ServerTest, NothingIsFramedBehindARequestAnsweredOffTheLoop) {
  start();
  Client c(port_), other(port_);
  c.send(post("/filter", "offloop") + post("/filter", "1") + get("/healthz"));
  ASSERT_TRUE(eventually([&] { return handler_.held == 1; }));
  other.send(post("/filter", "2"));
  EXPECT_EQ(other.next().body, "filter:2");
  EXPECT_FALSE(c.readable(50));
  for (const std::vector<std::string>& b : handler_.batches())
    EXPECT_EQ(std::count(b.begin(), b.end(), "1"), 0) << "a request behind it was framed before its answer";
  completeHeld();
  EXPECT_EQ(c.next().body, "filter:offloop late");
  EXPECT_EQ(c.next().body, "filter:1");
  EXPECT_EQ(c.next().body, "ok\n");
  EXPECT_EQ(handler_.batches().back(), (std::vector<std::string>{"1"}));
}

TEST_F(ServerTest, DeferredRequestCountsAgainstMaxPipelined) {
  ServerConfig cfg;
  cfg.maxPipelined = 1;
  start(cfg);
  Client c(port_);
  c.send(post("/bind", "defer"));
  ASSERT_TRUE(eventually([&] { return handler_.held == 1; }));
  c.send(post("/filter", "next"));
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(handler_.batches().size(), 1u) << "read past maxPipelined while a request was owed";
  completeHeld();
  EXPECT_EQ(c.next().body, "bind:defer late");
  EXPECT_EQ(c.next().body, "filter:next");
  EXPECT_EQ(handler_.batches().size(), 2u);
}

TEST_F(ServerTest, ConnectionWaitingForADeferredAnswerIsNotIdle) {
  ServerConfig cfg;
  cfg.idleTimeoutMs = 50;
  start(cfg);
  Client c(port_);
  c.send(post("/bind", "defer"));
  ASSERT_TRUE(eventually([&] { return handler_.held == 1; }));
  EXPECT_FALSE(c.readable(200));
  completeHeld();
  EXPECT_EQ(c.next().body, "bind:defer late");
  // Idle again once answered.
  EXPECT_EQ(c.next().status, 408);
  EXPECT_TRUE(c.closedByPeer());
  EXPECT_EQ(errors("idle_timeout"), 1);
}

TEST_F(ServerTest, ConnectionCloseBehindADeferredRequestWaitsForIt) {
  start();
  Client c(port_);
  c.send(post("/bind", "defer") + post("/filter", "last", "Connection: close\r\n") +
         post("/filter", "dropped"));
  ASSERT_TRUE(eventually([&] { return handler_.batches().size() == 1; }));
  EXPECT_FALSE(c.readable(50)) << "answered or shut down before the deferred response";
  completeHeld();
  EXPECT_EQ(c.next().body, "bind:defer late");
  Response r = c.next();
  EXPECT_EQ(r.body, "filter:last");
  EXPECT_EQ(r.headers["connection"], "close");
  EXPECT_TRUE(c.closedByPeer());
}

TEST_F(ServerTest, HalfClosedClientGetsItsDeferredAnswer) {
  start();
  Client c(port_);
  c.send(post("/bind", "defer"));
  ASSERT_TRUE(eventually([&] { return handler_.held == 1; }));
  c.shutdownWrite();
  EXPECT_FALSE(c.readable(50));
  completeHeld();
  EXPECT_EQ(c.next().body, "bind:defer late");
  EXPECT_TRUE(c.closedByPeer());
  EXPECT_TRUE(eventually([&] { return server_->connections() == 0; }));
}

// The request outlives its connection until complete(); ASan reports a use-after-free or a leak.
TEST_F(ServerTest, ClientResetWhileDeferredThenComplete) {
  start();
  {
    Client c(port_);
    c.send(post("/bind", "defer") + post("/filter", "behind"));
    ASSERT_TRUE(eventually([&] { return handler_.held == 1 && handler_.batches().size() == 1; }));
    c.reset();
  }
  ASSERT_TRUE(eventually([&] { return server_->connections() == 0; }));
  EXPECT_EQ(server_->deferredRequests(), 1u);
  completeHeld();
  EXPECT_EQ(server_->deferredRequests(), 0u);
  EXPECT_EQ(metric("fleetsched_http_deferred_requests"), 0);
  Client again(port_);
  again.send(post("/bind", "timer"));
  EXPECT_EQ(again.next().body, "bind:timer late");
}

// close() orphans deferred requests without freeing them: one is completed by its timer while
// the loop winds down, one after the loop has stopped.
TEST_F(ServerTest, CloseWithDeferredRequestsOutstanding) {
  start();
  Client a(port_), b(port_);
  a.send(post("/bind", "defer"));
  b.send(post("/bind", "timer:150"));
  ASSERT_TRUE(eventually([&] { return server_->deferredRequests() == 2; }));
  uv_async_send(&stop_);
  thread_.join();  // returns once the timer has completed its request
  EXPECT_EQ(server_->connections(), 0u);
  EXPECT_EQ(server_->deferredRequests(), 1u);
  EXPECT_TRUE(a.closedByPeer());
  EXPECT_TRUE(b.closedByPeer());
  handler_.completeHeld();  // the loop has stopped: this thread may call complete()
  EXPECT_EQ(server_->deferredRequests(), 0u);
}

// ---- graceful shutdown (SIGTERM) ----

// Issue 26, lifecycle: on SIGTERM every connection closed at once, and a bind whose Binding was
// already posted answered kube-scheduler with EOF. shutdown() stops accepting, answers what is
// in flight (a deferred bind, a request still arriving), closes idle connections, then drains.
TEST_F(ServerTest, ShutdownAnswersWhatIsInFlightAndRefusesNewConnections) {
  start();
  Client idle(port_), bind(port_), arriving(port_), probe(port_);
  idle.send(get("/healthz"));
  EXPECT_EQ(idle.next().status, 200);
  bind.send(post("/bind", "defer"));
  ASSERT_TRUE(eventually([&] { return handler_.held == 1; }));
  arriving.send("POST /filter HTTP/1.1\r\nContent-Length: 7\r\n\r\nhalf");
  probe.send("GET /readyz HTTP/1.1\r\n");
  // The bind, the body and the head being read: until the server has read their bytes, the
  // last two are idle connections that shutdown() rightly closes.
  ASSERT_TRUE(eventually([&] { return pendingOnLoop() == 3u; }));
  onLoop([this] { server_->shutdown(); });

  EXPECT_FALSE(Client(port_).connected()) << "the listener still accepts after shutdown()";
  EXPECT_TRUE(idle.closedByPeer()) << "an idle keep-alive connection was kept open";
  idle.close();
  arriving.send("way");
  Response a = arriving.next();
  EXPECT_EQ(a.status, 200);
  EXPECT_EQ(a.body, "filter:halfway");
  EXPECT_EQ(a.headers["connection"], "close");
  EXPECT_TRUE(arriving.closedByPeer());
  arriving.close();
  probe.send("Host: x\r\n\r\n");
  Response r = probe.next();
  EXPECT_EQ(r.status, 503) << "/readyz still says ready while shutting down";
  EXPECT_EQ(r.headers["connection"], "close");
  probe.close();  // as a client does after Connection: close (else the server lingers 2 s)

  EXPECT_FALSE(bind.readable(50));
  bool drained = true;
  onLoop([&] { drained = server_->drained(); });
  EXPECT_FALSE(drained) << "drained with a deferred bind outstanding";
  size_t pending = 0;
  onLoop([&] { pending = server_->pendingRequests(); });
  EXPECT_EQ(pending, 1u);
  completeHeld();
  Response b = bind.next();
  EXPECT_EQ(b.status, 200);
  EXPECT_EQ(b.body, "bind:defer late");
  EXPECT_EQ(b.headers["connection"], "close");
  EXPECT_TRUE(bind.closedByPeer());
  bind.close();
  EXPECT_TRUE(eventually([&] {
    bool d = false;
    onLoop([&] { d = server_->drained(); });
    return d;
  }));
  EXPECT_EQ(server_->connections(), 0u);
}

// A request that never finishes arriving is what the caller's deadline cuts: pendingRequests()
// counts it and close() ends it.
TEST_F(ServerTest, ShutdownLeavesAStalledRequestToTheDeadline) {
  start();
  Client stalled(port_);
  stalled.send("POST /filter HTTP/1.1\r\nContent-Length: 10\r\n\r\n12");
  // Accepted is not enough: until the server has read the head, the connection is idle and
  // shutdown() rightly closes it (CI saw that once: pending 0, the client read EOF).
  ASSERT_TRUE(eventually([&] { return pendingOnLoop() == 1u; }));
  onLoop([this] { server_->shutdown(); });
  size_t pending = 0;
  bool drained = true;
  onLoop([&] {
    pending = server_->pendingRequests();
    drained = server_->drained();
  });
  EXPECT_EQ(pending, 1u);
  EXPECT_FALSE(drained);
  EXPECT_FALSE(stalled.readable(50));
  onLoop([this] { server_->close(); });
  EXPECT_TRUE(stalled.closedByPeer());
}

// A deferred request never completed is freed with the server (ASan: no leak).
TEST_F(ServerTest, ServerDestroyedWithADeferredRequestNeverCompleted) {
  start();
  Client c(port_);
  c.send(post("/bind", "defer"));
  ASSERT_TRUE(eventually([&] { return server_->deferredRequests() == 1; }));
  uv_async_send(&stop_);
  thread_.join();
  EXPECT_TRUE(c.closedByPeer());
}

// SO_REUSEPORT lets a second reactor bind the same port (one reactor per core later).
TEST(ServerListen, ReusePortLetsTwoReactorsShareAPort) {
  for (bool reuse : {true, false}) {
    uv_loop_t loop;
    uv_loop_init(&loop);
    FakeHandler handler;
    Metrics metrics;
    ServerConfig cfg;
    cfg.port = 0;
    cfg.reusePort = reuse;
    {
      Server first(&loop, cfg, handler, metrics);
      ASSERT_EQ(first.listen(), 0);
      cfg.port = first.port();
      Server second(&loop, cfg, handler, metrics);
      int rc = second.listen();
      if (reuse) {
        EXPECT_EQ(rc, 0);
        EXPECT_EQ(second.port(), first.port());
      } else {
        EXPECT_EQ(rc, UV_EADDRINUSE);
      }
    }  // the destructors close their handles
    EXPECT_EQ(uv_loop_close(&loop), 0) << "reuse=" << reuse;
  }
}

TEST(ServerListen, ReactorsSharingARegistryGetTheirOwnSeries) {
  uv_loop_t loop;
  uv_loop_init(&loop);
  FakeHandler handler;
  Metrics metrics;
  ServerConfig cfg;
  cfg.metricLabels = {{"reactor", "0"}};
  {
    Server a(&loop, cfg, handler, metrics);
    cfg.metricLabels = {{"reactor", "1"}};
    Server b(&loop, cfg, handler, metrics);
  }
  EXPECT_EQ(uv_loop_close(&loop), 0);
  std::string text;
  metrics.render(text);
  EXPECT_NE(text.find("fleetsched_http_requests_total{verb=\"filter\",reactor=\"0\"} 0\n"),
            std::string::npos);
  EXPECT_NE(text.find("fleetsched_http_requests_total{verb=\"filter\",reactor=\"1\"} 0\n"),
            std::string::npos);
  EXPECT_NE(text.find("fleetsched_http_connections{reactor=\"1\"} 0\n"), std::string::npos);
}

TEST(ServerListen, BadHostIsAnError) {
  uv_loop_t loop;
  uv_loop_init(&loop);
  FakeHandler handler;
  Metrics metrics;
  ServerConfig cfg;
  cfg.host = "not-an-address";
  {
    Server s(&loop, cfg, handler, metrics);
    EXPECT_EQ(s.listen(), UV_EINVAL);
    EXPECT_EQ(s.port(), 0);
  }
  cfg.host = "[::1]";
  cfg.port = 0;
  {
    Server s(&loop, cfg, handler, metrics);
    int rc = s.listen();
    // Hosts without IPv6 refuse ::1; anything else must work.
    if (rc != UV_EADDRNOTAVAIL && rc != UV_EAFNOSUPPORT) {
      EXPECT_EQ(rc, 0);
      EXPECT_NE(s.port(), 0);
    }
  }
  EXPECT_EQ(uv_loop_close(&loop), 0);
}

// Every error kind is counted exactly once per occurrence, and only under its own name.
TEST_F(ServerTest, MetricsCountEachErrorKindOnce) {
  ServerConfig cfg;
  cfg.maxConnections = 3;
  cfg.maxHeaderBytes = 1024;
  cfg.maxBodyBytes = 1000;
  cfg.headerTimeoutMs = 100;
  cfg.bodyTimeoutMs = 100;
  cfg.idleTimeoutMs = 400;
  start(cfg);
  {
    Client a(port_), b(port_), c(port_);
    for (Client* x : {&a, &b, &c}) {
      x->send(get("/healthz"));
      ASSERT_EQ(x->next().status, 200);
    }
    Client extra(port_);
    EXPECT_EQ(extra.next().status, 503);
  }  // clients leave while idle: not an error
  ASSERT_TRUE(eventually([&] { return server_->connections() == 0; }));
  {
    Client big(port_), huge(port_), bad(port_);
    big.send("GET / HTTP/1.1\r\nX: " + std::string(2000, 'x') + "\r\n\r\n");
    huge.send("POST /filter HTTP/1.1\r\nContent-Length: 5000\r\n\r\n");
    bad.send("GET / HTTP/1.1\r\nno colon\r\n\r\n");
    EXPECT_EQ(big.next().status, 431);
    EXPECT_EQ(huge.next().status, 413);
    EXPECT_EQ(bad.next().status, 400);
  }
  ASSERT_TRUE(eventually([&] { return server_->connections() == 0; }));
  {
    Client slowHead(port_), slowBody(port_), idle(port_);
    slowHead.send("GET /heal");
    slowBody.send("POST /filter HTTP/1.1\r\nContent-Length: 10\r\n\r\n12");
    idle.send(get("/nope") + post("/healthz", ""));
    EXPECT_EQ(idle.next().status, 404);
    EXPECT_EQ(idle.next().status, 405);
    EXPECT_EQ(slowHead.next().status, 408);
    EXPECT_EQ(slowBody.next().status, 408);
    EXPECT_EQ(idle.next().status, 408);
  }
  {
    Client quitter(port_);
    quitter.send("POST /filter HTTP/1.1\r\nContent-Length: 10\r\n\r\n12");
    std::this_thread::sleep_for(20ms);
  }
  ASSERT_TRUE(eventually([&] { return errors("client_disconnect") == 1; }));
  for (std::string_view kind :
       {"bad_request", "header_too_large", "body_too_large", "header_timeout", "body_timeout", "idle_timeout",
        "too_many_connections", "not_found", "method_not_allowed", "client_disconnect"})
    EXPECT_EQ(errors(kind), 1) << kind;
  EXPECT_EQ(errors("write_failed"), 0);
  EXPECT_EQ(errors("write_timeout"), 0);
}

// ---- the buffered-bytes budget (issue 26) ----

// A client that pipelines requests and never reads a byte of the answers: a small receive
// buffer, a non-blocking socket, and push() sends what the kernel takes.
class NeverReader {
 public:
  NeverReader(uint16_t port, std::string pipeline) : pipeline_(std::move(pipeline)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    int small = 4096;
    setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  }
  ~NeverReader() { ::close(fd_); }
  bool connected() const { return connected_; }
  void push() {
    while (sent_ < pipeline_.size()) {
      ssize_t n = ::send(fd_, pipeline_.data() + sent_, pipeline_.size() - sent_, MSG_DONTWAIT | MSG_NOSIGNAL);
      if (n <= 0) return;
      sent_ += static_cast<size_t>(n);
    }
  }
  size_t sent() const { return sent_; }

 private:
  int fd_ = -1;
  bool connected_ = false;
  std::string pipeline_;
  size_t sent_ = 0;
};

// Clients that pipeline 32 requests of 200 KB and never read hold little each: a connection
// frames no more requests once its bodies and unsent answers reach 1 MiB, and is not read while
// its unsent answers do. Meanwhile another client is answered, and once the clients leave
// nothing stays counted. (Before: every pipelined request was framed and answered, 6.4 MB of
// answers queued per client, with no count of it.)
TEST_F(ServerTest, ClientsThatNeverReadHoldBoundedMemoryAndOthersAreServed) {
  ServerConfig cfg;
  cfg.maxBufferedBytes = 64u << 20;
  cfg.writeTimeoutMs = 600'000;  // the clients stay stuck for the whole test
  start(cfg);
  const std::string body(200'000, 'x');
  std::string pipeline;
  for (int i = 0; i < 32; ++i) pipeline += post("/filter", body);
  constexpr int kStuck = 8;
  std::vector<std::unique_ptr<NeverReader>> stuck;
  for (int i = 0; i < kStuck; ++i) {
    stuck.push_back(std::make_unique<NeverReader>(port_, pipeline));
    ASSERT_TRUE(stuck.back()->connected());
  }
  // Each holds ~1 MiB of answers plus what one turn framed before it stopped: 9.7 MB for the 8
  // measured, 28.8 MB before (all 32 framed per turn, reading stopped past 8 MiB queued).
  const size_t bound = kStuck * (2u << 20);
  size_t peak = 0;
  Client good(port_);
  const auto until = std::chrono::steady_clock::now() + 3s;
  int answered = 0;
  while (std::chrono::steady_clock::now() < until) {
    for (auto& s : stuck) s->push();
    peak = std::max(peak, server_->bufferedBytes());
    good.send(post("/filter", "ok"));
    Response r = good.next();  // 3 s receive timeout: status 0 if not answered by then
    ASSERT_EQ(r.status, 200) << "answer " << answered;
    EXPECT_EQ(r.body, "filter:ok");
    ++answered;
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_GT(answered, 10);
  EXPECT_GT(peak, 0u);
  EXPECT_LE(peak, bound) << "peak";
  EXPECT_LE(metric("fleetsched_http_buffered_bytes"), static_cast<double>(bound));
  stuck.clear();  // they leave: their queued answers and bodies are released
  EXPECT_TRUE(eventually([&] { return server_->bufferedBytes() == 0; })) << server_->bufferedBytes();
  EXPECT_EQ(metric("fleetsched_http_buffered_bytes"), 0);
}

// Clients that never read against a small budget: the count never goes past the budget (by more
// than the headers of one turn's answers), bodies that do not fit get 503 with the limit's
// name, every other caller gets an answer, and after the clients leave the count is 0 again.
TEST_F(ServerTest, BufferedBytesStayWithinTheBudget) {
  ServerConfig cfg;
  cfg.maxBufferedBytes = 4u << 20;
  cfg.writeTimeoutMs = 600'000;
  start(cfg);
  // Answers of 500 KB: past what the kernel's socket buffers take for a client that never reads.
  const std::string body(500'000, 'x');
  std::string pipeline;
  for (int i = 0; i < 24; ++i) pipeline += post("/filter", body);
  std::vector<std::unique_ptr<NeverReader>> stuck;
  for (int i = 0; i < 8; ++i) stuck.push_back(std::make_unique<NeverReader>(port_, pipeline));
  size_t peak = 0;
  int ok = 0, busy = 0;
  const auto until = std::chrono::steady_clock::now() + 3s;
  while (std::chrono::steady_clock::now() < until) {
    for (auto& s : stuck) s->push();
    peak = std::max(peak, server_->bufferedBytes());
    Client other(port_);
    other.send(post("/filter", body));
    Response r = other.next();
    if (r.status == 200) {
      ++ok;
    } else {
      ASSERT_EQ(r.status, 503);
      EXPECT_NE(r.body.find("--max-buffered-bytes"), std::string::npos) << r.body;
      ++busy;
    }
    std::this_thread::sleep_for(5ms);
  }
  // Answers replace their bodies at write time: the count may pass the budget by their headers.
  EXPECT_LE(peak, cfg.maxBufferedBytes + 64 * 1024);
  // The clients that never read met the budget too (a refused one lingers, then is closed).
  EXPECT_GT(errors("over_budget"), 0) << ok << " answered 200, " << busy << " 503, peak " << peak;
  Client health(port_);  // requests without a body are always served
  health.send(get("/healthz"));
  EXPECT_EQ(health.next().status, 200);
  stuck.clear();
  EXPECT_TRUE(eventually([&] { return server_->bufferedBytes() == 0; })) << server_->bufferedBytes();
  Client after(port_);
  after.send(post("/filter", body));
  EXPECT_EQ(after.next().status, 200);
  EXPECT_TRUE(eventually([&] { return server_->bufferedBytes() == 0; }));
}

// A body is counted from the end of its headers (its Content-Length), before it arrives: a
// second body that would not fit beside it gets 503 at once; once the first is answered, room
// is back.
TEST_F(ServerTest, BodyBeyondTheBudgetGets503) {
  ServerConfig cfg;
  cfg.maxBufferedBytes = 1u << 20;
  cfg.maxBodyBytes = 4u << 20;
  start(cfg);
  Client alone(port_);
  alone.send("POST /filter HTTP/1.1\r\nContent-Length: 2000000\r\n\r\n");
  Response r = alone.next();
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(r.headers["connection"], "close");
  EXPECT_NE(r.body.find("--max-buffered-bytes"), std::string::npos) << r.body;
  EXPECT_TRUE(alone.closedByPeer());

  const std::string part(300'000, 'a');
  Client first(port_);
  first.send("POST /filter HTTP/1.1\r\nContent-Length: 600000\r\n\r\n" + part);
  ASSERT_TRUE(eventually([&] { return server_->bufferedBytes() == 600'000; })) << server_->bufferedBytes();
  Client second(port_);
  second.send(post("/filter", std::string(600'000, 'b')));
  EXPECT_EQ(second.next().status, 503);
  first.send(part);
  r = first.next();
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body.size(), std::string("filter:").size() + 600'000);
  Client third(port_);
  third.send(post("/filter", std::string(600'000, 'c')));
  EXPECT_EQ(third.next().status, 200);
  EXPECT_EQ(errors("over_budget"), 2);
  EXPECT_TRUE(eventually([&] { return server_->bufferedBytes() == 0; }));
}

// A client whose answers are not taken for writeTimeoutMs is closed and its memory released.
TEST_F(ServerTest, StalledWriterIsClosedAfterTheWriteTimeout) {
  ServerConfig cfg;
  cfg.writeTimeoutMs = 200;
  start(cfg);
  // 16 MB of answers: more than the kernel's socket buffers take (tcp_wmem's 4 MiB here).
  std::string pipeline;
  for (int i = 0; i < 32; ++i) pipeline += post("/filter", std::string(500'000, 'x'));
  NeverReader stuck(port_, pipeline);
  ASSERT_TRUE(stuck.connected());
  for (int i = 0; i < 100 && server_->bufferedBytes() == 0; ++i) {
    stuck.push();
    std::this_thread::sleep_for(10ms);
  }
  ASSERT_TRUE(eventually([&] {
    stuck.push();
    return errors("write_timeout") == 1;
  }));
  EXPECT_TRUE(eventually([&] { return server_->bufferedBytes() == 0 && server_->connections() == 0; }));
}

}  // namespace
}  // namespace fleetsched::engine
