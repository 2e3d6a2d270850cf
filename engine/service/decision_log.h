// DecisionLog: the last filter and prioritize decision of the most recent N pods, node by node,
// for GET /debug/pods/<namespace>/<name> (serve --debug-decisions N; 0: off).
//
// Recording is compact and runs on the request path: a verdict code per node (2 bytes) and the
// table of the request's distinct failure reasons for filter, a score per node (2 bytes) for
// prioritize. In NodeNames mode both are indexed by cache node id (an array of idLimit entries;
// names come from a table of the node set shared by every record made while it lasted, built
// once per node set); in full-Nodes mode by the request's position, with the names copied.
// Nothing is rendered until asked. Memory: about 4 bytes × nodes in the cache × N at most
// (5,000 nodes, N = 256: 5 MB), plus the reason strings and one name table per node set still
// referenced. Pods are evicted least recently decided first.
//
// Everything runs on the reactor thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace fleetsched::engine {

class DecisionLog {
 public:
  static constexpr uint16_t kPass = 0xfffe;
  static constexpr uint16_t kNotAsked = 0xffff;  // verdict and score: the request did not list the node
  static constexpr int16_t kFiltered = -1;       // score: fleetsched's filter rejected the node
  static constexpr int16_t kScoreNotAsked = -2;
  // Node names by cache node id for one node set (NodeNames mode).
  using NameTable = std::shared_ptr<const std::vector<std::string>>;

  struct Reason {
    std::string text;
    bool unresolvable = false;
  };
  // Whose entries the arrays are indexed by: cache ids (names: the node set's table) or the
  // request's positions (ownNames).
  struct Nodes {
    NameTable names;
    std::vector<std::string> ownNames;
    std::vector<std::string> unknown;  // listed names the cache does not know
    std::string_view name(size_t i) const { return names ? std::string_view((*names)[i]) : ownNames[i]; }
  };
  struct Filter {
    bool present = false;
    int64_t unixMs = 0;
    Nodes nodes;
    std::vector<uint16_t> verdict;  // kNotAsked, kPass, or an index into reasons
    std::vector<Reason> reasons;
    uint32_t asked = 0;
    uint32_t kept = 0;
  };
  struct Prioritize {
    bool present = false;
    int64_t unixMs = 0;
    Nodes nodes;
    std::vector<int16_t> score;  // kScoreNotAsked, kFiltered, or the score
  };
  struct Entry {
    std::string key;  // namespace/name
    std::string uid;
    Filter filter;
    Prioritize prioritize;
  };

  explicit DecisionLog(size_t capacity);
  size_t capacity() const { return capacity_; }
  size_t size() const { return index_.size(); }

  // The pod's entry, made the most recent (a new pod evicts the least recent when full). A
  // filter record starts a new scheduling cycle: the caller clears the prioritize record.
  Entry& touch(std::string_view podNamespace, std::string_view podName, std::string_view uid);
  const Entry* find(std::string_view podNamespace, std::string_view podName) const;

  // The entry as JSON, node by node (nodes sorted by name).
  static void render(const Entry& e, std::string& out);

 private:
  size_t capacity_;
  std::vector<Entry> slots_;
  // Least recently decided first: a doubly linked list over slot indexes.
  std::vector<uint32_t> prev_, next_;
  uint32_t head_ = kNone, tail_ = kNone;
  static constexpr uint32_t kNone = 0xffffffff;
  std::unordered_map<std::string, uint32_t> index_;
  std::string key_;  // scratch

  void unlink(uint32_t s);
  void pushBack(uint32_t s);
};

}  // namespace fleetsched::engine
