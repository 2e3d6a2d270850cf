#include "tools/apiserver/fake_apiserver.h"

#include <charconv>
#include <cstdio>
#include <cstring>
#include <unordered_set>

#include <sys/socket.h>

namespace fleetsched::tools::apiserver {

void Collection::add(std::string_view object) {
  if (!items_.empty()) items_.push_back(',');
  starts_.push_back(items_.size());
  items_.append(object);
  ends_.push_back(items_.size());
  served_ = ends_.size();
}

size_t Collection::addWatchStream(std::string events, size_t count) {
  watches_.push_back(std::move(events));
  watchCounts_.push_back(count);
  return watches_.size() - 1;
}

std::string_view Collection::slice(size_t begin, size_t end) const {
  if (begin >= end) return {};
  return std::string_view(items_).substr(starts_[begin], ends_[end - 1] - starts_[begin]);
}

namespace {

constexpr std::string_view kResourceVersion = "1000";

struct Query {
  bool watch = false;
  bool initialEvents = false;
  size_t limit = 0;
  size_t cont = 0;
};

Query parseQuery(std::string_view target) {
  Query q;
  size_t qm = target.find('?');
  if (qm == std::string_view::npos) return q;
  std::string_view rest = target.substr(qm + 1);
  while (!rest.empty()) {
    size_t amp = rest.find('&');
    std::string_view kv = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? std::string_view{} : rest.substr(amp + 1);
    size_t eq = kv.find('=');
    std::string_view k = kv.substr(0, eq);
    std::string_view v = eq == std::string_view::npos ? std::string_view{} : kv.substr(eq + 1);
    auto num = [](std::string_view s) {
      size_t n = 0;
      std::from_chars(s.data(), s.data() + s.size(), n);
      return n;
    };
    if (k == "watch") q.watch = v == "1" || v == "true";
    if (k == "sendInitialEvents") q.initialEvents = v == "true";
    if (k == "limit") q.limit = num(v);
    if (k == "continue") q.cont = num(v);
  }
  return q;
}

}  // namespace

struct FakeApiServer::Impl {
  struct Conn {
    uv_tcp_t tcp;
    Impl* impl;
    std::string in;
    bool heldPods = false;
    bool closing = false;
    int sendBuffer = 0;
  };
  struct Write {
    uv_write_t req;
    std::string head;
    std::string tail;
  };

  FakeApiServer* owner;
  Collection& nodes;
  Collection& pods;
  uv_loop_t loop{};
  uv_tcp_t listener{};
  uv_async_t async{};
  std::thread thread;
  std::atomic<bool> stopping{false};
  std::atomic<WatchMode> podMode{WatchMode::Hold};
  std::atomic<size_t> podStream{0};
  std::atomic<bool> releaseHeld{false};
  std::unordered_set<Conn*> conns;
  std::string initialNodes, initialPods;  // streaming-list bodies, built on first use
  size_t initialNodesFor = SIZE_MAX, initialPodsFor = SIZE_MAX;
  mutable std::mutex arrivalsMutex;
  std::vector<SteadyClock::time_point> nodeArrivals, podArrivals;

  Impl(FakeApiServer* o, Collection& n, Collection& p) : owner(o), nodes(n), pods(p) {}

  static void onAlloc(uv_handle_t*, size_t suggested, uv_buf_t* buf) {
    buf->base = new char[suggested];
    buf->len = suggested;
  }

  void closeConn(Conn* c) {
    if (c->closing) return;
    c->closing = true;
    conns.erase(c);
    uv_close(reinterpret_cast<uv_handle_t*>(&c->tcp), [](uv_handle_t* h) { delete static_cast<Conn*>(h->data); });
  }

  void send(Conn* c, std::string head, std::string_view body, std::string tail) {
    auto* w = new Write;
    w->head = std::move(head);
    w->tail = std::move(tail);
    uv_buf_t bufs[3];
    int n = 0;
    bufs[n++] = uv_buf_init(w->head.data(), static_cast<unsigned>(w->head.size()));
    if (!body.empty()) bufs[n++] = uv_buf_init(const_cast<char*>(body.data()), static_cast<unsigned>(body.size()));
    if (!w->tail.empty()) bufs[n++] = uv_buf_init(w->tail.data(), static_cast<unsigned>(w->tail.size()));
    w->req.data = w;
    int rc = uv_write(&w->req, reinterpret_cast<uv_stream_t*>(&c->tcp), bufs, n,
                      [](uv_write_t* r, int) { delete static_cast<Write*>(r->data); });
    if (rc != 0) {
      delete w;
      closeConn(c);
    }
  }

  static std::string header(int status, std::string_view reason, size_t length) {
    return "HTTP/1.1 " + std::to_string(status) + " " + std::string(reason) +
           "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(length) + "\r\n\r\n";
  }

  static std::string chunkedHeader() {
    return "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
  }

  const std::string& initialStream(Collection& coll, bool isPods) {
    std::string& body = isPods ? initialPods : initialNodes;
    size_t& builtFor = isPods ? initialPodsFor : initialNodesFor;
    if (builtFor == coll.served()) return body;
    body.clear();
    for (size_t i = 0; i < coll.served(); ++i) {
      body += R"({"type":"ADDED","object":)";
      body += coll.item(i);
      body += "}\n";
    }
    body += R"({"type":"BOOKMARK","object":{"kind":")";
    body += isPods ? "Pod" : "Node";
    body += R"(","apiVersion":"v1","metadata":{"resourceVersion":")";
    body += kResourceVersion;
    body += R"(","annotations":{"k8s.io/initial-events-end":"true"}}}})";
    body += "\n";
    builtFor = coll.served();
    return body;
  }

  void handle(Conn* c, std::string_view target) {
    owner->requests_.fetch_add(1, std::memory_order_relaxed);
    int want = owner->sendBuffer_.load();
    // Autotuning cannot be switched back on; its ceiling (tcp_wmem, 4 MB) is the kernel's
    // doubled 2 MB.
    if (want == 0 && c->sendBuffer != 0) want = 2 << 20;
    if (want != 0 && want != c->sendBuffer) {
      uv_os_fd_t fd;
      if (uv_fileno(reinterpret_cast<uv_handle_t*>(&c->tcp), &fd) == 0 &&
          setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &want, sizeof want) == 0) {
        c->sendBuffer = want;
      }
    }
    const bool isPods = target.starts_with("/api/v1/pods");
    const bool isNodes = target.starts_with("/api/v1/nodes");
    if (!isPods && !isNodes) {
      send(c, header(404, "Not Found", 0), {}, {});
      return;
    }
    Collection& coll = isPods ? pods : nodes;
    Query q = parseQuery(target);
    if (q.watch && q.initialEvents) {
      if (!owner->streamingList_.load()) {
        static constexpr std::string_view kBody =
            R"({"kind":"Status","apiVersion":"v1","status":"Failure","message":"sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled","reason":"Invalid","code":422})";
        send(c, header(422, "Unprocessable Entity", kBody.size()), kBody, {});
        return;
      }
      const std::string& body = initialStream(coll, isPods);
      send(c, header(200, "OK", body.size()), body, {});
      return;
    }
    if (q.watch) {
      {
        std::lock_guard<std::mutex> lock(arrivalsMutex);
        (isPods ? podArrivals : nodeArrivals).push_back(SteadyClock::now());
      }
      if (isPods && podMode.load() == WatchMode::Stream) {
        std::string_view stream = coll.watchStream(podStream.load());
        send(c, header(200, "OK", stream.size()), stream, {});
        return;
      }
      // Held open: headers now, no events, ended when the mode changes or the client leaves.
      send(c, chunkedHeader(), {}, {});
      if (isPods) c->heldPods = true;
      return;
    }
    size_t begin = q.cont < coll.served() ? q.cont : coll.served();
    size_t end = q.limit == 0 ? coll.served() : std::min(coll.served(), begin + q.limit);
    std::string prefix = R"({"kind":")" + coll.listKind() + R"(","apiVersion":"v1","metadata":{"resourceVersion":")" +
                         std::string(kResourceVersion) + "\"";
    if (end < coll.served()) prefix += R"(,"continue":")" + std::to_string(end) + "\"";
    prefix += R"(},"items":[)";
    std::string_view items = coll.slice(begin, end);
    std::string tail = "]}";
    std::string head = header(200, "OK", prefix.size() + items.size() + tail.size()) + prefix;
    send(c, std::move(head), items, std::move(tail));
  }

  void onRead(Conn* c, ssize_t n, const uv_buf_t* buf) {
    if (n < 0) {
      delete[] buf->base;
      closeConn(c);
      return;
    }
    c->in.append(buf->base, static_cast<size_t>(n));
    delete[] buf->base;
    for (;;) {
      size_t end = c->in.find("\r\n\r\n");
      if (end == std::string::npos) return;
      std::string_view req(c->in.data(), end);
      size_t sp1 = req.find(' ');
      size_t sp2 = req.find(' ', sp1 + 1);
      std::string target(req.substr(sp1 + 1, sp2 - sp1 - 1));
      c->in.erase(0, end + 4);  // GETs only: no request bodies
      handle(c, target);
      if (c->closing) return;
    }
  }

  void onAsync() {
    if (releaseHeld.exchange(false)) {
      for (Conn* c : conns) {
        if (!c->heldPods) continue;
        c->heldPods = false;
        send(c, "0\r\n\r\n", {}, {});
      }
    }
    if (stopping.load()) {
      std::vector<Conn*> all(conns.begin(), conns.end());
      for (Conn* c : all) closeConn(c);
      uv_close(reinterpret_cast<uv_handle_t*>(&listener), nullptr);
      uv_close(reinterpret_cast<uv_handle_t*>(&async), nullptr);
    }
  }
};

FakeApiServer::FakeApiServer(Collection& nodes, Collection& pods) : impl_(std::make_unique<Impl>(this, nodes, pods)) {}

FakeApiServer::~FakeApiServer() { stop(); }

uint16_t FakeApiServer::start(std::function<void()> threadInit) {
  Impl* d = impl_.get();
  uv_loop_init(&d->loop);
  uv_tcp_init(&d->loop, &d->listener);
  d->listener.data = d;
  sockaddr_in addr{};
  uv_ip4_addr("127.0.0.1", 0, &addr);
  if (uv_tcp_bind(&d->listener, reinterpret_cast<const sockaddr*>(&addr), 0) != 0) return 0;
  int rc = uv_listen(reinterpret_cast<uv_stream_t*>(&d->listener), 128, [](uv_stream_t* server, int status) {
    if (status < 0) return;
    auto* d = static_cast<Impl*>(server->data);
    auto* c = new Impl::Conn;
    c->impl = d;
    uv_tcp_init(&d->loop, &c->tcp);
    c->tcp.data = c;
    if (uv_accept(server, reinterpret_cast<uv_stream_t*>(&c->tcp)) != 0) {
      c->closing = true;
      uv_close(reinterpret_cast<uv_handle_t*>(&c->tcp), [](uv_handle_t* h) { delete static_cast<Impl::Conn*>(h->data); });
      return;
    }
    uv_tcp_nodelay(&c->tcp, 1);
    d->conns.insert(c);
    uv_read_start(reinterpret_cast<uv_stream_t*>(&c->tcp), &Impl::onAlloc,
                  [](uv_stream_t* s, ssize_t n, const uv_buf_t* buf) {
                    auto* c = static_cast<Impl::Conn*>(s->data);
                    c->impl->onRead(c, n, buf);
                  });
  });
  if (rc != 0) return 0;
  sockaddr_storage bound{};
  int len = sizeof bound;
  uv_tcp_getsockname(&d->listener, reinterpret_cast<sockaddr*>(&bound), &len);
  uint16_t port = ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  d->async.data = d;
  uv_async_init(&d->loop, &d->async, [](uv_async_t* h) { static_cast<Impl*>(h->data)->onAsync(); });
  d->thread = std::thread([d, threadInit = std::move(threadInit)] {
    if (threadInit) threadInit();
    uv_run(&d->loop, UV_RUN_DEFAULT);
  });
  return port;
}

void FakeApiServer::stop() {
  Impl* d = impl_.get();
  if (!d->thread.joinable()) return;
  d->stopping.store(true);
  uv_async_send(&d->async);
  d->thread.join();
  uv_loop_close(&d->loop);
}

void FakeApiServer::setPodWatchMode(WatchMode mode, size_t stream) {
  impl_->podStream.store(stream);
  impl_->podMode.store(mode);
  if (mode == WatchMode::Stream) {
    impl_->releaseHeld.store(true);
    uv_async_send(&impl_->async);
  }
}

std::vector<SteadyClock::time_point> FakeApiServer::watchArrivals(bool pods) const {
  std::lock_guard<std::mutex> lock(impl_->arrivalsMutex);
  return pods ? impl_->podArrivals : impl_->nodeArrivals;
}

void FakeApiServer::clearArrivals() {
  std::lock_guard<std::mutex> lock(impl_->arrivalsMutex);
  impl_->nodeArrivals.clear();
  impl_->podArrivals.clear();
}

}  // namespace fleetsched::tools::apiserver
