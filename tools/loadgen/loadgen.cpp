#include "tools/loadgen/loadgen.h"

#include <llhttp.h>
#include <sched.h>
#include <simdjson.h>
#include <unistd.h>
#include <uv.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <memory>
#include <optional>
#include <unordered_map>

#include "tools/apiserver/fake_apiserver.h"
#include "tools/fleet/fleet_gen.h"
#include "tools/loadgen/churn.h"
#include "tools/loadgen/corpus.h"

namespace fleetsched::tools::loadgen {

namespace {

constexpr uint64_t kDrainTimeoutMs = 10000;
constexpr uint64_t kReconnectDelayMs = 100;
constexpr int kSendBufferBytes = 4 << 20;
constexpr uint64_t kChurnErrorsShown = 10;  // churn errors printed; the rest only counted

class Runner;

struct Pending {
  uint64_t podIntended;  // latency origin of the pod
  uint64_t origin;       // latency origin of this request
  uint32_t body;
  Verb verb;
  bool measured;
  uint32_t slot = 0;  // churn: the pod's slot
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
  Runner(const LoadgenOptions& o, const Corpus& corpus, LoadgenResult& result, Churn* churn)
      : o_(o), corpus_(corpus), result_(result), churn_(churn) {}

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
  void onChurnReply(Conn* c, Pending p, bool ok, uint64_t t);
  void podDone(Conn* c, uint64_t t);
  VerbResult& verbResult(Verb v) { return v == kFilter ? result_.filter : v == kPrioritize ? result_.prioritize : result_.bind; }
  void dispatchOpenLoop();
  void maybeFinish();
  void progress();
  uint64_t now() const { return uv_hrtime(); }
  bool measuring(uint64_t t) const { return t >= measureStart_ && t < measureEnd_; }

  const LoadgenOptions& o_;
  const Corpus& corpus_;
  LoadgenResult& result_;
  Churn* churn_;  // null in the static mode
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
  uint64_t churnErrorsShown_ = 0;
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
  if (churn_) p.slot = churn_->start(corpus_.templates[p.body]);
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
  RequestParts r;
  if (churn_) {
    r = churn_->request(p.slot, p.verb);
  } else {
    const PrioritizeBody& pb = prioritize_[p.body];
    const bool own = p.verb == kPrioritize && pb.state == PrioritizeBody::State::kReady;
    const Corpus::Body& body = own ? pb.body : corpus_.bodies[p.body];
    r.head = own ? pb.head : corpus_.headers[p.verb][p.body];
    r.parts = body.parts;
    r.count = body.count;
  }
  w->bufs[0] = uv_buf_init(const_cast<char*>(r.head.data()), static_cast<unsigned>(r.head.size()));
  size_t bytes = r.head.size();
  for (size_t i = 0; i < r.count; ++i) {
    w->bufs[i + 1] = uv_buf_init(const_cast<char*>(r.parts[i].data()), static_cast<unsigned>(r.parts[i].size()));
    bytes += r.parts[i].size();
  }
  w->req.data = c;
  c->inflight.push_back(p);
  result_.bytesSent += bytes;
  int rc = uv_write(&w->req, reinterpret_cast<uv_stream_t*>(&c->tcp), w->bufs.data(),
                    static_cast<unsigned>(r.count + 1), [](uv_write_t* req, int status) {
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
  c->capturing = churn_ != nullptr ||
                 (!o_.filterOnly && !c->inflight.empty() && c->inflight.front().verb == kFilter &&
                  prioritize_[c->inflight.front().body].state == PrioritizeBody::State::kUnknown);
  c->reply.clear();
}

bool Runner::buildPrioritize(uint32_t b, const std::string& reply) {
  std::vector<std::string> kept;
  if (!parseKeptNodes(replyParser_, reply, o_.mode, kept)) return false;
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
  VerbResult& vr = verbResult(p.verb);
  const bool ok = status == 200;
  if (!ok) {
    ++vr.errors;
    if (p.measured) ++result_.pod.errors;
  } else if (p.measured) {
    vr.latency.record(t - p.origin);
  }
  if (churn_) {
    onChurnReply(c, p, ok, t);
    return;
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
  if (ok && p.measured && prioritized) {
    result_.pod.latency.record(t - p.podIntended);
    ++result_.pods;
    lastCompletion_ = t;
  } else if (ok && p.measured && prioritize_[p.body].state == PrioritizeBody::State::kSkip) {
    ++result_.podsWithoutPrioritize;
    lastCompletion_ = t;
  }
  podDone(c, t);
}

void Runner::onChurnReply(Conn* c, Pending p, bool ok, uint64_t t) {
  const Churn::Step step = ok ? churn_->onReply(p.slot, p.verb, c->reply) : Churn::Step::kFailed;
  if (step == Churn::Step::kPrioritize || step == Churn::Step::kBind) {
    p.verb = step == Churn::Step::kPrioritize ? kPrioritize : kBind;
    // Its latency starts once its body is built (the static mode builds each body once, before
    // it is measured): the server's time, not the load generator's.
    p.origin = now();
    send(c, p);
    return;
  }
  if (step == Churn::Step::kFailed && ok) {
    // A reply kube-scheduler could not use, or a bind that answered an Error.
    ++verbResult(p.verb).errors;
    if (p.measured) ++result_.pod.errors;
    if (++churnErrorsShown_ <= kChurnErrorsShown) std::fprintf(stderr, "loadgen: %s\n", churn_->error(p.slot).c_str());
  }
  churn_->release(p.slot, step == Churn::Step::kBound);
  if (p.measured && step == Churn::Step::kBound) {
    result_.pod.latency.record(t - p.podIntended);
    ++result_.pods;
    lastCompletion_ = t;
  } else if (p.measured && step == Churn::Step::kUnschedulable) {
    ++result_.podsUnschedulable;
    lastCompletion_ = t;
  }
  podDone(c, t);
}

// A pod is finished: the connection takes the next one.
void Runner::podDone(Conn* c, uint64_t t) {
  c->capturing = false;
  --c->activePods;
  ++progressPods_;
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
    if (!running_) {
      // --max-pods reached: finish now when every pod is answered (no answer is left to).
      uv_idle_stop(&pacer_);
      maybeFinish();
      return;
    }
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
    ++verbResult(p.verb).errors;
    if (p.measured) ++result_.pod.errors;
    if (churn_) churn_->release(p.slot, false);
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
              static_cast<unsigned long long>(result_.filter.errors + result_.prioritize.errors + result_.bind.errors));
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
  if (o.churn && o.apiserverPort < 0) {
    std::fprintf(stderr, "loadgen: --churn needs the fake API server (--apiserver-port)\n");
    return false;
  }
  if (o.nodesFile.empty() != o.podsFile.empty() ||
      (!o.nodesFile.empty() && (!o.corpusDir.empty() || !o.requestsFile.empty()))) {
    std::fprintf(stderr, "loadgen: --nodes-file and --pods-file go together, and not with --corpus or "
                         "--requests-file\n");
    return false;
  }
  if (o.apiserverPort >= 0 && !o.requestsFile.empty()) {
    std::fprintf(stderr, "loadgen: --apiserver-port serves the generated fleet: not with --requests-file\n");
    return false;
  }
  if (o.churn && (o.mode != ArgsMode::kNodeNames || o.filterOnly || o.prioritizeAllNodes)) {
    std::fprintf(stderr, "loadgen: --churn sends NodeNames filter, prioritize and bind: not with --mode full, "
                         "--filter-only or --prioritize-all-nodes\n");
    return false;
  }
  Corpus corpus;
  std::string error;
  if (!buildCorpus(o, corpus, error)) {
    std::fprintf(stderr, "loadgen: %s\n", error.c_str());
    return false;
  }
  apiserver::Collection noPods{"PodList"};
  std::optional<apiserver::FakeApiServer> api;
  std::optional<Churn> churn;
  if (o.apiserverPort >= 0) {
    api.emplace(corpus.apiNodes, noPods);
    api->setPodLifetime(std::chrono::milliseconds(static_cast<int64_t>(o.podLifetime * 1000)));
    const uint16_t port = api->start({}, static_cast<uint16_t>(o.apiserverPort));
    if (port == 0) {
      std::fprintf(stderr, "loadgen: the fake API server cannot listen on 127.0.0.1:%d\n", o.apiserverPort);
      return false;
    }
    std::fprintf(stderr, "loadgen: fake kube-apiserver on http://127.0.0.1:%u (%zu nodes)\n", port,
                 corpus.apiNodes.size());
    if (!o.kubeconfigOut.empty()) {
      // Renamed into place, so whoever waits for the file never reads half of it.
      const std::string part = o.kubeconfigOut + ".part";
      std::FILE* f = std::fopen(part.c_str(), "wb");
      const std::string text = apiserver::kubeconfig(port);
      bool ok = f && std::fwrite(text.data(), 1, text.size(), f) == text.size();
      if (f) ok = std::fclose(f) == 0 && ok;
      if (!ok || std::rename(part.c_str(), o.kubeconfigOut.c_str()) != 0) {
        std::fprintf(stderr, "loadgen: cannot write %s\n", o.kubeconfigOut.c_str());
        return false;
      }
    }
    if (!waitReady(o.target, o.readyTimeout)) {
      std::fprintf(stderr, "loadgen: %s/readyz did not answer 200 within %.0f s\n", o.target.c_str(), o.readyTimeout);
      return false;
    }
    if (o.churn) churn.emplace(o, *api);
  }
  Runner runner(o, corpus, result, churn ? &*churn : nullptr);
  const bool ran = runner.run(error);
  if (api) {
    // Stopped first: its lifetime timer deletes pods until then, so counts read before would
    // miss the last deletions, which the extender's watch may already have seen.
    api->stop();
    const apiserver::LivePodStats stats = api->livePodStats();
    result.apiPodsBound = stats.bound;
    result.apiPodsDeleted = stats.deleted;
    result.apiBindingsRefused = stats.bindingsRefused;
    result.apiLiveBound = stats.liveBound;
  }
  if (!ran) {
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
  const uint64_t errors = result.filter.errors + result.prioritize.errors + result.bind.errors;
  return errors ? 3 : 0;
}

}  // namespace fleetsched::tools::loadgen
