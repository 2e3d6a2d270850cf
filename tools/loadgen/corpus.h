// The load generator's request corpus (loadgen.h): the filter bodies it sends, built from the
// generator (tools/fleet) or read from an NDJSON file, with kube-scheduler's node order per pod.
#pragma once

#include <array>
#include <deque>
#include <initializer_list>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tools/apiserver/fake_apiserver.h"
#include "tools/loadgen/churn.h"
#include "tools/loadgen/loadgen.h"

namespace fleetsched::tools::loadgen {

// The request corpus: bodies are spans over shared storage (head, pod, tail), so a full-mode
// corpus of many pods costs one copy of the node list, and writes go out with writev.
struct Corpus {
  std::deque<std::string> storage;
  struct Body {
    std::array<std::string_view, kMaxParts> parts;
    size_t count = 0;
    size_t size = 0;
  };
  std::vector<Body> bodies;
  std::array<std::vector<std::string>, 2> headers;  // per verb, per body
  // Full mode: each node's object by name, for prioritize bodies of the nodes filter kept.
  std::unordered_map<std::string_view, std::string_view> wireByName;
  // With the fake API server: the whole fleet's Node objects it serves; churn: per body, the
  // pod it copies.
  apiserver::Collection apiNodes{"NodeList"};
  std::vector<PodTemplate> templates;

  std::string_view keep(std::string s) { return storage.emplace_back(std::move(s)); }
  void add(std::initializer_list<std::string_view> parts) {
    Body b;
    for (auto p : parts) {
      b.parts[b.count++] = p;
      b.size += p.size();
    }
    bodies.push_back(b);
  }
};

// Builds the corpus `o` describes; false (with `error`) when it cannot.
bool buildCorpus(const LoadgenOptions& o, Corpus& corpus, std::string& error);

}  // namespace fleetsched::tools::loadgen
