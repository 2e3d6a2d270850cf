#include "tools/loadgen/loadgen.h"

#include <llhttp.h>
#include <sched.h>
#include <simdjson.h>
#include <unistd.h>
#include <uv.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <deque>
#include <fstream>
#include <memory>
#include <sstream>
#include <unordered_map>

#include "tools/fleet/fleet_gen.h"
#include "tools/loadgen/kube_order.h"

namespace fleetsched::tools::loadgen {

namespace {

enum Verb : uint8_t { kFilter = 0, kPrioritize = 1 };
constexpr const char* kVerbNames[] = {"filter", "prioritize"};
constexpr size_t kMaxParts = 3;
constexpr uint64_t kDrainTimeoutMs = 10000;
constexpr uint64_t kReconnectDelayMs = 100;
constexpr int kSendBufferBytes = 4 << 20;

// The request corpus: bodies are spans over shared storage (head, pod, tail), so a full-mode
// corpus of many pods costs one copy of the node list, and writes go out with writev.
struct Corpus {
  std::deque<std::string> storage;
  struct Body {
    std::array<std::string_view, kMaxParts> parts;
    size_t count = 0;
    size_t size = 0;
  };
  std::vector<Body> bodies;
  std::array<std::vector<std::string>, 2> headers;  // per verb, per body
  // Full mode: each node's object by name, for prioritize bodies of the nodes filter kept.
  std::unordered_map<std::string_view, std::string_view> wireByName;

  std::string_view keep(std::string s) { return storage.emplace_back(std::move(s)); }
  void add(std::initializer_list<std::string_view> parts) {
    Body b;
    for (auto p : parts) {
      b.parts[b.count++] = p;
      b.size += p.size();
    }
    bodies.push_back(b);
  }
};

bool readFile(const std::string& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return true;
}

// corpus.json (written by gen-fleet) pins the generator options so the load generator rebuilds
// exactly the fleet the server loaded from nodes.json.
bool applyManifest(const std::string& dir, fleet::FleetOptions& fleetOptions, std::string& error) {
  std::string text;
  if (!readFile(dir + "/corpus.json", text)) {
    error = "cannot read " + dir + "/corpus.json (write the corpus with gen-fleet)";
    return false;
  }
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(text).get(doc) != simdjson::SUCCESS) {
    error = dir + "/corpus.json is not valid JSON";
    return false;
  }
  uint64_t u = 0;
  double d = 0;
  std::string_view s;
  if (doc["nodes"].get(u) == simdjson::SUCCESS) fleetOptions.nodes = u;
  if (doc["seed"].get(u) == simdjson::SUCCESS) fleetOptions.seed = u;
  if (doc["minNodeBytes"].get(u) == simdjson::SUCCESS) fleetOptions.minNodeBytes = u;
  if (doc["maxNodeBytes"].get(u) == simdjson::SUCCESS) fleetOptions.maxNodeBytes = u;
  if (doc["zones"].get(u) == simdjson::SUCCESS) fleetOptions.zones = static_cast<int>(u);
  if (doc["cpuOnlyFraction"].get(d) == simdjson::SUCCESS) fleetOptions.cpuOnlyFraction = d;
  if (doc["region"].get(s) == simdjson::SUCCESS) fleetOptions.region = std::string(s);
  return true;
}

// A request head as Go's net/http writes it for kube-scheduler's extender client.
std::string requestHead(const LoadgenOptions& o, int verb, size_t bodySize) {
  std::string prefix = o.urlPrefix;
  while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
  return "POST " + prefix + "/" + kVerbNames[verb] + " HTTP/1.1\r\nHost: " + o.target +
         "\r\nUser-Agent: Go-http-client/1.1\r\nContent-Length: " + std::to_string(bodySize) +
         "\r\nContent-Type: application/json\r\nAccept-Encoding: gzip\r\n\r\n";
}

bool buildCorpus(const LoadgenOptions& o, Corpus& corpus, std::string& error) {
  if (!o.requestsFile.empty()) {
    std::string text;
    if (!readFile(o.requestsFile, text)) {
      error = "cannot read " + o.requestsFile;
      return false;
    }
    std::string_view all = corpus.keep(std::move(text));
    size_t pos = 0;
    while (pos < all.size()) {
      size_t end = all.find('\n', pos);
      if (end == std::string_view::npos) end = all.size();
      if (end > pos) corpus.add({all.substr(pos, end - pos)});
      pos = end + 1;
    }
    if (corpus.bodies.empty()) {
      error = o.requestsFile + " holds no request bodies";
      return false;
    }
  } else {
    fleet::FleetOptions fo;
    fo.nodes = o.corpusNodes;
    fo.seed = o.seed;
    fo.minNodeBytes = o.minNodeBytes;
    fo.maxNodeBytes = o.maxNodeBytes;
    fo.cpuOnlyFraction = o.cpuOnlyFraction;
    if (!o.corpusDir.empty() && !applyManifest(o.corpusDir, fo, error)) return false;
    fleet::FleetGenerator fleetGen(fo);
    fleet::PodOptions po;
    po.pods = std::max<size_t>(o.corpusPods, 1);
    po.seed = fo.seed;
    fleet::PodGenerator pods(po);
    const bool names = o.mode == ArgsMode::kNodeNames;
    const size_t n = names ? fleetGen.size() : std::min(o.fullModeNodes, fleetGen.size());
    // Each node's part of the list: its name (NodeNames mode) or its whole object (full mode).
    std::vector<std::string> items;
    items.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      if (names) {
        items.push_back(fleetGen.summaries()[i].name);
      } else {
        items.push_back(fleetGen.nodeWire(i));
        corpus.wireByName.emplace(corpus.keep(fleetGen.summaries()[i].name), corpus.keep(items.back()));
      }
    }
    auto tailOf = [&](const std::vector<std::string>& list) {
      return corpus.keep(names ? fleet::nodeNamesArgsTail(list) : fleet::fullArgsTail(list));
    };
    const std::string_view head = names ? fleet::kNodeNamesArgsHead : fleet::kFullArgsHead;
    std::vector<std::string_view> tails;
    if (o.order == NodeOrder::kRepeated) {
      tails.push_back(tailOf(items));
    } else {
      std::vector<std::string_view> zoneOf;
      for (size_t i = 0; i < n; ++i) zoneOf.push_back(fleetGen.summaries()[i].zone);
      const std::vector<uint32_t> snapshotOrder = kubeZoneRoundRobin(zoneOf);
      const size_t toFind = kubeNodesToFind(n, o.percentageOfNodesToScore);
      // A different order per pod; full mode keeps 8 (each list is megabytes of Node objects,
      // and the server's memo of node bytes does not depend on their order).
      const size_t orders = names ? pods.size() : std::min<size_t>(pods.size(), 8);
      std::mt19937_64 rng(fo.seed);
      size_t start = 0;
      std::vector<std::string> list;
      for (size_t k = 0; k < orders; ++k) {
        list.clear();
        for (uint32_t pos : kubeFilterOrder(n, start, toFind, o.parallelism, rng)) list.push_back(items[snapshotOrder[pos]]);
        tails.push_back(tailOf(list));
        start = (start + toFind) % std::max<size_t>(n, 1);  // every node passes: processed = found
      }
    }
    for (size_t i = 0; i < pods.size(); ++i) corpus.add({head, corpus.keep(pods.podWire(i)), tails[i % tails.size()]});
  }
  for (int v = 0; v < 2; ++v) {
    corpus.headers[static_cast<size_t>(v)].reserve(corpus.bodies.size());
    for (const auto& b : corpus.bodies) corpus.headers[static_cast<size_t>(v)].push_back(requestHead(o, v, b.size));
  }
  return true;
}

class Runner;

struct Pending {
  uint64_t podIntended;  // latency origin of the pod
  uint64_t origin;       // latency origin of this request
  uint32_t body;
  Verb verb;
  bool measured;
};

struct Conn {
  uv_tcp_t tcp;
  uv_connect_t connectReq;
  llhttp_t parser;
  Runner* runner = nullptr;
  int index = 0;
  bool open = false;
  bool closing = false;
  int activePods = 0;
  std::deque<Pending> inflight;
  std::vector<char> readBuf;
  bool capturing = false;  // keeping the body of the reply being read (a filter reply)
  std::string reply;
};

// The prioritize request of one corpus pod.
struct PrioritizeBody {
  enum class State : uint8_t {
    kUnknown,       // no filter reply seen yet
    kReady,         // body: the pod and the nodes its filter reply kept
    kSkip,          // filter kept ≤ 1 node: kube-scheduler would not call prioritize
    kSameAsFilter,  // --prioritize-all-nodes, or a --requests-file body (not split into parts)
  };
  State state = State::kUnknown;
  Corpus::Body body;
  std::string head;
};

struct WriteReq {
  uv_write_t req;
  std::array<uv_buf_t, kMaxParts + 1> bufs;
};

class Runner {
 public:
  Runner(const LoadgenOptions& o, const Corpus& corpus, LoadgenResult& result)
      : o_(o), corpus_(corpus), result_(result) {}

  bool run(std::string& error);

  // Callbacks from libuv / llhttp.
  void onConnected(Conn* c, int status);
  void onRead(Conn* c, ssize_t nread, const uv_buf_t* buf);
  void onResponseBegin(Conn* c);
  void onResponse(Conn* c, int status);
  void onWriteDone(WriteReq* w, int status);
  void onClosed(Conn* c);

  bool running_ = true;

 private:
  void connect(Conn* c);
  void fail(Conn* c, const char* why);
  void startPod(Conn* c, uint64_t intended);
  void send(Conn* c, const Pending& p);
  bool buildPrioritize(uint32_t body, const std::string& reply);
  void dispatchOpenLoop();
  void maybeFinish();
  void progress();
  uint64_t now() const { return uv_hrtime(); }
  bool measuring(uint64_t t) const { return t >= measureStart_ && t < measureEnd_; }

  const LoadgenOptions& o_;
  const Corpus& corpus_;
  LoadgenResult& result_;
  uv_loop_t loop_{};
  sockaddr_storage addr_{};
  llhttp_settings_t settings_{};
  std::vector<std::unique_ptr<Conn>> conns_;
  std::vector<WriteReq*> freeWrites_;
  std::deque<uint64_t> backlog_;  // open loop: intended starts waiting for a connection
  uv_timer_t endTimer_{}, drainTimer_{}, progressTimer_{}, wakeTimer_{};
  uv_idle_t pacer_{};
  bool finished_ = false;
  bool everConnected_ = false;
  std::string fatal_;
  uint64_t measureStart_ = 0, measureEnd_ = 0, lastCompletion_ = 0;
  uint64_t nextIntended_ = 0, intervalNs_ = 0;
  uint64_t podSeq_ = 0, measuredIssued_ = 0;
  size_t nextConn_ = 0;
  uint64_t progressPods_ = 0, progressLast_ = 0;
  bool tty_ = false;
  std::vector<std::unique_ptr<WriteReq>> writeStore_;
  std::vector<PrioritizeBody> prioritize_;  // per corpus body
  std::unordered_map<std::string, std::string_view> prioritizeTails_;  // kept names, '\n'-joined -> tail
  std::deque<std::string> prioritizeStorage_;
  simdjson::dom::parser replyParser_;
};

bool Runner::run(std::string& error) {
  uv_loop_init(&loop_);
  // Resolve once, synchronously.
  const size_t colon = o_.target.rfind(':');
  if (colon == std::string::npos) {
    error = "target must be HOST:PORT: " + o_.target;
    return false;
  }
  std::string host = o_.target.substr(0, colon), port = o_.target.substr(colon + 1);
  if (host.size() > 1 && host.front() == '[') host = host.substr(1, host.size() - 2);
  uv_getaddrinfo_t gai;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  if (int rc = uv_getaddrinfo(&loop_, &gai, nullptr, host.c_str(), port.c_str(), &hints); rc != 0) {
    error = "cannot resolve " + o_.target + ": " + uv_strerror(rc);
    return false;
  }
  std::memcpy(&addr_, gai.addrinfo->ai_addr, gai.addrinfo->ai_addrlen);
  uv_freeaddrinfo(gai.addrinfo);

  prioritize_.resize(corpus_.bodies.size());
  for (size_t i = 0; i < corpus_.bodies.size(); ++i) {
    // Only generated bodies come in parts (head, pod, nodes) that a prioritize body can reuse.
    if (o_.prioritizeAllNodes || corpus_.bodies[i].count != 3) prioritize_[i].state = PrioritizeBody::State::kSameAsFilter;
  }

  llhttp_settings_init(&settings_);
  settings_.on_message_begin = [](llhttp_t* p) -> int {
    auto* c = static_cast<Conn*>(p->data);
    c->runner->onResponseBegin(c);
    return HPE_OK;
  };
  settings_.on_body = [](llhttp_t* p, const char* at, size_t n) -> int {
    auto* c = static_cast<Conn*>(p->data);
    if (c->capturing) c->reply.append(at, n);
    return HPE_OK;
  };
  settings_.on_message_complete = [](llhttp_t* p) -> int {
    auto* c = static_cast<Conn*>(p->data);
    c->runner->onResponse(c, p->status_code);
    return HPE_OK;
  };

  tty_ = !o_.quiet && isatty(STDOUT_FILENO);
  const uint64_t t0 = now();
  measureStart_ = t0 + static_cast<uint64_t>(o_.warmup * 1e9);
  measureEnd_ = measureStart_ + static_cast<uint64_t>(o_.duration * 1e9);
  nextIntended_ = t0;
  if (o_.rate > 0) intervalNs_ = static_cast<uint64_t>(1e9 / o_.rate);

  for (int i = 0; i < o_.connections; ++i) {
    auto c = std::make_unique<Conn>();
    c->runner = this;
    c->index = i;
    c->readBuf.resize(256 * 1024);
    conns_.push_back(std::move(c));
  }
  for (auto& c : conns_) connect(c.get());

  uv_timer_init(&loop_, &endTimer_);
  endTimer_.data = this;
  uv_timer_start(&endTimer_, [](uv_timer_t* t) {
    auto* self = static_cast<Runner*>(t->data);
    self->running_ = false;
    self->maybeFinish();
  }, static_cast<uint64_t>((o_.warmup + o_.duration) * 1000), 0);
  uv_timer_init(&loop_, &drainTimer_);
  drainTimer_.data = this;
  uv_timer_init(&loop_, &progressTimer_);
  progressTimer_.data = this;
  if (tty_) {
    progressLast_ = t0;
    uv_timer_start(&progressTimer_, [](uv_timer_t* t) { static_cast<Runner*>(t->data)->progress(); }, 1000, 1000);
  }
  uv_timer_init(&loop_, &wakeTimer_);
  wakeTimer_.data = this;
  uv_idle_init(&loop_, &pacer_);
  pacer_.data = this;
  if (o_.rate > 0) {
    // Spinning keeps send times within microseconds of the schedule; the load generator has
    // its own core (--cpu) in real measurements.
    uv_idle_start(&pacer_, [](uv_idle_t* h) { static_cast<Runner*>(h->data)->dispatchOpenLoop(); });
  }

  uv_run(&loop_, UV_RUN_DEFAULT);
  if (tty_) std::printf("\r\033[K");
  std::fflush(stdout);
  uv_loop_close(&loop_);
  result_.seconds = static_cast<double>((std::max(lastCompletion_, measureStart_) - measureStart_)) / 1e9;
  if (o_.maxPods == 0 && result_.seconds > 0) {
    result_.seconds = std::max(result_.seconds, o_.duration);
  }
  if (!fatal_.empty()) {
    error = fatal_;
    return false;
  }
  return true;
}

void Runner::connect(Conn* c) {
  uv_tcp_init(&loop_, &c->tcp);
  c->tcp.data = c;
  c->connectReq.data = c;
  c->open = false;
  c->closing = false;
  c->activePods = 0;
  llhttp_init(&c->parser, HTTP_RESPONSE, &settings_);
  c->parser.data = c;
  uv_tcp_nodelay(&c->tcp, 1);
  int rc = uv_tcp_connect(&c->connectReq, &c->tcp, reinterpret_cast<const sockaddr*>(&addr_),
                          [](uv_connect_t* req, int status) {
                            auto* conn = static_cast<Conn*>(req->data);
                            conn->runner->onConnected(conn, status);
                          });
  if (rc != 0) onConnected(c, rc);
}

void Runner::onConnected(Conn* c, int status) {
  if (status != 0) {
    if (!everConnected_) {
      fatal_ = "cannot connect to " + o_.target + ": " + uv_strerror(status);
      running_ = false;
    }
    fail(c, uv_strerror(status));
    return;
  }
  everConnected_ = true;
  c->open = true;
  // A whole request body fits the socket's send buffer, so one writev hands it to the kernel
  // instead of trickling it out in 16 KB steps, each a wakeup of the load generator.
  int sendBuffer = kSendBufferBytes;
  uv_send_buffer_size(reinterpret_cast<uv_handle_t*>(&c->tcp), &sendBuffer);
  uv_read_start(reinterpret_cast<uv_stream_t*>(&c->tcp),
                [](uv_handle_t* h, size_t, uv_buf_t* buf) {
                  auto* conn = static_cast<Conn*>(h->data);
                  *buf = uv_buf_init(conn->readBuf.data(), static_cast<unsigned>(conn->readBuf.size()));
                },
                [](uv_stream_t* s, ssize_t nread, const uv_buf_t* buf) {
                  auto* conn = static_cast<Conn*>(s->data);
                  conn->runner->onRead(conn, nread, buf);
                });
  if (o_.rate > 0) {
    dispatchOpenLoop();
  } else {
    for (int i = 0; i < o_.depth && running_; ++i) startPod(c, now());
  }
}

void Runner::startPod(Conn* c, uint64_t intended) {
  if (o_.maxPods && measuredIssued_ >= o_.maxPods) {
    running_ = false;
    return;
  }
  Pending p;
  p.podIntended = intended;
  p.origin = intended;
  p.body = static_cast<uint32_t>(podSeq_++ % corpus_.bodies.size());
  p.verb = kFilter;
  p.measured = measuring(intended);
  if (p.measured) ++measuredIssued_;
  ++c->activePods;
  send(c, p);
}

void Runner::send(Conn* c, const Pending& p) {
  WriteReq* w;
  if (freeWrites_.empty()) {
    writeStore_.push_back(std::make_unique<WriteReq>());
    w = writeStore_.back().get();
  } else {
    w = freeWrites_.back();
    freeWrites_.pop_back();
  }
  const PrioritizeBody& pb = prioritize_[p.body];
  const bool own = p.verb == kPrioritize && pb.state == PrioritizeBody::State::kReady;
  const Corpus::Body& body = own ? pb.body : corpus_.bodies[p.body];
  const std::string& head = own ? pb.head : corpus_.headers[p.verb][p.body];
  w->bufs[0] = uv_buf_init(const_cast<char*>(head.data()), static_cast<unsigned>(head.size()));
  for (size_t i = 0; i < body.count; ++i) {
    w->bufs[i + 1] = uv_buf_init(const_cast<char*>(body.parts[i].data()), static_cast<unsigned>(body.parts[i].size()));
  }
  w->req.data = c;
  c->inflight.push_back(p);
  result_.bytesSent += head.size() + body.size;
  int rc = uv_write(&w->req, reinterpret_cast<uv_stream_t*>(&c->tcp), w->bufs.data(),
                    static_cast<unsigned>(body.count + 1), [](uv_write_t* req, int status) {
                      auto* conn = static_cast<Conn*>(req->data);
                      conn->runner->onWriteDone(reinterpret_cast<WriteReq*>(req), status);
                    });
  if (rc != 0) {
    freeWrites_.push_back(w);
    fail(c, uv_strerror(rc));
  }
}

void Runner::onWriteDone(WriteReq* w, int status) {
  auto* c = static_cast<Conn*>(w->req.data);
  freeWrites_.push_back(w);
  if (status != 0 && status != UV_ECANCELED) fail(c, uv_strerror(status));
}

void Runner::onRead(Conn* c, ssize_t nread, const uv_buf_t* buf) {
  if (nread < 0) {
    fail(c, nread == UV_EOF ? "server closed the connection" : uv_strerror(static_cast<int>(nread)));
    return;
  }
  result_.bytesReceived += static_cast<uint64_t>(nread);
  llhttp_errno_t err = llhttp_execute(&c->parser, buf->base, static_cast<size_t>(nread));
  if (err != HPE_OK) fail(c, llhttp_errno_name(err));
}

void Runner::onResponseBegin(Conn* c) {
  c->capturing = !o_.filterOnly && !c->inflight.empty() && c->inflight.front().verb == kFilter &&
                 prioritize_[c->inflight.front().body].state == PrioritizeBody::State::kUnknown;
  c->reply.clear();
}

bool Runner::buildPrioritize(uint32_t b, const std::string& reply) {
  simdjson::dom::element doc;
  if (replyParser_.parse(reply).get(doc) != simdjson::SUCCESS || !doc.is_object()) return false;
  std::vector<std::string> kept;
  simdjson::dom::element list;
  if (o_.mode == ArgsMode::kNodeNames) {
    if (doc["NodeNames"].get(list) == simdjson::SUCCESS && !list.is_null()) {
      simdjson::dom::array names;
      if (list.get(names) != simdjson::SUCCESS) return false;
      for (simdjson::dom::element n : names) {
        std::string_view name;
        if (n.get(name) != simdjson::SUCCESS) return false;
        kept.emplace_back(name);
      }
    }
  } else if (doc["Nodes"].get(list) == simdjson::SUCCESS && !list.is_null()) {
    simdjson::dom::array items;
    if (list["items"].get(items) != simdjson::SUCCESS) return false;
    for (simdjson::dom::element item : items) {
      std::string_view name;
      if (item["metadata"]["name"].get(name) != simdjson::SUCCESS) return false;
      kept.emplace_back(name);
    }
  }
  PrioritizeBody& pb = prioritize_[b];
  if (kept.size() <= 1) {
    pb.state = PrioritizeBody::State::kSkip;
    return true;
  }
  // Pods of one shape keep the same nodes: their bodies share one copy of the node part.
  std::string key;
  for (const std::string& n : kept) key.append(n).push_back('\n');
  auto it = prioritizeTails_.find(key);
  if (it == prioritizeTails_.end()) {
    std::string tail;
    if (o_.mode == ArgsMode::kNodeNames) {
      tail = fleet::nodeNamesArgsTail(kept);
    } else {
      std::vector<std::string> wires;
      for (const std::string& n : kept) {
        auto w = corpus_.wireByName.find(n);
        if (w == corpus_.wireByName.end()) return false;  // a node the request did not carry
        wires.emplace_back(w->second);
      }
      tail = fleet::fullArgsTail(wires);
    }
    it = prioritizeTails_.emplace(std::move(key), prioritizeStorage_.emplace_back(std::move(tail))).first;
  }
  const Corpus::Body& filterBody = corpus_.bodies[b];
  pb.body = Corpus::Body{};
  for (std::string_view part : {filterBody.parts[0], filterBody.parts[1], it->second}) {
    pb.body.parts[pb.body.count++] = part;
    pb.body.size += part.size();
  }
  pb.head = requestHead(o_, kPrioritize, pb.body.size);
  pb.state = PrioritizeBody::State::kReady;
  return true;
}

void Runner::onResponse(Conn* c, int status) {
  if (c->inflight.empty()) {
    fail(c, "reply without a request");
    return;
  }
  const uint64_t t = now();
  Pending p = c->inflight.front();
  c->inflight.pop_front();
  ++result_.requests;
  VerbResult& vr = p.verb == kFilter ? result_.filter : result_.prioritize;
  const bool ok = status == 200;
  if (!ok) {
    ++vr.errors;
    if (p.measured) ++result_.pod.errors;
  } else if (p.measured) {
    vr.latency.record(t - p.origin);
  }
  bool prioritized = p.verb == kPrioritize || o_.filterOnly;
  if (ok && p.verb == kFilter && !o_.filterOnly) {
    PrioritizeBody& pb = prioritize_[p.body];
    if (pb.state == PrioritizeBody::State::kUnknown && c->capturing && !buildPrioritize(p.body, c->reply)) {
      // Not an ExtenderFilterResult kube-scheduler could use: the pod fails here.
      ++result_.filter.errors;
      if (p.measured) ++result_.pod.errors;  // the next filter reply of this pod tries again
    } else if (pb.state != PrioritizeBody::State::kSkip) {
      // kube-scheduler calls prioritize once filter has answered; its latency starts now.
      c->capturing = false;
      p.verb = kPrioritize;
      p.origin = t;
      send(c, p);
      return;
    }
  }
  c->capturing = false;
  --c->activePods;
  ++progressPods_;
  if (ok && p.measured && prioritized) {
    result_.pod.latency.record(t - p.podIntended);
    ++result_.pods;
    lastCompletion_ = t;
  } else if (ok && p.measured && prioritize_[p.body].state == PrioritizeBody::State::kSkip) {
    ++result_.podsWithoutPrioritize;
    lastCompletion_ = t;
  }
  if (running_ && o_.rate <= 0) {
    startPod(c, t);
  } else if (running_) {
    dispatchOpenLoop();
  }
  maybeFinish();
}

void Runner::dispatchOpenLoop() {
  if (!running_) {
    uv_idle_stop(&pacer_);
    return;
  }
  const uint64_t t = now();
  while (nextIntended_ <= t && t < measureEnd_) {
    backlog_.push_back(nextIntended_);
    nextIntended_ += intervalNs_;
  }
  const size_t n = conns_.size();
  while (!backlog_.empty()) {
    Conn* chosen = nullptr;
    for (size_t k = 0; k < n; ++k) {
      Conn* c = conns_[(nextConn_ + k) % n].get();
      if (c->open && c->activePods < o_.depth) {
        chosen = c;
        nextConn_ = (nextConn_ + k + 1) % n;
        break;
      }
    }
    if (!chosen) break;
    uint64_t intended = backlog_.front();
    backlog_.pop_front();
    startPod(chosen, intended);
    if (!running_) break;
  }
  // Spin only when the next start is near: at low rates sleep on a timer (millisecond
  // resolution) until about a millisecond before it.
  const uint64_t gap = nextIntended_ > t ? nextIntended_ - t : 0;
  if (backlog_.empty() && gap > 3'000'000 && running_) {
    uv_idle_stop(&pacer_);
    uv_timer_start(&wakeTimer_, [](uv_timer_t* h) {
      auto* self = static_cast<Runner*>(h->data);
      if (self->running_) uv_idle_start(&self->pacer_, [](uv_idle_t* i) { static_cast<Runner*>(i->data)->dispatchOpenLoop(); });
    }, gap / 1'000'000 - 2, 0);
  }
}

void Runner::fail(Conn* c, const char* why) {
  if (c->closing) return;
  c->closing = true;
  c->open = false;
  for (const auto& p : c->inflight) {
    ++(p.verb == kFilter ? result_.filter : result_.prioritize).errors;
    if (p.measured) ++result_.pod.errors;
  }
  if (!c->inflight.empty() || running_) {
    std::fprintf(stderr, "loadgen: connection %d: %s\n", c->index, why);
  }
  c->inflight.clear();
  c->activePods = 0;
  uv_close(reinterpret_cast<uv_handle_t*>(&c->tcp), [](uv_handle_t* h) {
    auto* conn = static_cast<Conn*>(h->data);
    conn->runner->onClosed(conn);
  });
}

void Runner::onClosed(Conn* c) {
  if (running_ && fatal_.empty()) {
    ++result_.reconnects;
    auto* timer = new uv_timer_t;
    uv_timer_init(&loop_, timer);
    timer->data = c;
    uv_timer_start(timer, [](uv_timer_t* t) {
      auto* conn = static_cast<Conn*>(t->data);
      if (conn->runner->running_) {
        conn->runner->connect(conn);
      } else {
        conn->runner->maybeFinish();
      }
      uv_close(reinterpret_cast<uv_handle_t*>(t), [](uv_handle_t* h) { delete reinterpret_cast<uv_timer_t*>(h); });
    }, kReconnectDelayMs, 0);
    return;
  }
  maybeFinish();
}

void Runner::maybeFinish() {
  if (running_ || finished_) return;
  bool idle = true;
  for (auto& c : conns_) idle = idle && c->inflight.empty();
  if (!idle && !uv_is_active(reinterpret_cast<uv_handle_t*>(&drainTimer_))) {
    uv_timer_start(&drainTimer_, [](uv_timer_t* t) {
      auto* self = static_cast<Runner*>(t->data);
      std::fprintf(stderr, "loadgen: replies still missing after %llu ms; closing\n",
                   static_cast<unsigned long long>(kDrainTimeoutMs));
      for (auto& c : self->conns_) self->fail(c.get(), "drain timeout");
      self->maybeFinish();
    }, kDrainTimeoutMs, 0);
  }
  if (!idle) return;
  finished_ = true;
  for (auto& c : conns_) {
    if (!c->closing) {
      c->closing = true;
      c->open = false;
      uv_close(reinterpret_cast<uv_handle_t*>(&c->tcp), nullptr);
    }
  }
  uv_close(reinterpret_cast<uv_handle_t*>(&endTimer_), nullptr);
  uv_close(reinterpret_cast<uv_handle_t*>(&drainTimer_), nullptr);
  uv_close(reinterpret_cast<uv_handle_t*>(&progressTimer_), nullptr);
  uv_close(reinterpret_cast<uv_handle_t*>(&pacer_), nullptr);
  uv_close(reinterpret_cast<uv_handle_t*>(&wakeTimer_), nullptr);
}

void Runner::progress() {
  const uint64_t t = now();
  const double secs = static_cast<double>(t - progressLast_) / 1e9;
  const double rate = secs > 0 ? static_cast<double>(progressPods_) / secs : 0;
  progressPods_ = 0;
  progressLast_ = t;
  const bool warm = t < measureStart_;
  std::printf("\r\033[K%s %5.1fs  pods/s %8.0f  filter p99 %7.0f µs  errors %llu",
              warm ? "warmup" : "run   ",
              static_cast<double>(t - (warm ? measureStart_ - static_cast<uint64_t>(o_.warmup * 1e9) : measureStart_)) / 1e9,
              rate, static_cast<double>(result_.filter.latency.percentile(99)) / 1e3,
              static_cast<unsigned long long>(result_.filter.errors + result_.prioritize.errors));
  std::fflush(stdout);
}

}  // namespace

bool runLoad(const LoadgenOptions& o, LoadgenResult& result) {
  if (o.connections < 1 || o.depth < 1 || o.duration <= 0 || o.warmup < 0) {
    std::fprintf(stderr, "loadgen: connections, depth and duration must be positive\n");
    return false;
  }
  if (o.cpu >= 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(o.cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) {
      std::fprintf(stderr, "loadgen: cannot pin to CPU %d: %s\n", o.cpu, std::strerror(errno));
      return false;
    }
  }
  Corpus corpus;
  std::string error;
  if (!buildCorpus(o, corpus, error)) {
    std::fprintf(stderr, "loadgen: %s\n", error.c_str());
    return false;
  }
  Runner runner(o, corpus, result);
  if (!runner.run(error)) {
    std::fprintf(stderr, "loadgen: %s\n", error.c_str());
    return false;
  }
  return true;
}

int runLoadgen(const LoadgenOptions& o) {
  LoadgenResult result;
  if (!runLoad(o, result)) return 1;
  if (!o.quiet) std::fputs(formatTable(o, result).c_str(), stdout);
  auto write = [](const std::string& path, const std::string& text) {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    bool ok = f && std::fwrite(text.data(), 1, text.size(), f) == text.size();
    if (f) ok = std::fclose(f) == 0 && ok;
    if (!ok) std::fprintf(stderr, "loadgen: cannot write %s\n", path.c_str());
    return ok;
  };
  if (!o.jsonOut.empty() && !write(o.jsonOut, formatJson(o, result))) return 1;
  if (!o.svgOut.empty() && !write(o.svgOut, formatSvg(o, result))) return 1;
  const uint64_t errors = result.filter.errors + result.prioritize.errors;
  return errors ? 3 : 0;
}

}  // namespace fleetsched::tools::loadgen
