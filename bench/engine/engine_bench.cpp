// Framing + routing throughput over an in-memory byte stream of pipelined requests, metrics
// hot-path costs, and one loopback round-trip benchmark of the whole reactor.
//   ninja -C build bench/engine/engine_bench && build/bench/engine/engine_bench
#include <arpa/inet.h>
#include <benchmark/benchmark.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "engine/reactor/metrics.h"
#include "engine/reactor/request_parser.h"
#include "engine/reactor/router.h"
#include "engine/reactor/server.h"

namespace fleetsched::engine {
namespace {

// A filter request the way kube-scheduler sends it with nodeCacheCapable: a pod object and
// `nodes` node names; bodyBytes is padded to size with a pod annotation.
std::string filterRequest(size_t bodyBytes) {
  std::string body =
      R"({"Pod":{"metadata":{"name":"train-0","namespace":"ml","uid":"6f1c","annotations":{"x":")";
  std::string tail =
      R"("}},"spec":{"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":"1"}}}]}},)"
      R"("Nodes":null,"NodeNames":["gpu-0001","gpu-0002","gpu-0003"]})";
  if (bodyBytes > body.size() + tail.size()) body.append(bodyBytes - body.size() - tail.size(), 'a');
  body += tail;
  return "POST /api/scheduler/filter HTTP/1.1\r\nHost: fleetsched:8888\r\nUser-Agent: Go-http-client/1.1\r\n"
         "Content-Length: " +
         std::to_string(body.size()) + "\r\nContent-Type: application/json\r\nAccept-Encoding: gzip\r\n\r\n" +
         body;
}

// Frames a stream in fixed-size reads; returns the number of verb requests routed.
size_t frameStream(RequestParser& p, const Router& router, const std::string& stream, size_t readBytes) {
  size_t routed = 0;
  for (size_t off = 0; off < stream.size();) {
    size_t len = std::min(readBytes, stream.size() - off);
    const char* data = stream.data() + off;
    off += len;
    while (len > 0) {
      auto r = p.feed(data, len);
      data += r.consumed;
      len -= r.consumed;
      if (r.status == RequestParser::Status::kComplete) {
        routed += router.match(p.method(), p.target()).kind == Router::Kind::kVerb;
      } else if (r.status == RequestParser::Status::kError) {
        std::fprintf(stderr, "framing error: %s\n", p.errorReason());
        std::abort();
      }
    }
  }
  return routed;
}

void BM_FramePipelined(benchmark::State& state) {
  const auto bodyBytes = static_cast<size_t>(state.range(0));
  constexpr size_t kRequests = 256;
  constexpr size_t kReadBytes = 256 * 1024;  // the reactor's read buffer
  std::string one = filterRequest(bodyBytes), stream;
  for (size_t i = 0; i < kRequests; ++i) stream += one;
  RequestParser parser;
  Router router("/api/scheduler");
  if (frameStream(parser, router, stream, kReadBytes) != kRequests) {
    state.SkipWithError("framing lost requests");
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(frameStream(parser, router, stream, kReadBytes));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * kRequests));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * stream.size()));
}
BENCHMARK(BM_FramePipelined)->Arg(256)->Arg(4096)->Arg(65536)->Arg(1 << 20);

// Worst case for the framing: every byte in its own read.
void BM_FrameByteByByte(benchmark::State& state) {
  std::string stream = filterRequest(1024);
  RequestParser parser;
  Router router("/api/scheduler");
  if (frameStream(parser, router, stream, 1) != 1) {
    state.SkipWithError("framing lost requests");
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(frameStream(parser, router, stream, 1));
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * stream.size()));
}
BENCHMARK(BM_FrameByteByByte);

void BM_Route(benchmark::State& state) {
  Router router("/api/scheduler");
  router.addGet("/debug/");
  const std::string_view targets[] = {"/api/scheduler/filter", "/api/scheduler/prioritize", "/healthz",
                                      "/debug/pods/x", "/nope"};
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(router.match(HTTP_POST, targets[i++ % 5]));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Route);

void BM_HistogramObserve(benchmark::State& state) {
  Metrics m;
  Histogram& h = m.histogram("bench_seconds", "bench");
  uint64_t v = 12345;
  for (auto _ : state) {
    h.observeNanos(v);
    v = v * 6364136223846793005ull + 1442695040888963407ull;  // spread over all buckets
    v >>= 30;
  }
  if (h.count() != static_cast<uint64_t>(state.iterations())) state.SkipWithError("lost observations");
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_HistogramObserve);

void BM_CounterInc(benchmark::State& state) {
  Metrics m;
  Counter& c = m.counter("bench_total", "bench");
  for (auto _ : state) c.inc();
  if (c.value() != static_cast<uint64_t>(state.iterations())) state.SkipWithError("lost increments");
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_CounterInc);

// Cost of re-arming one connection's uv_timer_t among n armed ones (libuv keeps a binary heap):
// the price a request pays when its header deadline is earlier than the armed one.
void BM_TimerRearm(benchmark::State& state) {
  const auto n = static_cast<size_t>(state.range(0));
  uv_loop_t loop;
  uv_loop_init(&loop);
  std::vector<uv_timer_t> timers(n);
  auto noop = [](uv_timer_t*) {};
  for (size_t i = 0; i < n; ++i) {
    uv_timer_init(&loop, &timers[i]);
    uv_timer_start(&timers[i], noop, 60'000 + i % 1000, 0);
  }
  size_t i = 0;
  for (auto _ : state) {
    uv_timer_start(&timers[i], noop, 10'000 + (i & 1023), 0);
    if (++i == n) i = 0;
  }
  for (auto& t : timers) uv_close(reinterpret_cast<uv_handle_t*>(&t), nullptr);
  uv_run(&loop, UV_RUN_DEFAULT);
  uv_loop_close(&loop);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_TimerRearm)->Arg(100)->Arg(4096)->Arg(65536);

// --- loopback: client thread pipelines `depth` small filter requests, the reactor echoes ---

class EchoHandler : public BatchHandler {
 public:
  void handleBatch(std::span<ExtenderRequest*> batch) override {
    for (ExtenderRequest* r : batch)
      r->response.assign(R"({"NodeNames":["gpu-0001"],"FailedNodes":{},"Error":""})");
  }
};

void BM_LoopbackRoundTrip(benchmark::State& state) {
  const auto depth = static_cast<size_t>(state.range(0));
  uv_loop_t loop;
  uv_loop_init(&loop);
  EchoHandler handler;
  Metrics metrics;
  ServerConfig cfg;
  cfg.port = 0;
  cfg.urlPrefix = "/api/scheduler";
  auto server = std::make_unique<Server>(&loop, cfg, handler, metrics);
  if (server->listen() != 0) {
    state.SkipWithError("listen failed");
    return;
  }
  uv_async_t stop;
  uv_async_init(&loop, &stop, [](uv_async_t* a) {
    static_cast<Server*>(a->data)->close();
    uv_close(reinterpret_cast<uv_handle_t*>(a), nullptr);
  });
  stop.data = server.get();
  std::thread reactor([&] { uv_run(&loop, UV_RUN_DEFAULT); });

  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(server->port());
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
    state.SkipWithError("connect failed");
  std::string burst;
  for (size_t i = 0; i < depth; ++i) burst += filterRequest(2048);
  std::string in;
  char buf[65536];
  const std::string_view marker = "\r\n\r\n{\"NodeNames\"";
  for (auto _ : state) {
    if (::send(fd, burst.data(), burst.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(burst.size())) break;
    size_t seen = 0, scan = 0;
    in.clear();
    while (seen < depth) {
      ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) {
        state.SkipWithError("connection lost");
        break;
      }
      in.append(buf, static_cast<size_t>(n));
      for (size_t at; (at = in.find(marker, scan)) != std::string::npos; scan = at + marker.size()) ++seen;
    }
  }
  ::close(fd);
  uv_async_send(&stop);
  reactor.join();
  server.reset();
  uv_loop_close(&loop);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * depth));
}
BENCHMARK(BM_LoopbackRoundTrip)->Arg(1)->Arg(8)->Arg(32)->UseRealTime();

}  // namespace
}  // namespace fleetsched::engine

BENCHMARK_MAIN();
