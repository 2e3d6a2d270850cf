#include "apiclient/reflector.h"

#include <algorithm>
#include <cstdio>

#include "apiclient/api_paths.h"
#include "log/log.h"

namespace fleetsched::apiclient {
namespace {

constexpr size_t kBodyPadding = LineSplitter::kPadding;
constexpr int kHttpGone = 410;
constexpr int kHttpUnauthorized = 401;

bool isExpired(const WatchEventInfo& e) {
  return e.code == kHttpGone || e.reason == "Expired" || e.reason == "Gone";
}

}  // namespace

Reflector::Reflector(ReflectorConfig config, Transport& transport, Scheduler& scheduler, ReflectorSink& sink)
    : config_(std::move(config)),
      transport_(transport),
      scheduler_(scheduler),
      sink_(sink),
      streamingList_(config_.streamingList),
      backoffMs_(config_.backoffInitialMs),
      rng_(std::random_device{}()) {}

Reflector::~Reflector() { stop(); }

void Reflector::start() {
  if (phase_ != Phase::Idle) return;
  startSync();
}

void Reflector::stop() {
  resetExchange();
  if (inRelist_) sink_.abortRelist();
  inRelist_ = false;
  phase_ = Phase::Stopped;
}

void Reflector::resetExchange() {
  ++generation_;
  if (exchange_ != 0) transport_.cancel(exchange_);
  exchange_ = 0;
  status_ = 0;
  body_.clear();
  splitter_.reset();
}

void Reflector::startSync() {
  if (streamingList_) {
    startStreamingList();
  } else {
    continue_.clear();
    startListPage();
  }
}

std::string Reflector::watchQuery(bool initialEvents) {
  std::uniform_int_distribution<uint32_t> spread(0, config_.minWatchTimeoutSec);
  std::string q = config_.path + "?watch=1&allowWatchBookmarks=true&timeoutSeconds=" +
                  std::to_string(config_.minWatchTimeoutSec + spread(rng_));
  if (initialEvents) {
    q += "&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&resourceVersion=";
  } else {
    q += "&resourceVersion=" + resourceVersion_;
  }
  if (!config_.fieldSelector.empty()) q += "&fieldSelector=" + config_.fieldSelector;
  return q;
}

void Reflector::startStreamingList() {
  resetExchange();
  phase_ = Phase::StreamingList;
  if (inRelist_) sink_.abortRelist();
  sink_.beginRelist();
  inRelist_ = true;
  initialDone_ = false;
  stats_.relists.fetch_add(1, std::memory_order_relaxed);
  stats_.watches.fetch_add(1, std::memory_order_relaxed);
  uint64_t gen = generation_;
  Request req;
  req.path = watchQuery(true);
  req.timeoutMs = 0;
  ResponseHandler h = streamHandler(gen, [this] { fail("watch event larger than the line limit", 0); });
  h.onDone = [this, gen](const std::string& error) {
    if (gen != generation_) return;
    exchange_ = 0;
    if (status_ != 200 && status_ != 0 && !initialDone_ && status_ != kHttpUnauthorized && status_ < 500) {
      // The server does not offer streaming lists (feature gate off, too old, or refused):
      // fall back to paged lists for good, as client-go does.
      streamingList_ = false;
      sink_.abortRelist();
      inRelist_ = false;
      startSync();
      return;
    }
    if (!error.empty() || status_ != 200) {
      fail(error.empty() ? "streaming list answered HTTP " + std::to_string(status_) : error, status_);
      return;
    }
    if (!initialDone_) {
      // The stream ended before the initial-events-end bookmark: treat as unsupported.
      streamingList_ = false;
      sink_.abortRelist();
      inRelist_ = false;
      startSync();
      return;
    }
    backoffMs_ = config_.backoffInitialMs;
    startWatch();
  };
  exchange_ = transport_.start(std::move(req), std::move(h));
}

void Reflector::startListPage() {
  resetExchange();
  phase_ = Phase::Listing;
  if (continue_.empty()) {
    if (inRelist_) sink_.abortRelist();
    sink_.beginRelist();
    inRelist_ = true;
    stats_.relists.fetch_add(1, std::memory_order_relaxed);
  }
  uint64_t gen = generation_;
  Request req;
  req.path = config_.path + "?limit=" + std::to_string(config_.pageSize);
  if (!config_.fieldSelector.empty()) req.path += "&fieldSelector=" + config_.fieldSelector;
  if (!continue_.empty()) req.path += "&continue=" + escapeQueryValue(continue_);
  req.timeoutMs = config_.listTimeoutMs;
  ResponseHandler h;
  h.onStatus = [this, gen](int status) {
    if (gen != generation_) return;
    status_ = status;
  };
  h.onData = [this, gen](std::string_view chunk) {
    if (gen != generation_) return;
    body_.append(chunk);
  };
  h.onDone = [this, gen](const std::string& error) {
    if (gen != generation_) return;
    exchange_ = 0;
    if (!error.empty()) {
      fail(error, 0);
      return;
    }
    if (status_ == kHttpGone && !continue_.empty()) {
      // The continue token expired (about 5 minutes): restart the list from the beginning.
      stats_.expired.fetch_add(1, std::memory_order_relaxed);
      continue_.clear();
      startListPage();
      return;
    }
    if (status_ != 200) {
      fail("list answered HTTP " + std::to_string(status_), status_);
      return;
    }
    size_t n = body_.size();
    body_.append(kBodyPadding, '\0');
    ListPageInfo page = sink_.applyListPage(std::string_view(body_.data(), n));
    sink_.flush();
    body_.clear();
    if (!page.ok) {
      fail("list page: " + page.error, 0);
      return;
    }
    if (!page.continueToken.empty()) {
      continue_ = page.continueToken;
      startListPage();
      return;
    }
    continue_.clear();
    std::string().swap(body_);  // a page's worth of bytes; watch bodies never use it
    resourceVersion_ = page.resourceVersion;
    sink_.endRelist();
    inRelist_ = false;
    stats_.failingSinceMs.store(0, std::memory_order_relaxed);
    backoffMs_ = config_.backoffInitialMs;
    listApplied();
    startWatch();
  };
  exchange_ = transport_.start(std::move(req), std::move(h));
}

void Reflector::onWatchLine(std::string_view line) {
  WatchEventInfo e = sink_.applyEvent(line);
  using T = WatchEventInfo::Type;
  switch (e.type) {
    case T::Added:
    case T::Modified:
    case T::Deleted:
    case T::Bookmark:
      stats_.events[static_cast<int>(e.type)].fetch_add(1, std::memory_order_relaxed);
      stats_.lastEventMs.store(scheduler_.nowMs(), std::memory_order_relaxed);
      if (!e.resourceVersion.empty()) resourceVersion_ = e.resourceVersion;
      if (e.type == T::Bookmark && e.initialEventsEnd && phase_ == Phase::StreamingList && !initialDone_) {
        initialDone_ = true;
        sink_.endRelist();
        inRelist_ = false;
        phase_ = Phase::Watching;
        listApplied();
      }
      return;
    case T::Error: {
      if (isExpired(e)) {
        stats_.expired.fetch_add(1, std::memory_order_relaxed);
        leaveStreamThen([this] { relist(); });
      } else if (phase_ == Phase::StreamingList && !initialDone_) {
        leaveStreamThen([this] {
          streamingList_ = false;
          sink_.abortRelist();
          inRelist_ = false;
          startSync();
        });
      } else {
        std::string why = "watch ERROR " + std::to_string(e.code) + " " + e.reason + ": " + e.message;
        int code = e.code;
        leaveStreamThen([this, why, code] { fail(why, code); });
      }
      return;
    }
    case T::Invalid:
      // A line we cannot read; skipping it would silently lose an update, so resync.
      leaveStreamThen([this] { relist(); });
      return;
  }
}

ResponseHandler Reflector::streamHandler(uint64_t gen, std::function<void()> onOverflow) {
  ResponseHandler h;
  h.onStatus = [this, gen](int status) {
    if (gen != generation_) return;
    status_ = status;
    // A watch (or streaming list) the server accepted: changes flow again.
    if (status == 200) stats_.failingSinceMs.store(0, std::memory_order_relaxed);
  };
  h.onData = [this, gen, onOverflow = std::move(onOverflow)](std::string_view chunk) {
    if (gen != generation_ || status_ != 200) return;  // an error Status body is not events
    bool ok = splitter_.feed(chunk, [this](std::string_view line) { onWatchLine(line); });
    sink_.flush();
    if (!ok) leaveStreamThen(onOverflow);
  };
  return h;
}

void Reflector::leaveStreamThen(std::function<void()> next) {
  // Leave from outside the stream's callbacks: a transport may not allow cancelling an
  // exchange inside its own data callback. Bumping the generation mutes what it still says.
  ++generation_;
  Transport::Id ex = exchange_;
  exchange_ = 0;
  scheduler_.after(0, [this, ex, next = std::move(next)] {
    transport_.cancel(ex);
    next();
  });
}

void Reflector::resync(std::function<void()> done) {
  if (phase_ == Phase::Idle || phase_ == Phase::Stopped) return;
  resyncWaiters_.push_back(std::move(done));
  relist();
}

void Reflector::listApplied() {
  stats_.synced.store(true, std::memory_order_release);
  std::vector<std::function<void()>> waiters;
  waiters.swap(resyncWaiters_);
  for (auto& fn : waiters) fn();
}

void Reflector::relist() {
  resourceVersion_.clear();
  continue_.clear();
  startSync();
}

void Reflector::startWatch() {
  resetExchange();
  phase_ = Phase::Watching;
  stats_.watches.fetch_add(1, std::memory_order_relaxed);
  uint64_t gen = generation_;
  Request req;
  req.path = watchQuery(false);
  req.timeoutMs = 0;
  ResponseHandler h = streamHandler(gen, [this] { relist(); });
  h.onDone = [this, gen](const std::string& error) {
    if (gen != generation_) return;
    exchange_ = 0;
    if (status_ == kHttpGone) {
      stats_.expired.fetch_add(1, std::memory_order_relaxed);
      relist();
      return;
    }
    if (!error.empty() || status_ != 200) {
      fail(error.empty() ? "watch answered HTTP " + std::to_string(status_) : error, status_);
      return;
    }
    // A watch ends normally when its timeout elapses: resume from the last version.
    backoffMs_ = config_.backoffInitialMs;
    startWatch();
  };
  exchange_ = transport_.start(std::move(req), std::move(h));
}

void Reflector::fail(const std::string& why, int status) {
  resetExchange();
  lastError_ = why;
  FLOG_WARNING(log::format("%s: %s; retrying", config_.resource.c_str(), why.c_str()));
  stats_.failures.fetch_add(1, std::memory_order_relaxed);
  uint64_t healthy = 0;
  stats_.failingSinceMs.compare_exchange_strong(healthy, std::max<uint64_t>(scheduler_.nowMs(), 1),
                                                std::memory_order_relaxed);
  if (status == kHttpUnauthorized && onUnauthorized_) onUnauthorized_();
  bool resume = phase_ == Phase::Watching && !resourceVersion_.empty();
  phase_ = Phase::Waiting;
  std::uniform_int_distribution<uint32_t> jitter(0, backoffMs_ / 2);
  uint32_t delay = backoffMs_ + jitter(rng_);
  backoffMs_ = std::min(backoffMs_ * 2, config_.backoffMaxMs);
  uint64_t gen = generation_;
  scheduler_.after(delay, [this, gen, resume] {
    if (gen != generation_ || phase_ != Phase::Waiting) return;
    if (resume) {
      startWatch();
    } else {
      continue_.clear();
      startSync();
    }
  });
}

}  // namespace fleetsched::apiclient
