#include "engine/service/decision_log.h"

#include <algorithm>
#include <cstdio>
#include <ctime>

#include "codec/json_writer.h"

namespace fleetsched::engine {
namespace {

void appendTime(codec::JsonWriter<std::string>& w, int64_t unixMs) {
  const time_t secs = static_cast<time_t>(unixMs / 1000);
  tm utc{};
  gmtime_r(&secs, &utc);
  char text[96];
  std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900, utc.tm_mon + 1,
                utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, static_cast<int>(unixMs % 1000));
  w.string(text);
}

constexpr std::string_view kUnknownNode = "node not found in fleetsched's cache";

// Names the request asked about that the cache does not know, after the listed nodes.
void writeUnknown(codec::JsonWriter<std::string>& w, const char*& sep, const std::vector<std::string>& unknown) {
  for (const std::string& name : unknown) {
    w.raw(sep);
    sep = ",";
    w.string(name);
    w.raw(":");
    w.string(kUnknownNode);
  }
}

// The asked entries' indexes, sorted by node name.
template <class T, class Asked>
std::vector<uint32_t> askedByName(const DecisionLog::Nodes& nodes, const std::vector<T>& values, Asked asked) {
  std::vector<uint32_t> order;
  for (uint32_t i = 0; i < values.size(); ++i) {
    if (asked(values[i])) order.push_back(i);
  }
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return nodes.name(a) < nodes.name(b); });
  return order;
}

}  // namespace

DecisionLog::DecisionLog(size_t capacity)
    : capacity_(std::min<size_t>(capacity, kNone - 1)) {
  slots_.reserve(std::min<size_t>(capacity_, 4096));
}

void DecisionLog::unlink(uint32_t s) {
  if (prev_[s] != kNone) next_[prev_[s]] = next_[s]; else head_ = next_[s];
  if (next_[s] != kNone) prev_[next_[s]] = prev_[s]; else tail_ = prev_[s];
  prev_[s] = next_[s] = kNone;
}

void DecisionLog::pushBack(uint32_t s) {
  prev_[s] = tail_;
  next_[s] = kNone;
  if (tail_ != kNone) next_[tail_] = s; else head_ = s;
  tail_ = s;
}

DecisionLog::Entry& DecisionLog::touch(std::string_view podNamespace, std::string_view podName, std::string_view uid) {
  key_.assign(podNamespace).append("/").append(podName);
  uint32_t s;
  if (auto it = index_.find(key_); it != index_.end()) {
    s = it->second;
    if (s != tail_) {
      unlink(s);
      pushBack(s);
    }
  } else {
    if (slots_.size() < capacity_) {
      s = static_cast<uint32_t>(slots_.size());
      slots_.emplace_back();
      prev_.push_back(kNone);
      next_.push_back(kNone);
    } else {
      s = head_;  // the least recently decided pod
      index_.erase(slots_[s].key);
      unlink(s);
      slots_[s].filter.present = false;
      slots_[s].prioritize.present = false;
    }
    slots_[s].key = key_;
    index_.emplace(key_, s);
    pushBack(s);
  }
  Entry& e = slots_[s];
  if (e.uid != uid) e.uid.assign(uid);
  return e;
}

const DecisionLog::Entry* DecisionLog::find(std::string_view podNamespace, std::string_view podName) const {
  std::string key;
  key.append(podNamespace).append("/").append(podName);
  auto it = index_.find(key);
  return it == index_.end() ? nullptr : &slots_[it->second];
}

void DecisionLog::render(const Entry& e, std::string& out) {
  codec::JsonWriter<std::string> w(out);
  const size_t slash = e.key.find('/');
  w.raw("{");
  w.key("namespace");
  w.string(std::string_view(e.key).substr(0, slash));
  w.raw(",");
  w.key("name");
  w.string(std::string_view(e.key).substr(slash + 1));
  w.raw(",");
  w.key("uid");
  w.string(e.uid);
  if (e.filter.present) {
    const Filter& f = e.filter;
    w.raw(",");
    w.key("filter");
    w.raw("{");
    w.key("time");
    appendTime(w, f.unixMs);
    w.raw(",");
    w.key("nodes");
    w.int64(f.asked);
    w.raw(",");
    w.key("kept");
    w.int64(f.kept);
    // Each distinct reason with the number of nodes it rejected, as the -v=4 line has them.
    std::vector<uint32_t> counts(f.reasons.size(), 0);
    for (uint16_t v : f.verdict) {
      if (v < counts.size()) ++counts[v];
    }
    w.raw(",");
    w.key("reasons");
    w.raw("{");
    const char* sep = "";
    for (size_t k = 0; k < f.reasons.size(); ++k) {
      if (counts[k] == 0) continue;
      w.raw(sep);
      sep = ",";
      w.string(f.reasons[k].text);
      w.raw(":");
      w.int64(counts[k]);
    }
    if (!f.nodes.unknown.empty()) {
      w.raw(sep);
      w.string(kUnknownNode);
      w.raw(":");
      w.int64(static_cast<int64_t>(f.nodes.unknown.size()));
    }
    w.raw("},");
    // Node by node: "pass", or the reason (prefixed "unresolvable: " for a node that no
    // preemption can help: FailedAndUnresolvableNodes).
    w.key("verdicts");
    w.raw("{");
    sep = "";
    for (uint32_t i : askedByName(f.nodes, f.verdict, [](uint16_t v) { return v != kNotAsked; })) {
      w.raw(sep);
      sep = ",";
      w.string(f.nodes.name(i));
      w.raw(":");
      const uint16_t v = f.verdict[i];
      if (v == kPass) {
        w.string("pass");
      } else if (f.reasons[v].unresolvable) {
        w.string("unresolvable: " + f.reasons[v].text);
      } else {
        w.string(f.reasons[v].text);
      }
    }
    writeUnknown(w, sep, f.nodes.unknown);
    w.raw("}}");
  }
  if (e.prioritize.present) {
    const Prioritize& p = e.prioritize;
    w.raw(",");
    w.key("prioritize");
    w.raw("{");
    w.key("time");
    appendTime(w, p.unixMs);
    w.raw(",");
    // Node by node: the score (0..10, before kube-scheduler's extender weight), or why none.
    w.key("scores");
    w.raw("{");
    const char* sep = "";
    for (uint32_t i : askedByName(p.nodes, p.score, [](int16_t s) { return s != kScoreNotAsked; })) {
      w.raw(sep);
      sep = ",";
      w.string(p.nodes.name(i));
      w.raw(":");
      if (p.score[i] == kFiltered) {
        w.string("filtered out (fleetsched's filter rejects it; scored 0)");
      } else {
        w.int64(p.score[i]);
      }
    }
    writeUnknown(w, sep, p.nodes.unknown);
    w.raw("}}");
  }
  w.raw("}\n");
}

}  // namespace fleetsched::engine
