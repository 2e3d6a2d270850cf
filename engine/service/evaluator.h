// Evaluator: decodes, decides and encodes one filter or prioritize request against a cache
// snapshot, with all the scratch that takes (the decoder and its full-Nodes memo, the request's
// node records, the scheduling cycle (plugins::Cycle), the NodeNames name table and node rows),
// kept for the next request.
//
// It reads the immutable plugins::Config and the snapshot it is given, and writes only itself
// and the request's status and response. What a request changes in the service's shared state
// (metrics, the pod ledger that bind checks, the decision log behind /debug/pods) is applied by
// ExtenderService on the reactor's loop thread from what the evaluator kept: outcome(), pod()
// and explain*(). So one Evaluator is used by one thread at a time: the service has one for the
// loop thread and one for its off-loop worker (extender_service.h), and the worker's is lent to
// the loop thread from the end of a request's evaluation until the service has finished it.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cache/cache.h"
#include "cache/node_builder.h"
#include "cache/snapshot_rows.h"
#include "codec/decoder.h"
#include "codec/encoder.h"
#include "codec/extender.h"
#include "codec/node_name_table.h"
#include "engine/reactor/handler.h"
#include "engine/service/decision_log.h"
#include "plugins/config.h"
#include "plugins/cycle.h"
#include "plugins/profile.h"

namespace fleetsched::engine {

class Evaluator {
 public:
  // At this -v level each decision is logged (explainFilter / explainPrioritize).
  static constexpr int kDecisionLogLevel = 4;

  // What the last run() did, for the service's metrics and trace line.
  struct Outcome {
    bool decoded = false;  // false: req got 400/413 and nothing else below is set
    uint64_t startNs = 0, parsedNs = 0, decidedNs = 0, encodedNs = 0;  // uv_hrtime
    size_t nodes = 0;         // request nodes the cache (or the request) resolved
    size_t unknownNodes = 0;  // NodeNames: names the cache does not know
    size_t reusedNodes = 0;   // full-Nodes: node objects copied from the decoder's memo
  };

  // nodeMemo: the decoder keeps the full-Nodes memo (codec::Decoder::setNodeMemo).
  Evaluator(const plugins::Config& config, plugins::Interpretation interpretation, size_t maxBodyBytes,
            bool nodeMemo = true);

  // Filter or prioritize: fills req.status and req.response from the request's body and `snap`.
  void run(ExtenderRequest& req, const cache::Snapshot& snap);
  const Outcome& outcome() const { return outcome_; }
  // The last request's pod (views into its body: valid while the body is).
  const codec::Pod& pod() const { return args_.pod; }

  // The last filter's / prioritize's decision node by node into `log` (when not null), and one
  // line at -v=kDecisionLogLevel. `snap` is the one run() decided on.
  void explainFilter(const cache::Snapshot& snap, DecisionLog* decisions);
  void explainPrioritize(const cache::Snapshot& snap, DecisionLog* decisions);

 private:
  void filter(ExtenderRequest& req, const cache::Snapshot& snap);
  void prioritize(ExtenderRequest& req, const cache::Snapshot& snap);
  // Decodes ExtenderArgs and resolves its nodes into nodes_ (unknown names into unknown_;
  // NodeNames mode also fills nodeIds_). Returns false after filling a 400/413 response.
  bool decodeArgs(ExtenderRequest& req, const cache::Snapshot& snap);
  void badRequest(ExtenderRequest& req);
  // The phases' end times into outcome_ (encoding ends now).
  void stamp(uint64_t start, uint64_t parsed, uint64_t decided);
  // NodeNames mode: rebuilds names_ when `snap`'s node set is not the one it describes.
  void refreshNames(const cache::Snapshot& snap);
  // NodeNames mode: resolves args_.nodeNames through names_ into the own* vectors.
  void resolveNames(const cache::Snapshot& snap);
  // The cycle's filter over nodes_ into verdict_ (failures in cycle_.failures()); returns the batch it
  // judged: the snapshot's rows in NodeNames mode, rows built for the request's nodes otherwise.
  plugins::NodeBatch runFilter(const plugins::Profile& profile, const cache::Snapshot& snap);
  // Node i failed only for want of free capacity and is the pod's nominated node (see gatherPassed).
  bool nominatedRetry(size_t i) const;
  // NodeNames filter: the kept nodes' ids into passedIds_ (reply order), nominated retries
  // turned into passes in verdict_.
  void gatherPassed();
  // NodeNames mode: the filter reply from names_ and the verdicts (codec::encodeNodeNamesFilter).
  void encodeNodeNamesFilter(codec::Buffer& out);
  // Records by cache id in NodeNames mode, by position in full-Nodes mode.
  void recordNodes(const cache::Snapshot& snap, DecisionLog::Nodes& out);

  const plugins::Config& config_;
  Outcome outcome_;
  codec::Decoder decoder_;
  codec::ExtenderArgs args_;
  codec::FilterResult filterResult_;
  std::vector<codec::HostPriority> priorities_;
  // The request's nodes, for this request only: views into the own* vectors (resolved per
  // request in NodeNames mode, built from the request's objects in Nodes mode).
  std::span<const plugins::NodeInfo* const> nodes_;
  std::span<const uint32_t> inputIndex_;  // nodes_[i] came from request node inputIndex_[i]
  std::span<const std::string_view> unknown_;
  std::span<const uint32_t> nodeIds_;  // NodeNames: nodeIds_[i] is nodes_[i]'s id
  std::vector<const plugins::NodeInfo*> ownNodes_;
  std::vector<uint32_t> ownInputIndex_;
  std::vector<uint32_t> ownNodeIds_;
  std::vector<std::string_view> ownUnknown_;
  std::vector<uint32_t> listIds_;  // NodeNames: an id or kNoNode per listed name
  // NodeNames mode: names by node set (lookup, ranks, encoded names).
  codec::NodeNameTable names_;
  cache::SnapshotRows rows_;  // the rows of the snapshot's nodes, for NodeNames mode
  std::vector<uint32_t> passedIds_;    // NodeNames filter: ids of the nodes kept, in reply order
  std::span<plugins::Verdict> verdict_;  // filter: per position, kPass or a failure code (cycle_'s)
  std::vector<codec::FilterReason> reasons_;  // what each verdict code means on the wire
  std::vector<plugins::NodeInfo> requestNodes_;  // Nodes mode
  std::vector<uint32_t> listedIds_;  // prioritize, NodeNames: the listed entries' ids
  std::vector<int32_t> kept_;        // prioritize, NodeNames: the listed entries' scores
  std::vector<uint32_t> inputIndexFeasible_;
  std::vector<int32_t> feasibleScores_;
  cache::NodeBuilder builder_;
  plugins::Cycle cycle_;
  // Decisions (explainFilter / explainPrioritize): the request's verdicts by position
  // (DecisionLog::kPass or an index into explainStatuses_), scores by position.
  DecisionLog::NameTable nameTable_;  // node names by id for nameTableVersion_'s node set
  uint64_t nameTableVersion_ = 0;
  std::vector<uint16_t> explainCodes_;
  std::vector<plugins::Status> explainStatuses_;
  std::vector<int16_t> explainScores_;
  std::string explainText_;
};

}  // namespace fleetsched::engine
