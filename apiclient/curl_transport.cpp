#include "apiclient/curl_transport.h"

#include <cstring>

namespace fleetsched::apiclient {

struct CurlTransport::Exchange {
  Id id = 0;
  CurlTransport* owner = nullptr;
  CURL* easy = nullptr;
  curl_slist* headers = nullptr;
  Request req;
  ResponseHandler handler;
  bool statusSent = false;
  bool cancelled = false;
};

struct CurlTransport::Socket {
  uv_poll_t poll;
  curl_socket_t fd;
  CurlTransport* owner;
};

namespace {

struct CurlGlobal {
  CurlGlobal() { curl_global_init(CURL_GLOBAL_DEFAULT); }
};

}  // namespace

CurlTransport::CurlTransport(uv_loop_t* loop, ClusterConfig config)
    : loop_(loop), config_(std::move(config)), route_(serverRoute(config_)) {
  static CurlGlobal global;
  if (!route_.connectTo.empty()) connectTo_ = curl_slist_append(nullptr, route_.connectTo.c_str());
  multi_ = curl_multi_init();
  curl_multi_setopt(multi_, CURLMOPT_SOCKETFUNCTION, &CurlTransport::onCurlSocket);
  curl_multi_setopt(multi_, CURLMOPT_SOCKETDATA, this);
  curl_multi_setopt(multi_, CURLMOPT_TIMERFUNCTION, &CurlTransport::onCurlTimer);
  curl_multi_setopt(multi_, CURLMOPT_TIMERDATA, this);
  timer_ = new uv_timer_t;
  uv_timer_init(loop_, timer_);
  timer_->data = this;
}

CurlTransport::~CurlTransport() { close(); }

void CurlTransport::close() {
  if (multi_ == nullptr) return;
  for (auto& [id, ex] : exchanges_) {
    curl_multi_remove_handle(multi_, ex->easy);
    curl_easy_cleanup(ex->easy);
    curl_slist_free_all(ex->headers);
  }
  exchanges_.clear();
  curl_multi_cleanup(multi_);
  multi_ = nullptr;
  curl_slist_free_all(connectTo_);
  connectTo_ = nullptr;
  uv_timer_stop(timer_);
  uv_close(reinterpret_cast<uv_handle_t*>(timer_), [](uv_handle_t* h) { delete reinterpret_cast<uv_timer_t*>(h); });
  timer_ = nullptr;
}

Transport::Id CurlTransport::start(Request req, ResponseHandler handler) {
  auto ex = std::make_unique<Exchange>();
  ex->id = nextId_++;
  ex->owner = this;
  ex->req = std::move(req);
  ex->handler = std::move(handler);
  CURL* e = curl_easy_init();
  ex->easy = e;
  std::string url = route_.urlBase + ex->req.path;
  curl_easy_setopt(e, CURLOPT_URL, url.c_str());
  if (connectTo_ != nullptr) curl_easy_setopt(e, CURLOPT_CONNECT_TO, connectTo_);
  curl_easy_setopt(e, CURLOPT_PRIVATE, ex.get());
  curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, &CurlTransport::onHeader);
  curl_easy_setopt(e, CURLOPT_HEADERDATA, ex.get());
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &CurlTransport::onWrite);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, ex.get());
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
  curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "");  // gzip shrinks lists several-fold
  if (ex->req.timeoutMs > 0) curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, static_cast<long>(ex->req.timeoutMs));
  if (!config_.caPem.empty()) {
    curl_blob blob{config_.caPem.data(), config_.caPem.size(), CURL_BLOB_COPY};
    curl_easy_setopt(e, CURLOPT_CAINFO_BLOB, &blob);
  }
  if (!config_.certPem.empty()) {
    curl_blob cert{config_.certPem.data(), config_.certPem.size(), CURL_BLOB_COPY};
    curl_easy_setopt(e, CURLOPT_SSLCERT_BLOB, &cert);
    curl_easy_setopt(e, CURLOPT_SSLCERTTYPE, "PEM");
  }
  if (!config_.keyPem.empty()) {
    curl_blob key{config_.keyPem.data(), config_.keyPem.size(), CURL_BLOB_COPY};
    curl_easy_setopt(e, CURLOPT_SSLKEY_BLOB, &key);
    curl_easy_setopt(e, CURLOPT_SSLKEYTYPE, "PEM");
  }
  if (config_.insecureSkipVerify) {
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
  }
  ex->headers = curl_slist_append(ex->headers, "Accept: application/json");
  if (!route_.hostHeader.empty()) ex->headers = curl_slist_append(ex->headers, route_.hostHeader.c_str());
  if (!config_.token.empty()) {
    ex->headers = curl_slist_append(ex->headers, ("Authorization: Bearer " + config_.token).c_str());
  }
  if (ex->req.method != "GET") {
    curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, ex->req.method.c_str());
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, ex->req.body.c_str());
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE, static_cast<long>(ex->req.body.size()));
    ex->headers = curl_slist_append(ex->headers, ("Content-Type: " + ex->req.contentType).c_str());
  }
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, ex->headers);
  Id id = ex->id;
  exchanges_.emplace(id, std::move(ex));
  curl_multi_add_handle(multi_, e);
  return id;
}

void CurlTransport::cancel(Id id) {
  auto it = exchanges_.find(id);
  if (it == exchanges_.end()) return;
  it->second->cancelled = true;
  if (dispatching_ > 0) {
    // curl forbids removing a handle from inside its callbacks; finish after the dispatch.
    cancelled_.push_back(id);
    return;
  }
  remove(it->second.get());
}

void CurlTransport::remove(Exchange* ex) {
  curl_multi_remove_handle(multi_, ex->easy);
  curl_easy_cleanup(ex->easy);
  curl_slist_free_all(ex->headers);
  exchanges_.erase(ex->id);
}

size_t CurlTransport::onHeader(char* data, size_t size, size_t n, void* p) {
  auto* ex = static_cast<Exchange*>(p);
  size_t len = size * n;
  if (ex->cancelled) return 0;
  // The empty line ends a header block; interim 1xx blocks are followed by the real one.
  if (len <= 2 && (len == 0 || data[0] == '\r' || data[0] == '\n')) {
    long code = 0;
    curl_easy_getinfo(ex->easy, CURLINFO_RESPONSE_CODE, &code);
    if (code >= 200 && !ex->statusSent) {
      ex->statusSent = true;
      if (ex->handler.onStatus) ex->handler.onStatus(static_cast<int>(code));
    }
  }
  return ex->cancelled ? 0 : len;
}

size_t CurlTransport::onWrite(char* data, size_t size, size_t n, void* p) {
  auto* ex = static_cast<Exchange*>(p);
  size_t len = size * n;
  if (ex->cancelled) return 0;
  if (!ex->statusSent) {
    long code = 0;
    curl_easy_getinfo(ex->easy, CURLINFO_RESPONSE_CODE, &code);
    ex->statusSent = true;
    if (ex->handler.onStatus) ex->handler.onStatus(static_cast<int>(code));
    if (ex->cancelled) return 0;
  }
  if (ex->handler.onData) ex->handler.onData(std::string_view(data, len));
  return ex->cancelled ? 0 : len;
}

int CurlTransport::onCurlSocket(CURL*, curl_socket_t fd, int what, void* selfp, void* socketp) {
  auto* self = static_cast<CurlTransport*>(selfp);
  auto* sock = static_cast<Socket*>(socketp);
  if (what == CURL_POLL_REMOVE) {
    if (sock != nullptr) {
      uv_poll_stop(&sock->poll);
      curl_multi_assign(self->multi_, fd, nullptr);
      uv_close(reinterpret_cast<uv_handle_t*>(&sock->poll),
               [](uv_handle_t* h) { delete static_cast<Socket*>(h->data); });
    }
    return 0;
  }
  if (sock == nullptr) {
    sock = new Socket;
    sock->fd = fd;
    sock->owner = self;
    uv_poll_init_socket(self->loop_, &sock->poll, fd);
    sock->poll.data = sock;
    curl_multi_assign(self->multi_, fd, sock);
  }
  int events = 0;
  if (what & CURL_POLL_IN) events |= UV_READABLE;
  if (what & CURL_POLL_OUT) events |= UV_WRITABLE;
  uv_poll_start(&sock->poll, events, &CurlTransport::onPoll);
  return 0;
}

int CurlTransport::onCurlTimer(CURLM*, long timeoutMs, void* selfp) {
  auto* self = static_cast<CurlTransport*>(selfp);
  if (timeoutMs < 0) {
    uv_timer_stop(self->timer_);
  } else {
    uv_timer_start(self->timer_, &CurlTransport::onTimer, static_cast<uint64_t>(timeoutMs), 0);
  }
  return 0;
}

void CurlTransport::onPoll(uv_poll_t* handle, int status, int events) {
  auto* sock = static_cast<Socket*>(handle->data);
  int flags = 0;
  if (status < 0) flags = CURL_CSELECT_ERR;
  if (events & UV_READABLE) flags |= CURL_CSELECT_IN;
  if (events & UV_WRITABLE) flags |= CURL_CSELECT_OUT;
  sock->owner->action(sock->fd, flags);
}

void CurlTransport::onTimer(uv_timer_t* timer) {
  static_cast<CurlTransport*>(timer->data)->action(CURL_SOCKET_TIMEOUT, 0);
}

void CurlTransport::action(curl_socket_t fd, int flags) {
  if (multi_ == nullptr) return;
  int running = 0;
  ++dispatching_;
  curl_multi_socket_action(multi_, fd, flags, &running);
  --dispatching_;
  finishDone();
}

void CurlTransport::finishDone() {
  CURLMsg* msg;
  int left = 0;
  while ((msg = curl_multi_info_read(multi_, &left)) != nullptr) {
    if (msg->msg != CURLMSG_DONE) continue;
    Exchange* ex = nullptr;
    curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &ex);
    CURLcode result = msg->data.result;
    ResponseHandler handler = std::move(ex->handler);
    bool cancelled = ex->cancelled;
    bool statusSent = ex->statusSent;
    long code = 0;
    curl_easy_getinfo(ex->easy, CURLINFO_RESPONSE_CODE, &code);
    remove(ex);
    if (cancelled) continue;
    if (!statusSent && result == CURLE_OK && handler.onStatus) handler.onStatus(static_cast<int>(code));
    if (handler.onDone) handler.onDone(result == CURLE_OK ? std::string() : std::string(curl_easy_strerror(result)));
  }
  // Cancellations requested during the dispatch.
  std::vector<Id> ids;
  ids.swap(cancelled_);
  for (Id id : ids) {
    auto it = exchanges_.find(id);
    if (it != exchanges_.end()) remove(it->second.get());
  }
}

}  // namespace fleetsched::apiclient
