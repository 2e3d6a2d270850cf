// The list/watch state machine against recorded apiserver exchanges: events split across
// chunks, bookmarks, ERROR 410, 410 on a continue token, streaming-list fallback, 401 with a
// token reload, and resuming from the last resourceVersion.
#include "apiclient/reflector.h"

#include <gtest/gtest.h>
#include <simdjson.h>

#include <deque>
#include <map>
#include <set>

namespace fleetsched::apiclient {
namespace {

struct Exchange {
  Transport::Id id;
  Request req;
  ResponseHandler h;
  bool cancelled = false;
};

class FakeTransport : public Transport {
 public:
  Id start(Request req, ResponseHandler h) override {
    exchanges.push_back({++next, std::move(req), std::move(h)});
    return next;
  }
  void cancel(Id id) override {
    for (auto& e : exchanges) {
      if (e.id == id) e.cancelled = true;
    }
  }
  Exchange& last() { return exchanges.back(); }
  // Answers the newest exchange.
  void reply(int status, const std::vector<std::string>& chunks, bool end = true, std::string error = "") {
    Exchange& e = last();
    ASSERT_FALSE(e.cancelled);
    Transport::Id id = e.id;
    ResponseHandler h = e.h;  // copy: callbacks may start new exchanges
    h.onStatus(status);
    for (const auto& c : chunks) {
      if (isCancelled(id)) return;
      h.onData(c);
    }
    if (end && !isCancelled(id)) h.onDone(error);
  }
  bool isCancelled(Id id) const {
    for (const auto& e : exchanges) {
      if (e.id == id) return e.cancelled;
    }
    return true;
  }
  std::deque<Exchange> exchanges;
  Id next = 0;
};

class FakeScheduler : public Scheduler {
 public:
  void after(uint32_t delayMs, std::function<void()> fn) override { pending.push_back({delayMs, std::move(fn)}); }
  uint64_t nowMs() const override { return now; }
  uint64_t now = 1000;
  // Runs what is due (everything, in order); returns the delays seen.
  std::vector<uint32_t> runAll() {
    std::vector<uint32_t> delays;
    while (!pending.empty()) {
      auto [d, fn] = std::move(pending.front());
      pending.pop_front();
      delays.push_back(d);
      fn();
    }
    return delays;
  }
  std::deque<std::pair<uint32_t, std::function<void()>>> pending;
};

// A store of name → resourceVersion with the relist semantics a real sink has.
class RecordingSink : public ReflectorSink {
 public:
  void beginRelist() override {
    ++relists;
    seen.clear();
    inRelist = true;
  }
  ListPageInfo applyListPage(std::string_view body) override {
    ListPageInfo info;
    simdjson::dom::element doc;
    if (parser.parse(body.data(), body.size(), false).get(doc)) {
      info.error = "bad json";
      return info;
    }
    for (auto item : doc["items"].get_array()) add(std::string(item["metadata"]["name"].get_string().value()),
                                                   std::string(item["metadata"]["resourceVersion"].get_string().value()));
    info.ok = true;
    info.resourceVersion = std::string(doc["metadata"]["resourceVersion"].get_string().value());
    std::string_view cont;
    if (!doc["metadata"]["continue"].get_string().get(cont)) info.continueToken = std::string(cont);
    return info;
  }
  void endRelist() override {
    for (auto it = store.begin(); it != store.end();) {
      it = seen.count(it->first) ? std::next(it) : store.erase(it);
    }
    inRelist = false;
    ++completed;
  }
  void abortRelist() override {
    inRelist = false;
    ++aborted;
  }
  WatchEventInfo applyEvent(std::string_view line) override {
    WatchEventInfo e;
    simdjson::dom::element doc;
    if (parser.parse(line.data(), line.size(), false).get(doc)) {
      e.type = WatchEventInfo::Type::Invalid;
      return e;
    }
    std::string_view type = doc["type"].get_string().value();
    auto obj = doc["object"];
    if (type == "ERROR") {
      e.type = WatchEventInfo::Type::Error;
      e.code = static_cast<int32_t>(obj["code"].get_int64().value());
      e.reason = std::string(obj["reason"].get_string().value());
      return e;
    }
    std::string name;
    std::string_view sv;
    if (!obj["metadata"]["name"].get_string().get(sv)) name = std::string(sv);
    e.resourceVersion = std::string(obj["metadata"]["resourceVersion"].get_string().value());
    if (type == "ADDED" || type == "MODIFIED") {
      e.type = type == "ADDED" ? WatchEventInfo::Type::Added : WatchEventInfo::Type::Modified;
      add(name, e.resourceVersion);
    } else if (type == "DELETED") {
      e.type = WatchEventInfo::Type::Deleted;
      store.erase(name);
    } else if (type == "BOOKMARK") {
      e.type = WatchEventInfo::Type::Bookmark;
      std::string_view end;
      e.initialEventsEnd =
          !obj["metadata"]["annotations"]["k8s.io/initial-events-end"].get_string().get(end) && end == "true";
    }
    return e;
  }
  void add(const std::string& name, const std::string& rv) {
    store[name] = rv;
    seen.insert(name);
  }
  simdjson::dom::parser parser;
  std::map<std::string, std::string> store;
  std::set<std::string> seen;
  bool inRelist = false;
  int relists = 0, completed = 0, aborted = 0;
};

std::string page(const std::vector<std::pair<std::string, std::string>>& items, const std::string& rv,
                 const std::string& cont = "") {
  std::string s = R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":")" + rv + "\"";
  if (!cont.empty()) s += R"(,"continue":")" + cont + "\"";
  s += R"(},"items":[)";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) s += ",";
    s += R"({"metadata":{"name":")" + items[i].first + R"(","resourceVersion":")" + items[i].second + "\"}}";
  }
  return s + "]}";
}

std::string event(const std::string& type, const std::string& name, const std::string& rv) {
  return R"({"type":")" + type + R"(","object":{"kind":"Pod","metadata":{"name":")" + name +
         R"(","resourceVersion":")" + rv + "\"}}}\n";
}

const std::string kExpired =
    R"x({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 1000 (2000)","reason":"Expired","code":410}})x"
    "\n";

struct Fixture {
  explicit Fixture(bool streaming = false) {
    cfg.resource = "pods";
    cfg.path = "/api/v1/pods";
    cfg.fieldSelector = "status.phase%21%3DSucceeded";
    cfg.pageSize = 2;
    cfg.streamingList = streaming;
    reflector = std::make_unique<Reflector>(cfg, transport, scheduler, sink);
  }
  ReflectorConfig cfg;
  FakeTransport transport;
  FakeScheduler scheduler;
  RecordingSink sink;
  std::unique_ptr<Reflector> reflector;
};

TEST(Reflector, PagedListThenWatchFromListVersion) {
  Fixture f;
  f.reflector->start();
  EXPECT_EQ(f.transport.last().req.path, "/api/v1/pods?limit=2&fieldSelector=status.phase%21%3DSucceeded");
  f.transport.reply(200, {page({{"a", "5"}, {"b", "6"}}, "10", "tok1")});
  EXPECT_EQ(f.transport.last().req.path,
            "/api/v1/pods?limit=2&fieldSelector=status.phase%21%3DSucceeded&continue=tok1");
  EXPECT_FALSE(f.reflector->stats().synced.load());
  f.transport.reply(200, {page({{"c", "7"}}, "10")});
  EXPECT_TRUE(f.reflector->stats().synced.load());
  EXPECT_EQ(f.sink.store.size(), 3u);
  const std::string& w = f.transport.last().req.path;
  EXPECT_NE(w.find("watch=1"), std::string::npos);
  EXPECT_NE(w.find("allowWatchBookmarks=true"), std::string::npos);
  EXPECT_NE(w.find("resourceVersion=10"), std::string::npos);
  EXPECT_NE(w.find("fieldSelector=status.phase%21%3DSucceeded"), std::string::npos);
}

TEST(Reflector, ResyncListsAgainAndReportsOnceApplied) {
  // What a new leader waits for before it binds: a fresh list (no resourceVersion, so a
  // consistent read), applied in full, even when its first try fails.
  for (bool streaming : {false, true}) {
    SCOPED_TRACE(streaming ? "streaming list" : "paged list");
    Fixture f(streaming);
    f.reflector->start();
    if (streaming) {
      f.transport.reply(200, {R"({"type":"BOOKMARK","object":{"kind":"Pod","metadata":{"resourceVersion":"10",)"
                              R"("annotations":{"k8s.io/initial-events-end":"true"}}}})" "\n"},
                        /*end=*/false);
    } else {
      f.transport.reply(200, {page({{"a", "5"}}, "10")});
    }
    ASSERT_TRUE(f.reflector->watching());
    const Transport::Id watch = f.transport.last().id;
    int done = 0;
    f.reflector->resync([&] { ++done; });
    EXPECT_TRUE(f.transport.isCancelled(watch));
    const std::string& path = f.transport.last().req.path;
    if (streaming) {
      EXPECT_NE(path.find("sendInitialEvents=true&resourceVersionMatch=NotOlderThan&resourceVersion=&"),
                std::string::npos) << path;
    } else {
      EXPECT_EQ(path.find("resourceVersion"), std::string::npos) << path;
    }
    f.transport.reply(500, {}, true);  // the first try fails: backoff, then again
    EXPECT_EQ(done, 0);
    f.scheduler.runAll();
    if (streaming) {
      f.transport.reply(200, {event("ADDED", "b", "30"),
                              R"({"type":"BOOKMARK","object":{"kind":"Pod","metadata":{"resourceVersion":"31",)"
                              R"("annotations":{"k8s.io/initial-events-end":"true"}}}})" "\n"},
                        /*end=*/false);
    } else {
      f.transport.reply(200, {page({{"b", "30"}}, "31")});
    }
    EXPECT_EQ(done, 1);
    EXPECT_EQ(f.sink.store.size(), 1u);  // a vanished in the new list
    EXPECT_EQ(f.sink.store.count("b"), 1u);
    EXPECT_TRUE(f.reflector->watching());
  }
}

TEST(Reflector, EventsSplitAcrossChunksAndBookmarksAdvanceVersion) {
  Fixture f;
  f.reflector->start();
  f.transport.reply(200, {page({{"a", "5"}}, "10")});
  std::string stream = event("ADDED", "x", "11") + event("MODIFIED", "a", "12") + event("DELETED", "x", "13") +
                       R"({"type":"BOOKMARK","object":{"kind":"Pod","metadata":{"resourceVersion":"20"}}})" "\n";
  std::vector<std::string> chunks;
  for (size_t i = 0; i < stream.size(); i += 7) chunks.push_back(stream.substr(i, 7));
  f.transport.reply(200, chunks, /*end=*/true);  // the watch times out normally afterwards
  EXPECT_EQ(f.sink.store.size(), 1u);
  EXPECT_EQ(f.sink.store["a"], "12");
  EXPECT_EQ(f.reflector->lastResourceVersion(), "20");
  // Normal end: resume from the bookmark's version at once, no relist.
  EXPECT_NE(f.transport.last().req.path.find("resourceVersion=20"), std::string::npos);
  EXPECT_EQ(f.sink.relists, 1);
  EXPECT_EQ(f.reflector->stats().events[3].load(), 1u);
}

TEST(Reflector, ErrorExpiredEventRelistsAndDropsVanishedObjects) {
  Fixture f;
  f.reflector->start();
  f.transport.reply(200, {page({{"a", "5"}, {"b", "6"}}, "10")});
  f.transport.reply(200, {event("MODIFIED", "a", "11"), kExpired, event("ADDED", "ghost", "99")}, false);
  EXPECT_FALSE(f.sink.store.count("ghost"));  // nothing after the ERROR is applied
  f.scheduler.runAll();
  EXPECT_TRUE(f.transport.exchanges[1].cancelled);
  EXPECT_EQ(f.transport.last().req.path.find("watch"), std::string::npos);  // a list again
  f.transport.reply(200, {page({{"a", "30"}}, "31")});
  EXPECT_EQ(f.sink.relists, 2);
  EXPECT_EQ(f.sink.store.size(), 1u);  // b was deleted while we were away
  EXPECT_EQ(f.reflector->stats().expired.load(), 1u);
  EXPECT_NE(f.transport.last().req.path.find("resourceVersion=31"), std::string::npos);
}

TEST(Reflector, GoneOnWatchStartRelists) {
  Fixture f;
  f.reflector->start();
  f.transport.reply(200, {page({{"a", "5"}}, "10")});
  f.transport.reply(410, {R"({"kind":"Status","code":410,"reason":"Expired"})"});
  EXPECT_EQ(f.transport.last().req.path, "/api/v1/pods?limit=2&fieldSelector=status.phase%21%3DSucceeded");
  EXPECT_EQ(f.sink.relists, 2);
}

TEST(Reflector, ExpiredContinueTokenRestartsTheList) {
  Fixture f;
  f.reflector->start();
  f.transport.reply(200, {page({{"a", "5"}, {"b", "6"}}, "10", "tok")});
  f.transport.reply(410, {R"({"kind":"Status","code":410,"reason":"Expired"})"});
  EXPECT_EQ(f.transport.last().req.path.find("continue="), std::string::npos);
  f.transport.reply(200, {page({{"b", "8"}}, "12")});
  EXPECT_TRUE(f.reflector->stats().synced.load());
  // The first page's objects count only if the restarted list still has them.
  EXPECT_EQ(f.sink.store.count("a"), 0u);
  EXPECT_EQ(f.sink.store["b"], "8");
}

TEST(Reflector, FailuresBackOffWithGrowingDelaysAndResumeTheWatch) {
  Fixture f;
  f.reflector->start();
  f.transport.reply(200, {page({{"a", "5"}}, "10")});
  f.transport.reply(200, {event("MODIFIED", "a", "15")}, true, "Connection reset by peer");
  ASSERT_EQ(f.scheduler.pending.size(), 1u);
  uint32_t first = f.scheduler.pending.front().first;
  f.scheduler.runAll();
  EXPECT_NE(f.transport.last().req.path.find("resourceVersion=15"), std::string::npos);
  f.transport.reply(500, {"oops"});
  ASSERT_EQ(f.scheduler.pending.size(), 1u);
  uint32_t second = f.scheduler.pending.front().first;
  EXPECT_GE(first, f.cfg.backoffInitialMs);
  EXPECT_GE(second, 2 * f.cfg.backoffInitialMs);
  EXPECT_EQ(f.reflector->stats().failures.load(), 2u);
  EXPECT_EQ(f.sink.relists, 1);
}

// failingSinceMs: the time of the first failure in a row, kept through further failures, cleared
// when a watch is accepted again (or a list completes).
TEST(Reflector, FailingSinceMarksTheFirstFailureUntilAWatchIsAcceptedAgain) {
  Fixture f;
  f.reflector->start();
  f.transport.reply(200, {page({{"a", "5"}}, "10")});
  EXPECT_EQ(f.reflector->stats().failingSinceMs.load(), 0u);
  f.scheduler.now = 5000;
  f.transport.reply(200, {event("MODIFIED", "a", "15")}, true, "Connection reset by peer");
  EXPECT_EQ(f.reflector->stats().failingSinceMs.load(), 5000u);
  f.scheduler.now = 9000;
  f.scheduler.runAll();
  f.transport.reply(503, {"unavailable"});
  EXPECT_EQ(f.reflector->stats().failingSinceMs.load(), 5000u);  // still the first
  f.scheduler.runAll();
  f.transport.reply(200, {event("MODIFIED", "a", "16")}, false);  // the watch is back, held open
  EXPECT_EQ(f.reflector->stats().failingSinceMs.load(), 0u);
  // A failed relist is a failure too; the completed list clears it.
  f.scheduler.now = 20000;
  f.transport.reply(200, {kExpired}, false);
  f.scheduler.runAll();
  f.transport.reply(500, {"oops"});
  EXPECT_EQ(f.reflector->stats().failingSinceMs.load(), 20000u);
  f.scheduler.runAll();
  f.transport.reply(200, {page({{"a", "17"}}, "30")});
  EXPECT_EQ(f.reflector->stats().failingSinceMs.load(), 0u);
}

TEST(Reflector, UnauthorizedReloadsTokenBeforeRetrying) {
  Fixture f;
  int reloads = 0;
  f.reflector->setOnUnauthorized([&] { ++reloads; });
  f.reflector->start();
  f.transport.reply(401, {R"({"kind":"Status","code":401})"});
  EXPECT_EQ(reloads, 1);
  f.scheduler.runAll();
  f.transport.reply(200, {page({{"a", "5"}}, "10")});
  EXPECT_TRUE(f.reflector->stats().synced.load());
}

TEST(Reflector, StreamingListSyncsAtTheInitialEventsEndBookmark) {
  Fixture f(/*streaming=*/true);
  f.sink.store["stale"] = "1";
  f.reflector->start();
  const std::string& p = f.transport.last().req.path;
  EXPECT_NE(p.find("sendInitialEvents=true"), std::string::npos);
  EXPECT_NE(p.find("resourceVersionMatch=NotOlderThan"), std::string::npos);
  f.transport.reply(200,
                    {event("ADDED", "a", "5"), event("ADDED", "b", "6"),
                     R"({"type":"BOOKMARK","object":{"kind":"Pod","metadata":{"resourceVersion":"9","annotations":{"k8s.io/initial-events-end":"true"}}}})"
                     "\n",
                     event("ADDED", "c", "10")},
                    false);
  EXPECT_TRUE(f.reflector->stats().synced.load());
  EXPECT_EQ(f.sink.store.size(), 3u);  // stale dropped at the bookmark; c arrived after
  EXPECT_FALSE(f.sink.store.count("stale"));
  EXPECT_EQ(f.reflector->lastResourceVersion(), "10");
}

TEST(Reflector, StreamingListRejectedFallsBackToPagedList) {
  Fixture f(/*streaming=*/true);
  f.reflector->start();
  f.transport.reply(422, {R"({"kind":"Status","code":422,"reason":"Invalid"})"});
  EXPECT_FALSE(f.reflector->streamingListSupported());
  EXPECT_EQ(f.transport.last().req.path, "/api/v1/pods?limit=2&fieldSelector=status.phase%21%3DSucceeded");
  f.transport.reply(200, {page({{"a", "5"}}, "10")});
  EXPECT_TRUE(f.reflector->stats().synced.load());
  EXPECT_EQ(f.sink.aborted, 1);
}

TEST(Reflector, UnreadableEventForcesResync) {
  Fixture f;
  f.reflector->start();
  f.transport.reply(200, {page({{"a", "5"}}, "10")});
  f.transport.reply(200, {"{not json\n"}, false);
  f.scheduler.runAll();
  EXPECT_EQ(f.transport.last().req.path.find("watch"), std::string::npos);
  EXPECT_EQ(f.sink.relists, 2);
}

}  // namespace
}  // namespace fleetsched::apiclient
