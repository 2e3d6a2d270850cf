// Explanations of decisions: the -v=4 line per filter and prioritize, and the records behind
// GET /debug/pods/<namespace>/<name> (ExtenderService::debugPod), against the demo fleet.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "cache/cache.h"
#include "cache/demo_fleet.h"
#include "engine/service/extender_service.h"
#include "log/log.h"
#include "plugins/config.h"
#include "tests/engine/test_data.h"

namespace fleetsched::engine {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kA100 = "ip-10-0-0-10.us-west-2.compute.internal";
constexpr const char* kSpot = "ip-10-0-1-22.us-west-2.compute.internal";
constexpr const char* kOneGpu = "ip-10-0-68-42.us-west-2.compute.internal";
constexpr const char* kCpuOnly = "ip-10-0-4-46.us-west-2.compute.internal";

// The README's request: a pod asking for 2 GPUs, four nodes and one name the cache lacks.
std::string filterArgs(const std::string& ns, const std::string& name, const std::string& uid) {
  return R"({"Pod":{"metadata":{"name":")" + name + R"(","namespace":")" + ns + R"(","uid":")" + uid +
         R"("},"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"4","nvidia.com/gpu":"2"}}}]}},)"
         R"("Nodes":null,"NodeNames":[")" + kA100 + R"(",")" + kSpot + R"(",")" + kOneGpu + R"(",")" + kCpuOnly +
         R"(","no-such-node"]})";
}

class DecisionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cache_.write().replaceNodes(cache::demoFleet().nodes);
    log::setSink([](std::string_view line, void* self) { static_cast<DecisionsTest*>(self)->lines_.emplace_back(line); },
                 this);
  }
  void TearDown() override {
    log::setSink(nullptr, nullptr);
    log::setVerbosity(0);
  }
  void start(size_t debugDecisions) {
    ServiceOptions o;
    o.debugDecisions = debugDecisions;
    service_ = std::make_unique<ExtenderService>(cache_, config_, metrics_, o);
  }
  std::string call(Verb verb, const std::string& body) {
    std::string padded = body;
    padded.append(kBodyPadding, '\0');
    ExtenderRequest req;
    req.verb = verb;
    req.body = std::string_view(padded.data(), body.size());
    ExtenderRequest* batch[] = {&req};
    service_->handleBatch(batch);
    EXPECT_EQ(req.status, 200) << req.response.str();
    return req.response.str();
  }
  LocalResponse get(std::string_view target) {
    LocalResponse out;
    service_->debugPod(target, out);
    return out;
  }

  cache::Cache cache_;
  plugins::Config config_ = plugins::defaultConfig();
  Metrics metrics_;
  std::unique_ptr<ExtenderService> service_;
  std::vector<std::string> lines_;
};

TEST_F(DecisionsTest, DebugPodShowsTheLastFilterNodeByNode) {
  start(4);
  call(Verb::Filter, filterArgs("ml", "train-0", "u1"));
  LocalResponse r = get("/debug/pods/ml/train-0");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.contentType, "application/json");
  EXPECT_THAT(r.body, HasSubstr(R"({"namespace":"ml","name":"train-0","uid":"u1","filter":{"time":")"));
  EXPECT_THAT(r.body, HasSubstr(R"("nodes":5,"kept":1,)"));
  EXPECT_THAT(r.body, HasSubstr(std::string("\"") + kA100 + "\":\"pass\""));
  EXPECT_THAT(r.body, HasSubstr(std::string("\"") + kSpot +
                                "\":\"unresolvable: node is spot capacity; pod is not spot-tolerant\""));
  EXPECT_THAT(r.body, HasSubstr(std::string("\"") + kOneGpu + "\":\"unresolvable: node has 1 nvidia.com/gpu, pod needs 2\""));
  EXPECT_THAT(r.body, HasSubstr(std::string("\"") + kCpuOnly + "\":\"unresolvable: node has no nvidia.com/gpu"));
  EXPECT_THAT(r.body, HasSubstr(R"("no-such-node":"node not found in fleetsched's cache")"));
  // Reasons by count, and nodes the request did not list are not shown.
  EXPECT_THAT(r.body, HasSubstr(R"("node is spot capacity; pod is not spot-tolerant":1)"));
  EXPECT_THAT(r.body, Not(HasSubstr("ip-10-0-2-")));
  EXPECT_THAT(r.body, Not(HasSubstr("prioritize")));

  // Prioritize adds the scores; nodes fleetsched's filter rejects say so.
  call(Verb::Prioritize, filterArgs("ml", "train-0", "u1"));
  r = get("/debug/pods/ml/train-0?pretty=1");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_THAT(r.body, HasSubstr(R"("prioritize":{"time":")"));
  EXPECT_THAT(r.body, ::testing::ContainsRegex(std::string("\"") + kA100 + "\":[0-9]+"));
  EXPECT_THAT(r.body, HasSubstr(std::string("\"") + kSpot + "\":\"filtered out"));

  // A new filter starts a new cycle: the old prioritize goes.
  call(Verb::Filter, filterArgs("ml", "train-0", "u2"));
  r = get("/debug/pods/ml/train-0");
  EXPECT_THAT(r.body, HasSubstr(R"("uid":"u2")"));
  EXPECT_THAT(r.body, Not(HasSubstr("prioritize")));
}

// Full-Nodes mode: the request's own Node objects are judged (not the cache), and the record
// names them as the request does.
TEST_F(DecisionsTest, DebugPodShowsAFullNodesFilterNodeByNode) {
  start(4);
  // The codec's full-Nodes request (gpu-a, gpu-b, cpu-1), its model allow-list left out so that
  // the two GPU nodes pass.
  std::string body = testdata::readFile(std::filesystem::path(testdata::dataDir()) / "codec" / "extender_args_nodes.json");
  const std::string models = R"("fleetsched.io/gpu-models":"A100|H100",)";
  ASSERT_NE(body.find(models), std::string::npos);
  body.erase(body.find(models), models.size());
  const std::string reply = call(Verb::Filter, body);
  ASSERT_THAT(reply, HasSubstr(R"("FailedAndUnresolvableNodes":{"cpu-1":"node has no nvidia.com/gpu)"));
  LocalResponse r = get("/debug/pods/ml/train-llama-0");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_THAT(r.body, HasSubstr(R"("uid":"6f1c2a9e-4b7d-4e11-9a3c-0d2b8e5f7a10","filter":{"time":")"));
  EXPECT_THAT(r.body, HasSubstr(R"("nodes":3,"kept":2,)"));
  EXPECT_THAT(r.body, HasSubstr(R"("gpu-a":"pass")"));
  EXPECT_THAT(r.body, HasSubstr(R"("gpu-b":"pass")"));
  EXPECT_THAT(r.body, HasSubstr(R"("cpu-1":"unresolvable: node has no nvidia.com/gpu)"));
  EXPECT_THAT(r.body, Not(HasSubstr("ip-10-0-")));  // the cache's fleet plays no part
}

TEST_F(DecisionsTest, KeepsTheMostRecentlyDecidedPods) {
  start(2);
  call(Verb::Filter, filterArgs("ml", "a", "ua"));
  call(Verb::Filter, filterArgs("ml", "b", "ub"));
  call(Verb::Prioritize, filterArgs("ml", "a", "ua"));  // a is now the most recent
  call(Verb::Filter, filterArgs("ml", "c", "uc"));      // evicts b
  EXPECT_EQ(get("/debug/pods/ml/a").status, 200);
  EXPECT_EQ(get("/debug/pods/ml/b").status, 404);
  EXPECT_EQ(get("/debug/pods/ml/c").status, 200);
  EXPECT_EQ(service_->decisions()->size(), 2u);
  for (int i = 0; i < 50; ++i) {
    char name[16];
    std::snprintf(name, sizeof name, "p%d", i);
    call(Verb::Filter, filterArgs("ml", name, "u"));
  }
  EXPECT_EQ(service_->decisions()->size(), 2u);
  EXPECT_EQ(get("/debug/pods/ml/p48").status, 200);
  EXPECT_EQ(get("/debug/pods/ml/p49").status, 200);
  EXPECT_EQ(get("/debug/pods/ml/a").status, 404);
}

TEST_F(DecisionsTest, BadPathsGet400UnknownPods404) {
  start(4);
  call(Verb::Filter, filterArgs("ml", "train-0", "u1"));
  for (const char* bad : {"/debug/pods/", "/debug/pods/ml", "/debug/pods/ml/", "/debug/pods//x", "/debug/pods/ML/x",
                          "/debug/pods/ml/a/b", "/debug/pods/ml/%2e%2e", "/debug/pods/ml/a b", "/debug/pods/ml/-x",
                          "/debug/pods/ml/x\x01y"}) {
    LocalResponse r = get(bad);
    EXPECT_EQ(r.status, 400) << bad << ": " << r.body;
    EXPECT_THAT(r.body, HasSubstr("want GET /debug/pods/NAMESPACE/NAME")) << bad;
  }
  LocalResponse r = get("/debug/pods/" + std::string(300, 'a') + "/x");
  EXPECT_EQ(r.status, 400);
  r = get("/debug/pods/ml/train-1");
  EXPECT_EQ(r.status, 404);
  EXPECT_THAT(r.body, HasSubstr("no decision recorded for pod ml/train-1"));
  EXPECT_THAT(r.body, HasSubstr("--debug-decisions"));
  // Absolute-form targets name the same path.
  EXPECT_EQ(get("http://localhost:8888/debug/pods/ml/train-0").status, 200);
}

TEST_F(DecisionsTest, RecordingOffAnswers404SayingHowToTurnItOn) {
  start(0);
  call(Verb::Filter, filterArgs("ml", "train-0", "u1"));
  EXPECT_EQ(service_->decisions(), nullptr);
  LocalResponse r = get("/debug/pods/ml/train-0");
  EXPECT_EQ(r.status, 404);
  EXPECT_THAT(r.body, HasSubstr("--debug-decisions"));
}

TEST_F(DecisionsTest, VerbosityFourLogsOneLinePerDecisionWithReasonsByCount) {
  start(0);
  call(Verb::Filter, filterArgs("ml", "train-0", "u1"));
  call(Verb::Prioritize, filterArgs("ml", "train-0", "u1"));
  EXPECT_TRUE(lines_.empty());  // -v=0: nothing
  log::setVerbosity(4);
  call(Verb::Filter, filterArgs("ml", "train-0", "u1"));
  call(Verb::Prioritize, filterArgs("ml", "train-0", "u1"));
  ASSERT_EQ(lines_.size(), 2u);
  EXPECT_THAT(lines_[0], HasSubstr(R"(] "filter" pod="ml/train-0" uid="u1" nodes=5 kept=1 reasons={)"));
  EXPECT_THAT(lines_[0], HasSubstr(R"("node is spot capacity; pod is not spot-tolerant":1)"));
  EXPECT_THAT(lines_[0], HasSubstr(R"("node has 1 nvidia.com/gpu, pod needs 2":1)"));
  EXPECT_THAT(lines_[0], HasSubstr(R"("node not found in fleetsched's cache":1)"));
  EXPECT_THAT(lines_[1], HasSubstr(R"(] "prioritize" pod="ml/train-0" uid="u1" nodes=5 feasible=1 top={")" +
                                   std::string(kA100) + "\":"));
}

TEST_F(DecisionsTest, ReasonsAreCountedAcrossAFleet) {
  // Every node of the demo fleet: the counts add up to the nodes that failed.
  start(1);
  std::string names;
  size_t count = 0;
  for (const auto& n : cache::demoFleet().nodes) {
    if (!names.empty()) names.push_back(',');
    names.push_back('"');
    names.append(n.name);
    names.push_back('"');
    ++count;
  }
  const std::string body =
      R"({"Pod":{"metadata":{"name":"p","namespace":"ml","uid":"u"},"spec":{"containers":[{"name":"c","resources":{"requests":{"nvidia.com/gpu":"8"}}}]}},"NodeNames":[)" +
      names + "]}";
  log::setVerbosity(4);
  call(Verb::Filter, body);
  ASSERT_EQ(lines_.size(), 1u);
  const std::string& line = lines_[0];
  const size_t kept = std::stoul(line.substr(line.find(" kept=") + 6));
  size_t sum = 0;
  const std::string reasons = line.substr(line.find("reasons={"));
  for (size_t at = reasons.find("\":"); at != std::string::npos; at = reasons.find("\":", at + 2)) {
    sum += std::stoul(reasons.substr(at + 2));
  }
  EXPECT_EQ(sum + kept, count) << line;
  EXPECT_THAT(line, HasSubstr(" nodes=" + std::to_string(count) + " "));
}

}  // namespace
}  // namespace fleetsched::engine
