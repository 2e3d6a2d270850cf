#include "engine/reactor/router.h"

#include <gtest/gtest.h>
#include <llhttp.h>

namespace fleetsched::engine {
namespace {

using Kind = Router::Kind;

TEST(Router, NormalizesPrefixes) {
  EXPECT_EQ(normalizePrefix(""), "");
  EXPECT_EQ(normalizePrefix("/"), "");
  EXPECT_EQ(normalizePrefix("/api/scheduler/"), "/api/scheduler");
  EXPECT_EQ(normalizePrefix("api/scheduler"), "/api/scheduler");
  EXPECT_EQ(normalizePrefix("http://gpu-ext.kube-system:8888/api/scheduler"), "/api/scheduler");
  EXPECT_EQ(normalizePrefix("http://127.0.0.1:8888"), "");
}

TEST(Router, RoutesTable) {
  Router r("/api/scheduler/");
  uint32_t debug = r.addGet("/debug/");
  uint32_t exact = r.addGet("/version");
  struct Case {
    uint8_t method;
    std::string_view target;
    Kind kind;
    Verb verb;
    std::string_view allow;
    uint32_t custom;
  } cases[] = {
      {HTTP_POST, "/api/scheduler/filter", Kind::kVerb, Verb::Filter, "", 0},
      {HTTP_POST, "/api/scheduler/prioritize", Kind::kVerb, Verb::Prioritize, "", 0},
      {HTTP_POST, "/api/scheduler/preempt", Kind::kVerb, Verb::Preempt, "", 0},
      {HTTP_POST, "/api/scheduler/bind?x=1", Kind::kVerb, Verb::Bind, "", 0},
      {HTTP_GET, "/api/scheduler/filter", Kind::kMethodNotAllowed, Verb::Filter, "POST", 0},
      {HTTP_POST, "/filter", Kind::kNotFound, Verb::Filter, "", 0},
      {HTTP_POST, "/api/scheduler/filterx", Kind::kNotFound, Verb::Filter, "", 0},
      {HTTP_GET, "/healthz", Kind::kHealthz, Verb::Filter, "", 0},
      {HTTP_GET, "/readyz", Kind::kReadyz, Verb::Filter, "", 0},
      {HTTP_GET, "/metrics", Kind::kMetrics, Verb::Filter, "", 0},
      {HTTP_POST, "/metrics", Kind::kMethodNotAllowed, Verb::Filter, "GET", 0},
      {HTTP_DELETE, "/healthz", Kind::kMethodNotAllowed, Verb::Filter, "GET", 0},
      {HTTP_GET, "/debug/pod/ml/train-0", Kind::kCustom, Verb::Filter, "", debug},
      {HTTP_GET, "/version", Kind::kCustom, Verb::Filter, "", exact},
      {HTTP_GET, "/version/x", Kind::kNotFound, Verb::Filter, "", 0},
      {HTTP_GET, "/", Kind::kNotFound, Verb::Filter, "", 0},
      {HTTP_POST, "http://ext:8888/api/scheduler/filter", Kind::kVerb, Verb::Filter, "", 0},
      {HTTP_GET, "http://ext:8888", Kind::kNotFound, Verb::Filter, "", 0},
      {HTTP_GET, "*", Kind::kNotFound, Verb::Filter, "", 0},
  };
  for (const auto& c : cases) {
    Router::Match m = r.match(c.method, c.target);
    EXPECT_EQ(m.kind, c.kind) << c.target;
    if (c.kind == Kind::kVerb) {
      EXPECT_EQ(m.verb, c.verb) << c.target;
    }
    EXPECT_EQ(m.allow, c.allow) << c.target;
    if (c.kind == Kind::kCustom) {
      EXPECT_EQ(m.custom, c.custom) << c.target;
    }
  }
}

TEST(Router, EmptyPrefixServesVerbsAtTheRoot) {
  Router r;
  EXPECT_EQ(r.match(HTTP_POST, "/filter").kind, Kind::kVerb);
  EXPECT_EQ(r.match(HTTP_POST, "//filter").kind, Kind::kNotFound);
}

TEST(Router, VerbNames) {
  EXPECT_EQ(verbName(Verb::Filter), "filter");
  EXPECT_EQ(verbName(Verb::Prioritize), "prioritize");
  EXPECT_EQ(verbName(Verb::Preempt), "preempt");
  EXPECT_EQ(verbName(Verb::Bind), "bind");
}

}  // namespace
}  // namespace fleetsched::engine
