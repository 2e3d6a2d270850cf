// A property of the extender service (engine/service): whatever a filter or prioritize request
// holds, a 200 reply is valid JSON, in both payload modes (full-Nodes replies echo the request's
// node objects, so their bytes come from the caller). The service answers against the cluster
// of tests/data/codec/{nodes,pods}.json (FLEETSCHED_TEST_DATA names tests/data; default: the
// relative path, scripts/fuzz.sh runs from the repository root), with decisions recorded, and
// the pod's /debug/pods record (also JSON) is checked the same way. An invalid reply traps.
#include <simdjson.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "cache/cache.h"
#include "cache/file_source.h"
#include "codec/decoder.h"
#include "engine/reactor/metrics.h"
#include "engine/service/extender_service.h"
#include "plugins/config.h"
#include "tests/fuzz/fuzz_input.h"

using namespace fleetsched;

namespace {

struct World {
  cache::Cache cache;
  plugins::Config config = plugins::defaultConfig();
  engine::Metrics metrics;
  engine::ExtenderService service{cache, config, metrics, engine::ServiceOptions{.debugDecisions = 64}};
  simdjson::dom::parser json;
  codec::Decoder podDecoder;
  codec::ExtenderArgs args;
};

World* world = nullptr;

void mustBeJson(std::string_view body, const char* what) {
  simdjson::padded_string copy(body);
  simdjson::dom::element root;
  if (auto err = world->json.parse(copy).get(root); err) {
    std::fprintf(stderr, "%s: 200 reply is not JSON (%s): %.*s\n", what, simdjson::error_message(err),
                 static_cast<int>(body.size()), body.data());
    __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* env = std::getenv("FLEETSCHED_TEST_DATA");
  const std::string dir = env ? env : "tests/data";
  world = new World;
  std::string error;
  if (!cache::loadClusterFiles(world->cache, dir + "/codec/nodes.json", dir + "/codec/pods.json", error)) {
    std::fprintf(stderr, "fuzz_service_replies: %s (set FLEETSCHED_TEST_DATA to tests/data)\n", error.c_str());
    std::abort();
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view body = fuzz::padded(data, size);
  for (engine::Verb verb : {engine::Verb::Filter, engine::Verb::Prioritize}) {
    engine::ExtenderRequest req;
    req.verb = verb;
    req.body = body;
    engine::ExtenderRequest* batch[] = {&req};
    world->service.handleBatch(batch);
    if (req.status == 200) mustBeJson(req.response.view(), verb == engine::Verb::Filter ? "filter" : "prioritize");
  }
  if (world->podDecoder.decodeExtenderArgs(body, world->args)) {
    const codec::Pod& pod = world->args.pod;
    std::string target = "/debug/pods/";
    target.append(pod.namespace_).append("/").append(pod.name);
    engine::LocalResponse out;
    world->service.debugPod(target, out);
    if (out.status == 200) mustBeJson(out.body, "/debug/pods");
  }
  return 0;
}
