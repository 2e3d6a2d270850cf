#include "engine/ingest/leader_election.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <ctime>

#include "apiclient/api_paths.h"
#include "codec/decoder.h"
#include "codec/json_writer.h"
#include "codec/k8s_names.h"
#include "log/log.h"

namespace fleetsched::engine {
namespace {

// metav1.MicroTime as Go writes it: RFC 3339 in UTC with six fraction digits.
std::string microTimeNow() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  std::tm tm{};
  gmtime_r(&ts.tv_sec, &tm);
  char buf[40];
  size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  std::snprintf(buf + n, sizeof buf - n, ".%06ldZ", ts.tv_nsec / 1000);
  return buf;
}

}  // namespace

bool validateLeaderElection(const LeaderElectionConfig& c, std::string& error) {
  if (!codec::isDns1123Label(c.leaseNamespace)) {
    error = "--leader-elect-resource-namespace \"" + c.leaseNamespace.substr(0, 80) +
            "\": not a namespace name (a DNS-1123 label: lower-case letters, digits and '-', at most 63)";
    return false;
  }
  if (!codec::isDns1123Subdomain(c.leaseName)) {
    error = "--leader-elect-resource-name \"" + c.leaseName.substr(0, 80) +
            "\": not a Lease name (a DNS-1123 subdomain: lower-case letters, digits, '-' and '.', at most 253)";
    return false;
  }
  if (c.identity.empty()) {
    error = "leader election needs an identity";
    return false;
  }
  if (c.retryPeriodMs == 0) {
    error = "--leader-elect-retry-period must be above 0";
    return false;
  }
  if (c.leaseDurationMs % 1000 != 0) {
    error = "--leader-elect-lease-duration must be whole seconds (a Lease holds leaseDurationSeconds)";
    return false;
  }
  if (c.leaseDurationMs <= c.renewDeadlineMs) {
    error = "--leader-elect-lease-duration (" + std::to_string(c.leaseDurationMs) +
            " ms) must be greater than --leader-elect-renew-deadline (" + std::to_string(c.renewDeadlineMs) + " ms)";
    return false;
  }
  if (static_cast<double>(c.renewDeadlineMs) <= kLeaderElectionJitter * c.retryPeriodMs) {
    error = "--leader-elect-renew-deadline (" + std::to_string(c.renewDeadlineMs) +
            " ms) must be greater than 1.2 × --leader-elect-retry-period (" + std::to_string(c.retryPeriodMs) +
            " ms)";
    return false;
  }
  return true;
}

std::string leaderElectionIdentity() {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0 || host[0] == '\0') std::snprintf(host, sizeof host, "fleetsched");
  std::random_device rd;
  char suffix[17];
  std::snprintf(suffix, sizeof suffix, "%08x%08x", rd(), rd());
  return std::string(host) + "_" + suffix;
}

LeaderElector::LeaderElector(LeaderElectionConfig config, apiclient::Transport& transport,
                             apiclient::Scheduler& scheduler, Callbacks callbacks)
    : config_(std::move(config)),
      transport_(transport),
      scheduler_(scheduler),
      callbacks_(std::move(callbacks)),
      rng_(std::random_device{}()) {}

LeaderElector::~LeaderElector() { cancelExchange(); }

void LeaderElector::start() {
  if (phase_ != Phase::Idle) return;
  phase_ = Phase::Following;
  FLOG_INFO(log::format("leader election: trying to acquire the Lease %s/%s as %s", config_.leaseNamespace.c_str(),
                        config_.leaseName.c_str(), config_.identity.c_str()));
  attempt();
}

void LeaderElector::cancelExchange() {
  ++generation_;
  if (exchange_ != 0) transport_.cancel(exchange_);
  exchange_ = 0;
}

uint32_t LeaderElector::jittered(uint32_t ms) {
  std::uniform_real_distribution<double> spread(0.0, kLeaderElectionJitter);
  return ms + static_cast<uint32_t>(ms * spread(rng_));
}

void LeaderElector::scheduleAttempt(uint32_t delayMs) {
  const uint64_t gen = generation_;
  scheduler_.after(delayMs, [this, gen] {
    if (gen != generation_ || (phase_ != Phase::Following && phase_ != Phase::Leading)) return;
    attempt();
  });
}

void LeaderElector::attempt() {
  cancelExchange();
  const uint64_t gen = generation_;
  apiclient::Request req;
  req.path = apiclient::leasePath(config_.leaseNamespace, config_.leaseName);
  req.timeoutMs = config_.renewDeadlineMs;
  exchange_ = apiclient::fetch(transport_, std::move(req),
                               [this, gen](int status, std::string& body, const std::string& error) {
                                 if (gen != generation_) return;
                                 exchange_ = 0;
                                 onRead(status, body, error);
                               });
}

void LeaderElector::observe(Record record, std::string resourceVersion) {
  resourceVersion_ = std::move(resourceVersion);
  if (record == observed_ && observedAtMs_ != 0) return;
  const bool holderChanged = record.holder != observed_.holder;
  observed_ = std::move(record);
  observedAtMs_ = std::max<uint64_t>(scheduler_.nowMs(), 1);
  if (holderChanged && callbacks_.holderChanged) callbacks_.holderChanged(observed_.holder);
}

void LeaderElector::onRead(int status, std::string& body, const std::string& error) {
  const std::string what = "Lease " + config_.leaseNamespace + "/" + config_.leaseName;
  if (!error.empty()) return failed("reading the " + what + ": " + error);
  Record next;
  next.holder = config_.identity;
  next.leaseDurationSeconds = static_cast<int32_t>(config_.leaseDurationMs / 1000);
  next.renewTime = microTimeNow();
  if (status == 404) {
    next.acquireTime = next.renewTime;
    return write(next, /*create=*/true);
  }
  if (status != 200) {
    return failed("reading the " + what + ": HTTP " + std::to_string(status) + ": " + apiclient::statusMessage(body));
  }
  codec::Lease lease;
  {
    codec::Decoder decoder(1u << 20);
    const size_t n = body.size();
    body.append(codec::kDecodePadding, '\0');
    if (!decoder.decodeLease(std::string_view(body.data(), n), lease)) {
      return failed("reading the " + what + ": " + decoder.errorMessage());
    }
    observe(Record{std::string(lease.holderIdentity), lease.leaseDurationSeconds, std::string(lease.acquireTime),
                   std::string(lease.renewTime), lease.leaseTransitions},
            std::string(lease.resourceVersion));
  }
  const bool ours = observed_.holder == config_.identity;
  const uint64_t expiresMs = observedAtMs_ + uint64_t(std::max(observed_.leaseDurationSeconds, 0)) * 1000;
  if (!observed_.holder.empty() && !ours && scheduler_.nowMs() < expiresMs) {
    // Held by a replica that renewed within its lease duration, as far as this one has seen.
    if (phase_ == Phase::Leading) return lose("the Lease is held by " + observed_.holder);
    return failed("");
  }
  next.acquireTime = ours ? observed_.acquireTime : next.renewTime;
  next.leaseTransitions = ours ? observed_.leaseTransitions : observed_.leaseTransitions + 1;
  write(next, /*create=*/false);
}

std::string LeaderElector::body(const Record& r) const {
  std::string out;
  {
    codec::JsonWriter w(out);
    w.raw(R"({"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":)");
    w.string(config_.leaseName);
    w.raw(R"(,"namespace":)");
    w.string(config_.leaseNamespace);
    if (!resourceVersion_.empty()) {
      w.raw(R"(,"resourceVersion":)");
      w.string(resourceVersion_);
    }
    w.raw(R"(},"spec":{"holderIdentity":)");
    w.string(r.holder);
    w.raw(R"(,"leaseDurationSeconds":)");
    w.int64(r.leaseDurationSeconds);
    w.raw(R"(,"acquireTime":)");
    w.string(r.acquireTime);
    w.raw(R"(,"renewTime":)");
    w.string(r.renewTime);
    w.raw(R"(,"leaseTransitions":)");
    w.int64(r.leaseTransitions);
    w.raw("}}");
  }
  return out;
}

void LeaderElector::write(const Record& record, bool create) {
  cancelExchange();
  const uint64_t gen = generation_;
  apiclient::Request req;
  req.method = create ? "POST" : "PUT";
  if (create) resourceVersion_.clear();
  req.path = create ? apiclient::leasesPath(config_.leaseNamespace)
                    : apiclient::leasePath(config_.leaseNamespace, config_.leaseName);
  req.body = body(record);
  req.timeoutMs = config_.renewDeadlineMs;
  writeSentMs_ = scheduler_.nowMs();
  exchange_ = apiclient::fetch(
      transport_, std::move(req), [this, gen, create](int status, std::string& reply, const std::string& error) {
        if (gen != generation_) return;
        exchange_ = 0;
        const char* verb = create ? "creating" : "updating";
        if (!error.empty()) return failed(std::string(verb) + " the Lease: " + error);
        if (status == 409) {
          // Another replica wrote first (update) or created it first (create): read it again.
          return failed("");
        }
        if (status != 200 && status != 201) {
          return failed(std::string(verb) + " the Lease: HTTP " + std::to_string(status) + ": " +
                        apiclient::statusMessage(reply));
        }
        codec::Lease lease;
        codec::Decoder decoder(1u << 20);
        const size_t n = reply.size();
        reply.append(codec::kDecodePadding, '\0');
        if (!decoder.decodeLease(std::string_view(reply.data(), n), lease)) {
          return failed(std::string(verb) + " the Lease: " + decoder.errorMessage());
        }
        observe(Record{std::string(lease.holderIdentity), lease.leaseDurationSeconds, std::string(lease.acquireTime),
                       std::string(lease.renewTime), lease.leaseTransitions},
                std::string(lease.resourceVersion));
        succeeded();
      });
}

void LeaderElector::succeeded() {
  renewedMs_ = writeSentMs_;
  if (phase_ == Phase::Following) {
    phase_ = Phase::Leading;
    FLOG_INFO(log::format("leader election: acquired the Lease %s/%s as %s (transitions %d)",
                          config_.leaseNamespace.c_str(), config_.leaseName.c_str(), config_.identity.c_str(),
                          observed_.leaseTransitions));
    if (callbacks_.startedLeading) callbacks_.startedLeading();
    if (phase_ != Phase::Leading) return;  // the callback stopped or released
  }
  scheduleAttempt(config_.retryPeriodMs);
  // The renew deadline counts from the send time of this successful write.
  const uint64_t due = renewedMs_ + config_.renewDeadlineMs;
  const uint64_t now = scheduler_.nowMs();
  scheduler_.after(static_cast<uint32_t>(due > now ? due - now : 0), [this] { checkDeadline(); });
}

bool LeaderElector::checkDeadline() {
  if (phase_ == Phase::Leading && scheduler_.nowMs() >= renewedMs_ + config_.renewDeadlineMs) {
    lose("no renewal succeeded within the renew deadline (" + std::to_string(config_.renewDeadlineMs) + " ms)");
  }
  return leading();
}

void LeaderElector::failed(const std::string& why) {
  if (phase_ == Phase::Leading) {
    if (!why.empty()) FLOG_WARNING("leader election: renewing failed; retrying").err(why);
    if (scheduler_.nowMs() >= renewedMs_ + config_.renewDeadlineMs) {
      return lose("no renewal succeeded within the renew deadline (" + std::to_string(config_.renewDeadlineMs) +
                  " ms)" + (why.empty() ? "" : ": " + why));
    }
    return scheduleAttempt(config_.retryPeriodMs);
  }
  if (phase_ != Phase::Following) return;
  if (!why.empty()) FLOG_WARNING("leader election: attempt failed; retrying").err(why);
  scheduleAttempt(jittered(config_.retryPeriodMs));
}

void LeaderElector::lose(const std::string& why) {
  cancelExchange();
  phase_ = Phase::Following;
  FLOG_WARNING(log::format("leader election: lost the Lease %s/%s: %s", config_.leaseNamespace.c_str(),
                           config_.leaseName.c_str(), why.c_str()));
  if (callbacks_.stoppedLeading) callbacks_.stoppedLeading();
  if (phase_ == Phase::Following) scheduleAttempt(jittered(config_.retryPeriodMs));
}

void LeaderElector::release(std::function<void()> done) {
  if (phase_ != Phase::Leading) {
    stop();
    done();
    return;
  }
  cancelExchange();
  phase_ = Phase::Releasing;
  if (callbacks_.stoppedLeading) callbacks_.stoppedLeading();
  Record r;
  r.leaseDurationSeconds = 1;
  r.acquireTime = r.renewTime = microTimeNow();
  r.leaseTransitions = observed_.leaseTransitions;
  const uint64_t gen = generation_;
  apiclient::Request req;
  req.method = "PUT";
  req.path = apiclient::leasePath(config_.leaseNamespace, config_.leaseName);
  req.body = body(r);
  req.timeoutMs = config_.renewDeadlineMs;
  exchange_ = apiclient::fetch(transport_, std::move(req),
                               [this, gen, done = std::move(done)](int status, std::string& reply,
                                                                   const std::string& error) {
                                 if (gen != generation_) return;
                                 exchange_ = 0;
                                 phase_ = Phase::Stopped;
                                 if (error.empty() && status == 200) {
                                   FLOG_INFO(log::format("leader election: released the Lease %s/%s",
                                                         config_.leaseNamespace.c_str(), config_.leaseName.c_str()));
                                 } else {
                                   FLOG_WARNING("leader election: releasing the Lease failed; it expires on its own")
                                       .err(!error.empty() ? error
                                                           : "HTTP " + std::to_string(status) + ": " +
                                                                 apiclient::statusMessage(reply));
                                 }
                                 done();
                               });
}

void LeaderElector::stop() {
  cancelExchange();
  const bool wasLeading = phase_ == Phase::Leading;
  phase_ = Phase::Stopped;
  if (wasLeading && callbacks_.stoppedLeading) callbacks_.stoppedLeading();
}

}  // namespace fleetsched::engine
