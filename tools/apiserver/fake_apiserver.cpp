#include "tools/apiserver/fake_apiserver.h"

#include <simdjson.h>
#include <sys/socket.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <deque>
#include <unordered_map>
#include <unordered_set>

#include "tools/fleet/json_value.h"

namespace fleetsched::tools::apiserver {

using fleet::appendJsonString;

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

// The resourceVersion of the fixed items; live pod changes count up from it.
constexpr uint64_t kFirstResourceVersion = 1000;
constexpr uint64_t kExpiryTickMs = 10;

struct Query {
  bool watch = false;
  bool initialEvents = false;
  size_t limit = 0;
  size_t cont = 0;
  bool hasResourceVersion = false;
  uint64_t resourceVersion = 0;
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
    if (k == "resourceVersion" && !v.empty()) {
      q.hasResourceVersion = true;
      q.resourceVersion = num(v);
    }
  }
  return q;
}

// The value of the first `"key":"` in `object` (metadata's fields come before any nested
// object's of the same name in the objects this server is given): its [begin, end).
bool findString(std::string_view object, std::string_view key, size_t& begin, size_t& end) {
  std::string needle = "\"";
  needle.append(key).append("\":\"");
  size_t at = object.find(needle);
  if (at == std::string_view::npos) return false;
  begin = at + needle.size();
  end = object.find('"', begin);
  return end != std::string_view::npos;
}

void setResourceVersion(std::string& object, uint64_t rv) {
  size_t begin = 0, end = 0;
  if (findString(object, "resourceVersion", begin, end)) object.replace(begin, end - begin, std::to_string(rv));
}

std::string statusBody(int code, std::string_view reason, std::string_view message) {
  std::string out = R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":)";
  appendJsonString(out, message);
  out += R"(,"reason":")" + std::string(reason) + R"(","code":)" + std::to_string(code) + "}";
  return out;
}

// Content-Length of a request head (0 when absent), and whether it asks for 100 Continue.
size_t contentLength(std::string_view head, bool& expectContinue) {
  size_t length = 0;
  expectContinue = false;
  size_t pos = head.find("\r\n");
  while (pos != std::string_view::npos && pos + 2 < head.size()) {
    size_t next = head.find("\r\n", pos + 2);
    std::string_view line = head.substr(pos + 2, next == std::string_view::npos ? std::string_view::npos : next - pos - 2);
    size_t colon = line.find(':');
    if (colon != std::string_view::npos) {
      std::string name(line.substr(0, colon));
      for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      std::string_view value = line.substr(colon + 1);
      while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
      if (name == "content-length") std::from_chars(value.data(), value.data() + value.size(), length);
      if (name == "expect" && value.starts_with("100")) expectContinue = true;
    }
    pos = next;
  }
  return length;
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
  struct LivePod {
    std::string uid;
    std::string object;  // as last sent, with its resourceVersion
    bool bound = false;
  };
  // createPod / deletePod calls waiting for the server's thread.
  struct Op {
    bool create;
    std::string key;  // namespace/name
    std::string object;
  };

  FakeApiServer* owner;
  Collection& nodes;
  Collection& pods;
  uv_loop_t loop{};
  uv_tcp_t listener{};
  uv_async_t async{};
  uv_timer_t expiryTimer{};
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
  // Live pods (the server's thread only, but for `ops` and `stats`).
  std::mutex opsMutex;
  std::vector<Op> ops;
  std::unordered_map<std::string, LivePod> live;
  std::deque<std::pair<uint64_t, std::string>> events;  // resourceVersion, event line
  std::deque<std::pair<uint64_t, std::string>> expiries;  // uv_now deadline, namespace/name
  uint64_t resourceVersion = kFirstResourceVersion;
  simdjson::dom::parser bindingParser;
  mutable std::mutex statsMutex;
  LivePodStats stats;

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

  static std::string chunk(std::string_view data) {
    char size[24];
    std::snprintf(size, sizeof size, "%zx\r\n", data.size());
    return size + std::string(data) + "\r\n";
  }

  void sendStatus(Conn* c, int code, std::string_view reason, std::string_view statusReason, std::string_view message) {
    std::string body = statusBody(code, statusReason, message);
    send(c, header(code, reason, body.size()) + body, {}, {});
  }

  // The live pods as list items: "a,b,c".
  std::string liveItems() const {
    std::string out;
    for (const auto& [key, pod] : live) {
      if (!out.empty()) out.push_back(',');
      out += pod.object;
    }
    return out;
  }

  const std::string& initialStream(Collection& coll, bool isPods) {
    std::string& body = isPods ? initialPods : initialNodes;
    size_t& builtFor = isPods ? initialPodsFor : initialNodesFor;
    const bool withLive = isPods && !live.empty();
    if (builtFor == coll.served() && !withLive) return body;
    body.clear();
    auto added = [&body](std::string_view object) {
      body += R"({"type":"ADDED","object":)";
      body += object;
      body += "}\n";
    };
    for (size_t i = 0; i < coll.served(); ++i) added(coll.item(i));
    if (withLive) {
      for (const auto& [key, pod] : live) added(pod.object);
    }
    body += R"({"type":"BOOKMARK","object":{"kind":")";
    body += isPods ? "Pod" : "Node";
    body += R"(","apiVersion":"v1","metadata":{"resourceVersion":")";
    body += std::to_string(resourceVersion);
    body += R"(","annotations":{"k8s.io/initial-events-end":"true"}}}})";
    body += "\n";
    builtFor = withLive ? SIZE_MAX : coll.served();
    return body;
  }

  // A live pod changed: its event goes to the log and to every held pod watch.
  void publish(std::string_view type, const std::string& object) {
    // The stats first: a watcher that has read the event may ask for them at once.
    {
      std::lock_guard<std::mutex> lock(statsMutex);
      stats.resourceVersion = resourceVersion;
      stats.live = live.size();
    }
    std::string line = R"({"type":")" + std::string(type) + R"(","object":)" + object + "}\n";
    for (Conn* c : conns) {
      if (c->heldPods) send(c, chunk(line), {}, {});
    }
    events.emplace_back(resourceVersion, std::move(line));
    if (events.size() > kEventLogSize) events.pop_front();
  }

  void applyOps() {
    std::vector<Op> todo;
    {
      std::lock_guard<std::mutex> lock(opsMutex);
      todo.swap(ops);
    }
    for (Op& op : todo) {
      if (op.create) {
        LivePod pod;
        size_t begin = 0, end = 0;
        if (findString(op.object, "uid", begin, end)) pod.uid = op.object.substr(begin, end - begin);
        pod.object = std::move(op.object);
        setResourceVersion(pod.object, ++resourceVersion);
        auto [it, fresh] = live.insert_or_assign(op.key, std::move(pod));
        {
          std::lock_guard<std::mutex> lock(statsMutex);
          ++stats.created;
        }
        publish(fresh ? "ADDED" : "MODIFIED", it->second.object);
      } else {
        remove(op.key);
      }
    }
  }

  void remove(const std::string& key) {
    auto it = live.find(key);
    if (it == live.end()) return;
    LivePod pod = std::move(it->second);
    live.erase(it);
    setResourceVersion(pod.object, ++resourceVersion);
    {
      std::lock_guard<std::mutex> lock(statsMutex);
      ++stats.deleted;
      if (pod.bound) --stats.liveBound;
    }
    publish("DELETED", pod.object);
  }

  void expire() {
    const uint64_t now = uv_now(&loop);
    while (!expiries.empty() && expiries.front().first <= now) {
      std::string key = std::move(expiries.front().second);
      expiries.pop_front();
      remove(key);
    }
  }

  // POST /api/v1/namespaces/NS/pods/NAME/binding
  void bind(Conn* c, std::string_view ns, std::string_view name, std::string_view body) {
    applyOps();  // a pod created just before its Binding
    auto refuse = [&](int code, std::string_view reason, std::string_view statusReason, const std::string& message) {
      {
        std::lock_guard<std::mutex> lock(statsMutex);
        ++stats.bindingsRefused;
      }
      sendStatus(c, code, reason, statusReason, message);
    };
    simdjson::dom::element doc;
    std::string_view node, uid;
    simdjson::dom::object annotations;
    if (bindingParser.parse(body.data(), body.size()).get(doc) != simdjson::SUCCESS ||
        doc["target"]["name"].get(node) != simdjson::SUCCESS || node.empty()) {
      refuse(400, "Bad Request", "BadRequest", "Binding without a target node");
      return;
    }
    const std::string key = std::string(ns) + "/" + std::string(name);
    auto it = live.find(key);
    if (it == live.end()) {
      refuse(404, "Not Found", "NotFound", "pods \"" + std::string(name) + "\" not found");
      return;
    }
    LivePod& pod = it->second;
    if (doc["metadata"]["uid"].get(uid) == simdjson::SUCCESS && !uid.empty() && uid != pod.uid) {
      refuse(409, "Conflict", "Conflict",
             "Operation cannot be fulfilled on pods/binding \"" + std::string(name) +
                 "\": Precondition failed: UID in precondition: " + std::string(uid) + ", UID in object meta: " +
                 pod.uid);
      return;
    }
    if (pod.bound) {
      size_t begin = 0, end = 0;
      findString(pod.object, "nodeName", begin, end);
      refuse(409, "Conflict", "Conflict",
             "Operation cannot be fulfilled on pods/binding \"" + std::string(name) + "\": pod " + std::string(name) +
                 " is already assigned to node \"" + pod.object.substr(begin, end - begin) + "\"");
      return;
    }
    std::string merged;
    if (doc["metadata"]["annotations"].get(annotations) == simdjson::SUCCESS) {
      for (auto field : annotations) {
        std::string_view value;
        if (field.value.get(value) != simdjson::SUCCESS) continue;
        appendJsonString(merged, field.key);
        merged.push_back(':');
        appendJsonString(merged, value);
        merged.push_back(',');
      }
    }
    std::string& object = pod.object;
    if (!merged.empty()) {
      if (size_t at = object.find(R"("annotations":{)"); at != std::string::npos) {
        at += std::string_view(R"("annotations":{)").size();
        if (object[at] == '}') merged.pop_back();
        object.insert(at, merged);
      } else if (size_t meta = object.find(R"("metadata":{)"); meta != std::string::npos) {
        merged.pop_back();
        object.insert(meta + std::string_view(R"("metadata":{)").size(), R"("annotations":{)" + merged + "},");
      }
    }
    std::string nodeField = R"("nodeName":)";
    appendJsonString(nodeField, node);
    if (size_t spec = object.find(R"("spec":{)"); spec != std::string::npos) {
      spec += std::string_view(R"("spec":{)").size();
      object.insert(spec, nodeField + (object[spec] == '}' ? "" : ","));
    }
    pod.bound = true;
    setResourceVersion(object, ++resourceVersion);
    if (owner->podLifetime_.count() > 0) {
      expiries.emplace_back(uv_now(&loop) + static_cast<uint64_t>(owner->podLifetime_.count()), key);
    }
    {
      std::lock_guard<std::mutex> lock(statsMutex);
      ++stats.bound;
      ++stats.liveBound;
    }
    publish("MODIFIED", object);
    static constexpr std::string_view kCreated =
        R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","code":201})";
    send(c, header(201, "Created", kCreated.size()), kCreated, {});
  }

  // Writes. Only Bindings and Events are known; everything else is 405.
  void handlePost(Conn* c, std::string_view target, std::string_view body) {
    owner->requests_.fetch_add(1, std::memory_order_relaxed);
    constexpr std::string_view kNamespaces = "/api/v1/namespaces/";
    std::string_view path = target.substr(0, target.find('?'));
    if (path.starts_with(kNamespaces)) {
      std::string_view rest = path.substr(kNamespaces.size());
      size_t slash = rest.find('/');
      std::string_view ns = rest.substr(0, slash);
      rest = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash + 1);
      if (rest == "events") {
        static constexpr std::string_view kEmpty = "{}";
        send(c, header(201, "Created", kEmpty.size()), kEmpty, {});
        return;
      }
      if (rest.starts_with("pods/") && rest.ends_with("/binding")) {
        std::string_view name = rest.substr(5, rest.size() - 5 - std::string_view("/binding").size());
        bind(c, ns, name, body);
        return;
      }
    }
    sendStatus(c, 405, "Method Not Allowed", "MethodNotAllowed", "the fake API server takes only Bindings and Events");
  }

  // A pod watch from `from`: the live pod events after it, then held open.
  void watchLivePods(Conn* c, uint64_t from) {
    if (from < resourceVersion && (events.empty() || events.front().first > from + 1)) {
      std::string error = R"({"type":"ERROR","object":)" +
                          statusBody(410, "Expired", "too old resource version: " + std::to_string(from) + " (" +
                                                         std::to_string(resourceVersion) + ")") +
                          "}\n";
      send(c, chunkedHeader() + chunk(error) + "0\r\n\r\n", {}, {});
      return;
    }
    std::string replay;
    for (const auto& [rv, line] : events) {
      if (rv > from) replay += chunk(line);
    }
    send(c, chunkedHeader() + replay, {}, {});
    c->heldPods = true;
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
    if (isPods) applyOps();
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
      // Held open: headers now, no events (but the live pods' after the watch's
      // resourceVersion), ended when the mode changes or the client leaves.
      if (isPods) {
        watchLivePods(c, q.hasResourceVersion ? q.resourceVersion : resourceVersion);
      } else {
        send(c, chunkedHeader(), {}, {});
      }
      return;
    }
    size_t begin = q.cont < coll.served() ? q.cont : coll.served();
    size_t end = q.limit == 0 ? coll.served() : std::min(coll.served(), begin + q.limit);
    std::string prefix = R"({"kind":")" + coll.listKind() + R"(","apiVersion":"v1","metadata":{"resourceVersion":")" +
                         std::to_string(resourceVersion) + "\"";
    if (end < coll.served()) prefix += R"(,"continue":")" + std::to_string(end) + "\"";
    prefix += R"(},"items":[)";
    std::string_view items = coll.slice(begin, end);
    std::string tail;
    // The live pods end the last page.
    if (isPods && end == coll.served() && !live.empty()) tail = (items.empty() ? "" : ",") + liveItems();
    tail += "]}";
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
      bool expectContinue = false;
      const size_t length = contentLength(req, expectContinue);
      if (c->in.size() < end + 4 + length) {
        // Tell a client that waits for it to send the body (once: the head is read again).
        if (expectContinue && c->in.size() == end + 4) send(c, "HTTP/1.1 100 Continue\r\n\r\n", {}, {});
        return;
      }
      size_t sp1 = req.find(' ');
      size_t sp2 = req.find(' ', sp1 + 1);
      std::string method(req.substr(0, sp1));
      std::string target(req.substr(sp1 + 1, sp2 - sp1 - 1));
      std::string body = c->in.substr(end + 4, length);
      c->in.erase(0, end + 4 + length);
      if (method == "POST") {
        handlePost(c, target, body);
      } else {
        handle(c, target);
      }
      if (c->closing) return;
    }
  }

  void onAsync() {
    applyOps();
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
      uv_close(reinterpret_cast<uv_handle_t*>(&expiryTimer), nullptr);
    }
  }
};

FakeApiServer::FakeApiServer(Collection& nodes, Collection& pods) : impl_(std::make_unique<Impl>(this, nodes, pods)) {}

FakeApiServer::~FakeApiServer() { stop(); }

uint16_t FakeApiServer::start(std::function<void()> threadInit, uint16_t port) {
  Impl* d = impl_.get();
  uv_loop_init(&d->loop);
  uv_tcp_init(&d->loop, &d->listener);
  d->listener.data = d;
  sockaddr_in addr{};
  uv_ip4_addr("127.0.0.1", port, &addr);
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
  port = ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  d->async.data = d;
  uv_async_init(&d->loop, &d->async, [](uv_async_t* h) { static_cast<Impl*>(h->data)->onAsync(); });
  uv_timer_init(&d->loop, &d->expiryTimer);
  d->expiryTimer.data = d;
  if (podLifetime_.count() > 0) {
    uv_timer_start(&d->expiryTimer, [](uv_timer_t* t) { static_cast<Impl*>(t->data)->expire(); }, kExpiryTickMs,
                   kExpiryTickMs);
  }
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

void FakeApiServer::createPod(std::string namespace_, std::string name, std::string object) {
  {
    std::lock_guard<std::mutex> lock(impl_->opsMutex);
    impl_->ops.push_back({true, namespace_ + "/" + name, std::move(object)});
  }
  uv_async_send(&impl_->async);
}

void FakeApiServer::deletePod(std::string namespace_, std::string name) {
  {
    std::lock_guard<std::mutex> lock(impl_->opsMutex);
    impl_->ops.push_back({false, namespace_ + "/" + name, {}});
  }
  uv_async_send(&impl_->async);
}

LivePodStats FakeApiServer::livePodStats() const {
  std::lock_guard<std::mutex> lock(impl_->statsMutex);
  return impl_->stats;
}

void FakeApiServer::clearArrivals() {
  std::lock_guard<std::mutex> lock(impl_->arrivalsMutex);
  impl_->nodeArrivals.clear();
  impl_->podArrivals.clear();
}

std::string kubeconfig(uint16_t port) {
  return "apiVersion: v1\nkind: Config\nclusters:\n- name: fake\n  cluster:\n    server: http://127.0.0.1:" +
         std::to_string(port) +
         "\ncontexts:\n- name: fake\n  context:\n    cluster: fake\n    user: fake\ncurrent-context: fake\n"
         "users:\n- name: fake\n  user: {}\n";
}

}  // namespace fleetsched::tools::apiserver
