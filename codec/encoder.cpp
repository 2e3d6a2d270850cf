#include "codec/encoder.h"

#include <algorithm>

#include "codec/json_writer.h"

namespace fleetsched::codec {

namespace {

// Sorts by node name and drops earlier duplicates; returns the new size.
size_t sortFailed(std::vector<FailedNode>& v) {
  std::stable_sort(v.begin(), v.end(), [](const FailedNode& a, const FailedNode& b) { return a.node < b.node; });
  size_t w = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i + 1 < v.size() && v[i + 1].node == v[i].node) continue;  // a later entry wins
    v[w++] = v[i];
  }
  v.resize(w);
  return w;
}

void writeFailedMap(JsonWriter& w, std::vector<FailedNode>& v) {
  sortFailed(v);
  w.ch('{');
  bool first = true;
  for (const auto& f : v) {
    if (!first) w.ch(',');
    first = false;
    w.string(f.node);
    w.ch(':');
    w.string(f.reason);
  }
  w.ch('}');
}

size_t estimateFilterSize(const FilterResult& r) {
  size_t n = 128;
  if (r.mode == NodesMode::NodeNames) {
    for (auto s : r.nodeNames) n += s.size() + 3;
  } else {
    for (auto s : r.nodesRaw) n += s.size() + 1;
  }
  for (const auto& f : r.failedNodes) n += f.node.size() + f.reason.size() + 6;
  for (const auto& f : r.failedAndUnresolvableNodes) n += f.node.size() + f.reason.size() + 6;
  return n;
}

}  // namespace

void encodeFilterResult(FilterResult& r, std::string& out) {
  JsonWriter w(out);
  if (!r.error.empty()) {
    w.raw(R"({"Nodes":null,"NodeNames":null,"FailedNodes":null,"FailedAndUnresolvableNodes":null,"Error":)");
    w.string(r.error);
    w.ch('}');
    return;
  }
  out.reserve(out.size() + estimateFilterSize(r));
  if (r.mode == NodesMode::NodeNames) {
    w.raw(R"({"Nodes":null,"NodeNames":[)");
    for (size_t i = 0; i < r.nodeNames.size(); ++i) {
      if (i != 0) w.ch(',');
      w.string(r.nodeNames[i]);
    }
    w.raw("],");
  } else {
    w.raw(R"({"Nodes":{"metadata":{},"items":[)");
    for (size_t i = 0; i < r.nodesRaw.size(); ++i) {
      if (i != 0) w.ch(',');
      w.raw(r.nodesRaw[i]);
    }
    w.raw(R"(]},"NodeNames":null,)");
  }
  w.key("FailedNodes");
  writeFailedMap(w, r.failedNodes);
  w.ch(',');
  w.key("FailedAndUnresolvableNodes");
  writeFailedMap(w, r.failedAndUnresolvableNodes);
  w.raw(R"(,"Error":"")");
  w.ch('}');
}

void encodeHostPriorityList(std::span<const HostPriority> list, std::string& out) {
  JsonWriter w(out);
  out.reserve(out.size() + 2 + list.size() * 40);
  w.ch('[');
  for (size_t i = 0; i < list.size(); ++i) {
    if (i != 0) w.ch(',');
    w.raw(R"({"Host":)");
    w.string(list[i].host);
    w.raw(R"(,"Score":)");
    w.int64(list[i].score);
    w.ch('}');
  }
  w.ch(']');
}

void encodePreemptionResult(std::span<NodeVictims> victims, std::string& out) {
  JsonWriter w(out);
  std::stable_sort(victims.begin(), victims.end(),
                   [](const NodeVictims& a, const NodeVictims& b) { return a.node < b.node; });
  w.raw(R"({"NodeNameToMetaVictims":{)");
  bool first = true;
  for (size_t i = 0; i < victims.size(); ++i) {
    if (i + 1 < victims.size() && victims[i + 1].node == victims[i].node) continue;  // last wins
    const auto& v = victims[i];
    if (!first) w.ch(',');
    first = false;
    w.string(v.node);
    w.raw(R"(:{"Pods":[)");
    for (size_t k = 0; k < v.uids.size(); ++k) {
      if (k != 0) w.ch(',');
      w.raw(R"({"UID":)");
      w.string(v.uids[k]);
      w.ch('}');
    }
    w.raw(R"(],"NumPDBViolations":)");
    w.int64(v.numPdbViolations);
    w.ch('}');
  }
  w.raw("}}");
}

void encodeBindingResult(std::string_view error, std::string& out) {
  JsonWriter w(out);
  w.raw(R"({"Error":)");
  w.string(error);
  w.ch('}');
}

}  // namespace fleetsched::codec
