#include "engine/reactor/tls_reload.h"

#include <utility>

#include "engine/reactor/metrics.h"
#include "engine/reactor/server.h"
#include "log/log.h"

namespace fleetsched::engine {

TlsReloader::TlsReloader(TlsFiles files) : files_(std::move(files)) {}

TlsReloader::~TlsReloader() { close(); }

std::shared_ptr<const TlsContext> TlsReloader::load(std::string& error) {
  TlsPem pem;
  if (!TlsContext::readFiles(files_, pem, error)) return nullptr;
  std::shared_ptr<const TlsContext> ctx = TlsContext::fromFiles(files_, pem, error);
  if (ctx) use(ctx, std::move(pem));
  return ctx;
}

void TlsReloader::use(std::shared_ptr<const TlsContext> ctx, TlsPem pem) {
  applied_ = std::move(pem);
  failed_ = {};
  lastError_.clear();
  notAfterUnix_ = ctx->notAfterUnix();
  if (notAfter_ != nullptr) notAfter_->set(static_cast<double>(notAfterUnix_));
  if (server_ != nullptr) server_->setTls(std::move(ctx));
}

TlsReloader::Result TlsReloader::check() {
  TlsPem pem;
  std::string error;
  std::shared_ptr<const TlsContext> ctx;
  if (TlsContext::readFiles(files_, pem, error)) {
    if (pem == applied_) return Result::kUnchanged;
    if (pem == failed_) return Result::kFailed;  // already refused and logged
    ctx = TlsContext::fromFiles(files_, pem, error);
  }
  if (!ctx) {
    if (failures_ != nullptr) failures_->inc();
    if (error != lastError_) {
      FLOG_ERROR(log::format("TLS: new certificate files not taken, still serving the current certificate: %s",
                             error.c_str()));
    }
    lastError_ = std::move(error);
    failed_ = std::move(pem);
    return Result::kFailed;
  }
  if (reloaded_ != nullptr) reloaded_->inc();
  FLOG_INFO(log::format("TLS: certificate files changed; new connections use them (%s)", files_.certFile.c_str()));
  use(std::move(ctx), std::move(pem));
  return Result::kReloaded;
}

void TlsReloader::start(uv_loop_t* loop, Server& server, Metrics& metrics, uint64_t intervalMs) {
  reloaded_ = &metrics.counter("tls_reloads_total",
                               "Certificate file changes the verbs listener took (success) or refused, keeping the "
                               "certificate in use (failure)",
                               {{"result", "success"}});
  failures_ = &metrics.counter("tls_reloads_total", "", {{"result", "failure"}});
  notAfter_ = &metrics.gauge("tls_certificate_expiry_timestamp_seconds",
                             "notAfter of the verbs listener's certificate, seconds since the epoch");
  notAfter_->set(static_cast<double>(notAfterUnix_));
  server_ = &server;
  timer_ = new uv_timer_t;
  uv_timer_init(loop, timer_);
  timer_->data = this;
  uv_timer_start(timer_, [](uv_timer_t* t) { static_cast<TlsReloader*>(t->data)->check(); }, intervalMs, intervalMs);
  uv_unref(reinterpret_cast<uv_handle_t*>(timer_));  // a check is no reason to keep the loop alive
}

void TlsReloader::close() {
  if (timer_ == nullptr) return;
  uv_close(reinterpret_cast<uv_handle_t*>(timer_), [](uv_handle_t* h) { delete reinterpret_cast<uv_timer_t*>(h); });
  timer_ = nullptr;
  server_ = nullptr;
}

}  // namespace fleetsched::engine
