// LeaderElector: client-go's leader election (tools/leaderelection with a LeaseLock) for
// `serve --leader-elect`, so several replicas can run while only one binds and preempts.
//
// The lock is a coordination.k8s.io/v1 Lease. Its record (spec.holderIdentity,
// leaseDurationSeconds, acquireTime, renewTime, leaseTransitions) is read with GET and written
// with PUT carrying the resourceVersion that was read, so of two replicas that read the same
// version only one write succeeds (409 Conflict for the other); a missing Lease is created
// with POST (409 AlreadyExists for the slower one).
//
//   following ── GET: no holder, or the record unchanged for its leaseDurationSeconds ──▶ PUT/POST
//      ▲ │          (measured on this replica's clock from when it saw the record change,
//      │ │           never from the renewTime another replica wrote)                │ 200/201
//      │ └── held by another, conflict, error: again after retry × [1, 2.2) ◀──────┤
//      │                                                                            ▼
//      └── renewDeadline since the last successful renew was sent, or another    leading ── every
//          holder seen: stoppedLeading at once                                    retry: GET + PUT
//
// A leader stops at (send time of its last successful renew) + renewDeadline, while another
// replica takes over no earlier than leaseDuration after it saw that renew, so two replicas
// never both believe they lead while clocks run at the same rate (lease > renew deadline is
// validated). release() (on SIGTERM, client-go's ReleaseOnCancel) writes an empty holder with
// leaseDurationSeconds 1, so a follower takes over within about a second instead of a lease.
//
// Runs on the loop of `transport` and `scheduler` (the ingestion thread): every call and
// callback happens there.
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <string>

#include "apiclient/transport.h"

namespace fleetsched::engine {

struct LeaderElectionConfig {
  std::string leaseNamespace = "kube-system";
  std::string leaseName = "fleetsched";
  std::string identity;  // unique per replica: leaderElectionIdentity()
  // kube-scheduler's defaults (--leader-elect-lease-duration, -renew-deadline, -retry-period).
  uint32_t leaseDurationMs = 15000;
  uint32_t renewDeadlineMs = 10000;
  uint32_t retryPeriodMs = 2000;
};

// client-go's JitterFactor: a follower waits retry × [1, 1 + 1.2) between attempts, and the
// renew deadline must exceed retry × 1.2.
inline constexpr double kLeaderElectionJitter = 1.2;

// lease duration > renew deadline > retry period × 1.2, whole seconds of lease duration (the
// Lease holds seconds), a namespace that is a DNS-1123 label, a name that is a DNS-1123
// subdomain, an identity. False with a one-line error naming the flag's setting.
bool validateLeaderElection(const LeaderElectionConfig& c, std::string& error);

// The host name, '_' and 16 random hex digits (kube-scheduler: host name, '_', a UUID), so two
// replicas on one host, or a restarted one, never share an identity.
std::string leaderElectionIdentity();

class LeaderElector {
 public:
  struct Callbacks {
    std::function<void()> startedLeading;  // the lease is ours
    std::function<void()> stoppedLeading;  // lost, taken over or released
    // The holder seen in the Lease changed (empty: nobody holds it).
    std::function<void(const std::string& holder)> holderChanged;
  };

  LeaderElector(LeaderElectionConfig config, apiclient::Transport& transport, apiclient::Scheduler& scheduler,
                Callbacks callbacks);
  ~LeaderElector();
  LeaderElector(const LeaderElector&) = delete;
  LeaderElector& operator=(const LeaderElector&) = delete;

  void start();
  // Leading: stops leading at once (stoppedLeading), then writes the Lease with no holder and
  // leaseDurationSeconds 1 and runs `done` once kube-apiserver answered (or the write failed).
  // Otherwise stops and runs `done` at once. Either way no further attempt is made.
  void release(std::function<void()> done);
  // Stops without writing (stoppedLeading when leading).
  void stop();

  bool leading() const { return phase_ == Phase::Leading; }
  // Stops leading now (stoppedLeading) when the renew deadline has passed on the scheduler's
  // clock, without waiting for the timer that would; returns leading(). Called right before a
  // Binding is sent, so a thread that was starved past the deadline does not send it.
  bool checkDeadline();
  // The holder last seen in the Lease ("" before the first read, or when nobody holds it).
  const std::string& holder() const { return observed_.holder; }
  const LeaderElectionConfig& config() const { return config_; }

 private:
  enum class Phase : uint8_t { Idle, Following, Leading, Releasing, Stopped };
  struct Record {
    std::string holder;
    int32_t leaseDurationSeconds = 0;
    std::string acquireTime;
    std::string renewTime;
    int32_t leaseTransitions = 0;
    bool operator==(const Record&) const = default;
  };

  // One try: GET the Lease, then create or update it when it is free or ours.
  void attempt();
  void onRead(int status, std::string& body, const std::string& error);
  void write(const Record& record, bool create);
  void succeeded();
  void failed(const std::string& why);
  void scheduleAttempt(uint32_t delayMs);
  void lose(const std::string& why);
  // Records what the Lease says; the observation time moves only when the record changed.
  void observe(Record record, std::string resourceVersion);
  std::string body(const Record& record) const;
  // Cancels the exchange in flight; its callbacks no longer run.
  void cancelExchange();
  uint32_t jittered(uint32_t ms);

  LeaderElectionConfig config_;
  apiclient::Transport& transport_;
  apiclient::Scheduler& scheduler_;
  Callbacks callbacks_;
  Phase phase_ = Phase::Idle;
  uint64_t generation_ = 0;  // bumps when an exchange is dropped; stale callbacks compare and return
  apiclient::Transport::Id exchange_ = 0;
  Record observed_;
  std::string resourceVersion_;  // of the Lease last read or written
  uint64_t observedAtMs_ = 0;    // scheduler clock when observed_ last changed
  uint64_t writeSentMs_ = 0;     // when the write in flight was sent
  uint64_t renewedMs_ = 0;       // send time of the last successful write
  std::mt19937_64 rng_;
};

}  // namespace fleetsched::engine
