// LeaderElector against a stand-in kube-apiserver that keeps one Lease the way the real one
// does (resourceVersion bumped per write, PUT with a stale resourceVersion 409, POST of an
// existing Lease 409) on a hand-driven clock: acquire, renew, lose, takeover after expiry,
// conflict on update, release.
#include "engine/ingest/leader_election.h"

#include <gtest/gtest.h>
#include <simdjson.h>

#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "apiclient/api_paths.h"

namespace fleetsched::engine {
namespace {

constexpr const char* kLeasePath = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/fleetsched";
constexpr const char* kLeasesPath = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases";

// Timers on a clock the test moves.
class ManualScheduler : public apiclient::Scheduler {
 public:
  void after(uint32_t delayMs, std::function<void()> fn) override { timers.insert({now + delayMs, std::move(fn)}); }
  uint64_t nowMs() const override { return now; }
  // Runs every timer due up to now + ms, in time order, moving the clock with them.
  void advance(uint64_t ms) {
    const uint64_t end = now + ms;
    while (!timers.empty() && timers.begin()->first <= end) {
      auto it = timers.begin();
      now = std::max(now, it->first);
      auto fn = std::move(it->second);
      timers.erase(it);
      fn();
    }
    now = end;
  }
  uint64_t now = 1'000'000;
  std::multimap<uint64_t, std::function<void()>> timers;
};

struct Stored {
  std::string holder;
  int64_t duration = 0;
  std::string acquireTime, renewTime;
  int64_t transitions = 0;
  uint64_t rv = 0;
};

// One Lease, answered synchronously or held back (hold = true: requests wait in `held` until
// the test answers them, as when kube-apiserver is slow or gone).
class LeaseServer : public apiclient::Transport {
 public:
  struct Pending {
    Id id;
    apiclient::Request req;
    apiclient::ResponseHandler h;
  };

  Id start(apiclient::Request req, apiclient::ResponseHandler h) override {
    requests.push_back(req.method + " " + req.path);
    bodies.push_back(req.body);
    Id id = ++next;
    if (down) {
      h.onDone("connection refused");
      return id;
    }
    if (hold) {
      held.push_back({id, std::move(req), std::move(h)});
      return id;
    }
    answer(req, h);
    return id;
  }
  void cancel(Id id) override {
    for (auto it = held.begin(); it != held.end(); ++it) {
      if (it->id == id) {
        held.erase(it);
        ++cancelled;
        return;
      }
    }
  }

  void answer(const apiclient::Request& req, apiclient::ResponseHandler& h) {
    auto reply = [&](int status, const std::string& body) {
      h.onStatus(status);
      h.onData(body);
      h.onDone("");
    };
    if (req.method == "GET" && req.path == kLeasePath) {
      if (!lease) return reply(404, R"({"kind":"Status","code":404,"reason":"NotFound","message":"not found"})");
      return reply(200, json(*lease));
    }
    simdjson::dom::parser parser;
    simdjson::dom::element doc;
    EXPECT_EQ(parser.parse(req.body).get(doc), simdjson::SUCCESS) << req.body;
    Stored s;
    auto spec = doc["spec"];
    s.holder = std::string(spec["holderIdentity"].get_string().value());
    s.duration = spec["leaseDurationSeconds"].get_int64().value();
    s.acquireTime = std::string(spec["acquireTime"].get_string().value());
    s.renewTime = std::string(spec["renewTime"].get_string().value());
    s.transitions = spec["leaseTransitions"].get_int64().value();
    if (req.method == "POST" && req.path == kLeasesPath) {
      if (lease) return reply(409, R"({"kind":"Status","code":409,"reason":"AlreadyExists","message":"exists"})");
      s.rv = ++rv;
      lease = s;
      return reply(201, json(*lease));
    }
    if (req.method == "PUT" && req.path == kLeasePath) {
      std::string_view sent;
      if (doc["metadata"]["resourceVersion"].get_string().get(sent) != simdjson::SUCCESS || !lease ||
          sent != std::to_string(lease->rv)) {
        ++conflicts;
        return reply(409, R"({"kind":"Status","code":409,"reason":"Conflict","message":"the object has been modified"})");
      }
      s.rv = ++rv;
      lease = s;
      return reply(200, json(*lease));
    }
    reply(400, "{}");
  }

  // Answers the oldest held request.
  void releaseOne() {
    ASSERT_FALSE(held.empty());
    Pending p = std::move(held.front());
    held.pop_front();
    answer(p.req, p.h);
  }

  static std::string json(const Stored& s) {
    return R"({"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"fleetsched","namespace":"kube-system","resourceVersion":")" +
           std::to_string(s.rv) + R"("},"spec":{"holderIdentity":")" + s.holder +
           R"(","leaseDurationSeconds":)" + std::to_string(s.duration) + R"(,"acquireTime":")" + s.acquireTime +
           R"(","renewTime":")" + s.renewTime + R"(","leaseTransitions":)" + std::to_string(s.transitions) + "}}";
  }

  // Another replica writes the Lease (a renewal of its own, or a takeover).
  void writeAs(const std::string& holder, int64_t duration = 15) {
    Stored s = lease.value_or(Stored{});
    if (s.holder != holder) ++s.transitions;
    s.holder = holder;
    s.duration = duration;
    s.renewTime = "2026-12-06T00:00:" + std::to_string(10 + rv) + ".000000Z";
    s.rv = ++rv;
    lease = s;
  }

  std::optional<Stored> lease;
  uint64_t rv = 100;
  bool hold = false;
  bool down = false;
  int conflicts = 0;
  int cancelled = 0;
  std::deque<Pending> held;
  std::vector<std::string> requests;
  std::vector<std::string> bodies;
  Id next = 0;
};

class LeaderElection : public ::testing::Test {
 protected:
  std::unique_ptr<LeaderElector> make(const std::string& identity) {
    LeaderElectionConfig c;
    c.identity = identity;
    LeaderElector::Callbacks cb;
    cb.startedLeading = [this] { events.push_back("started"); };
    cb.stoppedLeading = [this] { events.push_back("stopped"); };
    cb.holderChanged = [this](const std::string& h) { events.push_back("holder " + h); };
    return std::make_unique<LeaderElector>(c, server, clock, cb);
  }

  LeaseServer server;
  ManualScheduler clock;
  std::vector<std::string> events;
};

TEST_F(LeaderElection, AcquiresAMissingLeaseByCreatingIt) {
  auto e = make("a_1");
  e->start();
  EXPECT_TRUE(e->leading());
  ASSERT_EQ(server.requests.size(), 2u);
  EXPECT_EQ(server.requests[0], std::string("GET ") + kLeasePath);
  EXPECT_EQ(server.requests[1], std::string("POST ") + kLeasesPath);
  ASSERT_TRUE(server.lease);
  EXPECT_EQ(server.lease->holder, "a_1");
  EXPECT_EQ(server.lease->duration, 15);
  EXPECT_EQ(server.lease->transitions, 0);
  EXPECT_EQ(server.lease->acquireTime, server.lease->renewTime);
  EXPECT_EQ(server.lease->renewTime.size(), 27u) << server.lease->renewTime;  // 2026-12-06T06:10:38.123456Z
  EXPECT_EQ(events, (std::vector<std::string>{"holder a_1", "started"}));
}

TEST_F(LeaderElection, RenewsEveryRetryPeriodWithTheResourceVersionRead) {
  auto e = make("a_1");
  e->start();
  const std::string acquired = server.lease->acquireTime;
  const uint64_t rv = server.lease->rv;
  for (int i = 0; i < 5; ++i) clock.advance(2000);
  EXPECT_TRUE(e->leading());
  EXPECT_EQ(server.lease->rv, rv + 5);  // one PUT per retry period, none refused
  EXPECT_EQ(server.conflicts, 0);
  EXPECT_EQ(server.lease->acquireTime, acquired);  // kept while the holder stays
  EXPECT_EQ(server.lease->transitions, 0);
  EXPECT_EQ(server.requests.back(), std::string("PUT ") + kLeasePath);
  EXPECT_EQ(events, (std::vector<std::string>{"holder a_1", "started"}));
}

TEST_F(LeaderElection, StopsLeadingWhenNoRenewalSucceedsWithinTheRenewDeadline) {
  auto e = make("a_1");
  e->start();
  server.down = true;  // every exchange fails from now on
  clock.advance(9999);  // the last successful write was sent at t0; the deadline is t0 + 10 s
  EXPECT_TRUE(e->leading());
  clock.advance(1);
  EXPECT_FALSE(e->leading());
  EXPECT_EQ(events.back(), "stopped");
}

TEST_F(LeaderElection, StopsAtTheRenewDeadlineEvenWhileARequestHangs) {
  auto e = make("a_1");
  e->start();
  server.hold = true;  // kube-apiserver accepts requests and never answers
  clock.advance(10000);
  EXPECT_FALSE(e->leading());
  EXPECT_EQ(events.back(), "stopped");
  EXPECT_GE(server.cancelled, 1);  // the hanging exchange was dropped
}

TEST_F(LeaderElection, CheckDeadlineStopsAStarvedLeaderBeforeItsTimerRuns) {
  auto e = make("a_1");
  e->start();
  server.hold = true;
  clock.now += 9999;  // the clock moves, no timer runs: a thread starved of CPU
  EXPECT_TRUE(e->checkDeadline());
  clock.now += 1;
  EXPECT_FALSE(e->checkDeadline());
  EXPECT_EQ(events.back(), "stopped");
}

TEST_F(LeaderElection, FollowsWhileAnotherReplicaRenewsAndTakesOverAfterExpiry) {
  server.writeAs("b_2");
  auto e = make("a_1");
  e->start();
  EXPECT_FALSE(e->leading());
  EXPECT_EQ(e->holder(), "b_2");
  // b renews every 2 s for 30 s: a never takes over.
  for (int i = 0; i < 15; ++i) {
    clock.advance(2000);
    server.writeAs("b_2");
  }
  EXPECT_FALSE(e->leading());
  EXPECT_EQ(server.conflicts, 0);  // a never even tried to write
  // b dies: the record stops changing. a takes over no earlier than 15 s after the change, and
  // no later than two of its jittered waits (retry × 2.2 = 4.4 s each) beyond that: one until it
  // reads the last change (its 15 s count from that read), one after the 15 s have passed; plus
  // this loop's 100 ms step.
  const uint64_t lastChange = clock.now;
  while (!e->leading() && clock.now < lastChange + 30000) clock.advance(100);
  ASSERT_TRUE(e->leading());
  EXPECT_GE(clock.now, lastChange + 15000);
  EXPECT_LE(clock.now, lastChange + 15000 + 2 * 4400 + 100);
  EXPECT_EQ(server.lease->holder, "a_1");
  EXPECT_EQ(server.lease->transitions, 2);  // b's takeover (writeAs), then a's
  EXPECT_EQ(server.lease->acquireTime, server.lease->renewTime);
  EXPECT_EQ(events, (std::vector<std::string>{"holder b_2", "holder a_1", "started"}));
}

TEST_F(LeaderElection, LosesAtOnceWhenAnotherHolderIsSeen) {
  auto e = make("a_1");
  e->start();
  server.writeAs("b_2");  // e.g. a long pause here let b take over
  clock.advance(2000);
  EXPECT_FALSE(e->leading());
  EXPECT_EQ(events, (std::vector<std::string>{"holder a_1", "started", "holder b_2", "stopped"}));
  EXPECT_EQ(server.lease->holder, "b_2");  // not overwritten
}

TEST_F(LeaderElection, AConflictingUpdateDoesNotAcquire) {
  server.writeAs("b_2", 1);
  auto e = make("a_1");
  e->start();
  EXPECT_FALSE(e->leading());
  // Make every GET of `a` read a version that b then replaces before a's PUT lands.
  server.hold = true;
  clock.advance(1000);  // b's 1 s lease has expired for a; wait for a's next attempt
  while (server.held.empty() && clock.timers.size() > 0) clock.advance(100);
  ASSERT_EQ(server.held.size(), 1u);  // a's GET
  server.releaseOne();                // a reads rv of b's record, sends PUT with it
  ASSERT_EQ(server.held.size(), 1u);  // a's PUT
  server.writeAs("b_2", 1);           // b renews first
  server.releaseOne();
  EXPECT_EQ(server.conflicts, 1);
  EXPECT_FALSE(e->leading());
  EXPECT_EQ(server.lease->holder, "b_2");
  EXPECT_EQ(std::count(events.begin(), events.end(), "started"), 0);
}

TEST_F(LeaderElection, TwoReplicasNeverBothLead) {
  auto a = make("a_1");
  auto b = make("b_2");
  a->start();
  b->start();
  for (int i = 0; i < 100; ++i) {
    clock.advance(500);
    ASSERT_FALSE(a->leading() && b->leading()) << "at step " << i;
  }
  EXPECT_TRUE(a->leading());
  EXPECT_FALSE(b->leading());
  EXPECT_EQ(b->holder(), "a_1");
  // a crashes (stops writing): b takes over after a lease duration.
  a->stop();
  const uint64_t crashed = clock.now;
  while (!b->leading() && clock.now < crashed + 30000) clock.advance(100);
  EXPECT_TRUE(b->leading());
  EXPECT_GE(clock.now, crashed + 15000 - 4400);  // b saw a's last renewal up to a jittered wait before
}

TEST_F(LeaderElection, ReleaseClearsTheHolderSoAFollowerTakesOverInAboutASecond) {
  auto a = make("a_1");
  auto b = make("b_2");
  a->start();
  b->start();
  clock.advance(2000);
  ASSERT_TRUE(a->leading());
  bool released = false;
  a->release([&] { released = true; });
  EXPECT_TRUE(released);
  EXPECT_FALSE(a->leading());
  EXPECT_EQ(server.lease->holder, "");
  EXPECT_EQ(server.lease->duration, 1);
  EXPECT_EQ(server.lease->transitions, 0);
  const uint64_t at = clock.now;
  while (!b->leading() && clock.now < at + 15000) clock.advance(100);
  EXPECT_TRUE(b->leading());
  EXPECT_LE(clock.now, at + 1000 + 4400 + 100);  // 1 s lease, then b's jittered wait at most
  EXPECT_EQ(server.lease->transitions, 1);
  // a made no further request after the release.
  const size_t n = server.requests.size();
  clock.advance(10000);
  for (size_t i = n; i < server.requests.size(); ++i) EXPECT_EQ(server.bodies[i].find("a_1"), std::string::npos);
}

TEST_F(LeaderElection, ReleaseWhenFollowingWritesNothing) {
  server.writeAs("b_2");
  auto a = make("a_1");
  a->start();
  const size_t n = server.requests.size();
  bool released = false;
  a->release([&] { released = true; });
  EXPECT_TRUE(released);
  EXPECT_EQ(server.requests.size(), n);
  EXPECT_EQ(server.lease->holder, "b_2");
}

TEST(LeaderElectionConfig, ValidatesLikeClientGo) {
  LeaderElectionConfig c;
  c.identity = "host_0123";
  std::string error;
  EXPECT_TRUE(validateLeaderElection(c, error)) << error;
  auto bad = [&](auto change, std::string_view words) {
    LeaderElectionConfig x = c;
    change(x);
    std::string err;
    EXPECT_FALSE(validateLeaderElection(x, err));
    EXPECT_NE(err.find(words), std::string::npos) << err;
  };
  bad([](auto& x) { x.renewDeadlineMs = 15000; }, "must be greater than --leader-elect-renew-deadline");
  bad([](auto& x) { x.retryPeriodMs = 9000; }, "1.2 × --leader-elect-retry-period");
  bad([](auto& x) { x.retryPeriodMs = 0; }, "above 0");
  bad([](auto& x) { x.leaseDurationMs = 15500; }, "whole seconds");
  bad([](auto& x) { x.leaseNamespace = "../x"; }, "--leader-elect-resource-namespace");
  bad([](auto& x) { x.leaseName = "a/b"; }, "--leader-elect-resource-name");
  bad([](auto& x) { x.identity.clear(); }, "identity");
}

TEST(LeaderElectionConfig, IdentitiesAreUnique) {
  const std::string a = leaderElectionIdentity(), b = leaderElectionIdentity();
  EXPECT_NE(a, b);
  EXPECT_EQ(a.size() - a.rfind('_'), 17u) << a;
}

}  // namespace
}  // namespace fleetsched::engine
