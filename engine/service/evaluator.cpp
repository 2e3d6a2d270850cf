#include "engine/service/evaluator.h"

#include <uv.h>

#include <algorithm>
#include <ctime>

#include "log/log.h"
#include "plugins/interpretation.h"

namespace fleetsched::engine {
namespace {

constexpr std::string_view kUnknownNode = "node not found in fleetsched's cache";

// Copies what the cache knows about a node (use, reservations, zone id) onto a record built
// from a request's Node object.
void overlayKnown(const plugins::NodeInfo& known, plugins::NodeInfo& n) {
  n.id = known.id;
  n.zone = known.zone;
  n.usedMilliCpu = known.usedMilliCpu;
  n.usedMemory = known.usedMemory;
  n.usedPods = known.usedPods;
  if (known.gpuCount == n.gpuCount) n.gpuUsedMilli = known.gpuUsedMilli;
  for (uint8_t i = 0; i < n.scalarCount; ++i) {
    if (const plugins::ScalarResource* s = known.scalar(n.scalars[i].name)) n.scalars[i].used = s->used;
  }
}

codec::FilterReason reasonOf(const plugins::Status& s) {
  return {s.reason, s.code == plugins::Code::UnschedulableAndUnresolvable ? codec::FailedMap::Unresolvable
                                                                           : codec::FailedMap::Failed};
}

int64_t unixMillis() {
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  return int64_t{now.tv_sec} * 1000 + now.tv_nsec / 1'000'000;
}

}  // namespace

Evaluator::Evaluator(const plugins::Config& config, plugins::Interpretation interpretation, size_t maxBodyBytes,
                     bool nodeMemo)
    : config_(config), decoder_(maxBodyBytes), builder_(std::move(interpretation)) {
  decoder_.setNodeMemo(nodeMemo);
}

void Evaluator::run(ExtenderRequest& req, const cache::Snapshot& snap) {
  req.status = 200;
  req.response.clear();
  outcome_ = Outcome{};
  if (req.verb == Verb::Prioritize) {
    prioritize(req, snap);
  } else {
    filter(req, snap);
  }
}

void Evaluator::stamp(uint64_t start, uint64_t parsed, uint64_t decided) {
  outcome_.startNs = start;
  outcome_.parsedNs = parsed;
  outcome_.decidedNs = decided;
  outcome_.encodedNs = uv_hrtime();
}

void Evaluator::badRequest(ExtenderRequest& req) {
  req.status = decoder_.error() == codec::DecodeError::TooLarge ? 413 : 400;
  req.response = std::string(verbName(req.verb)) + ": " + decoder_.errorMessage() + "\n";
}

bool Evaluator::decodeArgs(ExtenderRequest& req, const cache::Snapshot& snap) {
  nodes_ = {};
  nodeIds_ = {};
  inputIndex_ = {};
  unknown_ = {};
  if (!decoder_.decodeExtenderArgs(req.body, args_)) {
    badRequest(req);
    return false;
  }
  if (args_.mode() == codec::NodesMode::NodeNames) {
    refreshNames(snap);
    resolveNames(snap);
    nodes_ = ownNodes_;
    nodeIds_ = ownNodeIds_;
    inputIndex_ = ownInputIndex_;
    unknown_ = ownUnknown_;
  } else {
    outcome_.reusedNodes = decoder_.reusedNodes();
    requestNodes_.resize(args_.nodes.size());
    ownNodes_.clear();
    ownInputIndex_.clear();
    for (uint32_t i = 0; i < args_.nodes.size(); ++i) {
      const codec::Node& src = args_.nodes[i];
      plugins::NodeInfo& n = requestNodes_[i];
      n = plugins::NodeInfo{};
      builder_.build(src, n);
      n.name = src.name;
      n.labels = &src.labels;
      n.taints = &src.taints;
      if (const plugins::NodeInfo* known = snap.find(src.name)) {
        overlayKnown(*known, n);
      } else {
        // Zone ids are the cache's; a node it has never seen has no pods it could count.
        n.zone = 0;
      }
      ownNodes_.push_back(&n);
      ownInputIndex_.push_back(i);
    }
    nodes_ = ownNodes_;
    inputIndex_ = ownInputIndex_;
  }
  outcome_.decoded = true;
  outcome_.nodes = nodes_.size();
  outcome_.unknownNodes = unknown_.size();
  return true;
}

void Evaluator::refreshNames(const cache::Snapshot& snap) {
  // Once per node set: pod events and reservations publish new snapshots with the same one.
  if (names_.describes(snap.nameSetVersion())) return;
  std::vector<uint32_t> ids;
  std::vector<std::string_view> names;
  for (uint32_t id = 0; id < snap.idLimit(); ++id) {
    if (const plugins::NodeInfo* n = snap.node(id)) {
      ids.push_back(id);
      names.push_back(n->name);
    }
  }
  names_.build(snap.nameSetVersion(), snap.idLimit(), ids, names);
}

void Evaluator::resolveNames(const cache::Snapshot& snap) {
  // Every name, every request: kube-scheduler's parallel filter lists the nodes in a different
  // order for each pod, so there is no previous list worth comparing with (see
  // tools/loadgen/kube_order.h).
  ownNodes_.clear();
  ownNodeIds_.clear();
  ownInputIndex_.clear();
  ownUnknown_.clear();
  const std::vector<std::string_view>& list = args_.nodeNames;
  listIds_.resize(list.size());
  names_.findAll(list, listIds_);
  for (uint32_t i = 0; i < list.size(); ++i) {
    const uint32_t id = listIds_[i];
    const plugins::NodeInfo* n = id == codec::NodeNameTable::kNoId ? nullptr : snap.node(id);
    if (n != nullptr) {
      ownNodes_.push_back(n);
      ownNodeIds_.push_back(id);
      ownInputIndex_.push_back(i);
    } else {
      ownUnknown_.push_back(list[i]);
    }
  }
}

plugins::NodeBatch Evaluator::runFilter(const plugins::Profile& profile, const cache::Snapshot& snap) {
  // NodeNames: the snapshot's rows by node id; full Nodes: rows built for the request's records.
  cycle_.begin(profile, args_.pod, snap);
  const plugins::NodeBatch batch = args_.mode() == codec::NodesMode::NodeNames
                                       ? plugins::NodeBatch{nodes_, nodeIds_, &rows_.refresh(snap, profile.gpuResources())}
                                       : cycle_.batch(nodes_);
  verdict_ = cycle_.filter(batch);
  return batch;
}

bool Evaluator::nominatedRetry(size_t i) const {
  const plugins::Verdict v = verdict_[i];
  return v != plugins::kPass && cycle_.failure(v).code == plugins::Code::Unschedulable &&
         !args_.pod.nominatedNodeName.empty() && nodes_[i]->name == args_.pod.nominatedNodeName;
}

void Evaluator::gatherPassed() {
  // Kept nodes in the request's order, gathered without a branch per node.
  const size_t n = verdict_.size();
  passedIds_.resize(n + 1);
  size_t kept = 0;
  for (size_t i = 0; i < n; ++i) {
    passedIds_[kept] = nodeIds_[i];
    kept += verdict_[i] == plugins::kPass;
  }
  // A preemptor is retried on its nominated node as soon as kube-scheduler's informer has seen
  // the victims go; fleetsched's watch may be milliseconds behind. Rejecting the node then for
  // "not enough free" makes kube-scheduler preempt again elsewhere (async preemption, victims
  // without grace period), so trust it for that node; the binder re-checks before binding.
  if (!args_.pod.nominatedNodeName.empty()) {
    for (size_t i = 0; i < n; ++i) {
      if (nominatedRetry(i)) {
        verdict_[i] = plugins::kPass;
        passedIds_[kept++] = nodeIds_[i];
      }
    }
  }
  passedIds_.resize(kept);
}

void Evaluator::encodeNodeNamesFilter(codec::Buffer& out) {
  const plugins::FailureCodes& failures = cycle_.failures();
  reasons_.assign(failures.size() + 1, codec::FilterReason{});  // code kPass: no reason
  for (plugins::Verdict code = 1; code <= failures.size(); ++code) reasons_[code] = reasonOf(failures.status(code));
  codec::encodeNodeNamesFilter(
      names_, codec::NodeNamesVerdicts<uint32_t>{nodeIds_, verdict_, reasons_, passedIds_, unknown_, kUnknownNode}, out);
}

void Evaluator::filter(ExtenderRequest& req, const cache::Snapshot& snap) {
  const uint64_t t0 = uv_hrtime();
  if (!decodeArgs(req, snap)) return;
  const uint64_t parsed = uv_hrtime();

  const plugins::Profile& profile = config_.profileFor(args_.pod);
  runFilter(profile, snap);
  if (args_.mode() == codec::NodesMode::NodeNames) {
    gatherPassed();
    const uint64_t decided = uv_hrtime();
    encodeNodeNamesFilter(req.response);
    stamp(t0, parsed, decided);
    return;
  }

  codec::FilterResult& r = filterResult_;
  r.nodesRaw.clear();
  r.failedNodes.clear();
  r.failedAndUnresolvableNodes.clear();
  r.error = {};
  auto pass = [&](size_t i) { r.nodesRaw.push_back(args_.nodes[inputIndex_[i]].raw); };
  for (uint32_t i = 0; i < verdict_.size(); ++i) {
    if (verdict_[i] == plugins::kPass) pass(i);
  }
  for (uint32_t i = 0; i < verdict_.size(); ++i) {
    if (verdict_[i] == plugins::kPass) continue;
    if (nominatedRetry(i)) {  // see gatherPassed
      verdict_[i] = plugins::kPass;
      pass(i);
      continue;
    }
    const plugins::Status& s = cycle_.failure(verdict_[i]);
    codec::FailedNode f{nodes_[i]->name, s.reason};
    if (s.code == plugins::Code::UnschedulableAndUnresolvable) {
      r.failedAndUnresolvableNodes.push_back(f);
    } else {
      r.failedNodes.push_back(f);
    }
  }
  const uint64_t decided = uv_hrtime();

  codec::encodeFilterResult(r, req.response);
  stamp(t0, parsed, decided);
}

void Evaluator::prioritize(ExtenderRequest& req, const cache::Snapshot& snap) {
  const uint64_t t0 = uv_hrtime();
  if (!decodeArgs(req, snap)) return;
  const uint64_t parsed = uv_hrtime();

  const plugins::Profile& profile = config_.profileFor(args_.pod);
  const bool names = args_.mode() == codec::NodesMode::NodeNames;
  // Score only what fleetsched's own filter accepts, so filter and prioritize never disagree;
  // the rest scores 0 (and is not listed).
  const plugins::NodeBatch all = runFilter(profile, snap);
  const plugins::NodeBatch feasible = cycle_.feasible(all);
  inputIndexFeasible_.assign(cycle_.feasibleIndex().begin(), cycle_.feasibleIndex().end());
  feasibleScores_.assign(feasible.size(), 0);
  if (!feasible.empty()) cycle_.extenderScores(feasible, feasibleScores_);
  // Only nodes that score above 0 are listed: kube-scheduler adds each listed score × weight to
  // its node's total and nothing for an unlisted node, so the totals are the same, and a reply
  // it decodes (and allocates for) per node is shorter by every node a pod cannot use well, and
  // by every name this cache does not know.
  // Feasible positions ascend, so entries keep the request's order.
  const size_t feasibleCount = inputIndexFeasible_.size();
  size_t listed = 0;
  if (names) {
    // Every entry written, the count moved only past a score above 0: no branch per node on
    // which nodes score. The arrays only grow, so nothing is re-initialised per request.
    if (listedIds_.size() < feasibleCount) {
      listedIds_.resize(feasibleCount);
      kept_.resize(feasibleCount);
    }
    uint32_t* ids = listedIds_.data();
    int32_t* kept = kept_.data();
    for (size_t k = 0; k < feasibleCount; ++k) {
      const int32_t score = feasibleScores_[k];
      ids[listed] = nodeIds_[inputIndexFeasible_[k]];
      kept[listed] = score;
      listed += score != 0;
    }
  } else {
    priorities_.clear();
    for (size_t k = 0; k < feasibleCount; ++k) {
      if (feasibleScores_[k] != 0) priorities_.push_back({nodes_[inputIndexFeasible_[k]]->name, feasibleScores_[k]});
    }
  }
  const uint64_t decided = uv_hrtime();

  if (names) {
    codec::encodeHostScores(names_, std::span(listedIds_).first(listed), std::span(kept_).first(listed), req.response);
  } else {
    codec::encodeHostPriorityList(priorities_, req.response);
  }
  stamp(t0, parsed, decided);
}

void Evaluator::recordNodes(const cache::Snapshot& snap, DecisionLog::Nodes& out) {
  out.unknown.assign(unknown_.begin(), unknown_.end());
  if (args_.mode() == codec::NodesMode::NodeNames) {
    // Names by id, copied once per node set and shared by every record made meanwhile.
    if (!nameTable_ || nameTableVersion_ != snap.nameSetVersion()) {
      auto table = std::make_shared<std::vector<std::string>>(snap.idLimit());
      for (uint32_t id = 0; id < snap.idLimit(); ++id) {
        if (const plugins::NodeInfo* n = snap.node(id)) (*table)[id].assign(n->name);
      }
      nameTable_ = std::move(table);
      nameTableVersion_ = snap.nameSetVersion();
    }
    out.names = nameTable_;
    out.ownNames.clear();
  } else {
    out.names.reset();
    out.ownNames.resize(nodes_.size());
    for (size_t i = 0; i < nodes_.size(); ++i) out.ownNames[i].assign(nodes_[i]->name);
  }
}

void Evaluator::explainFilter(const cache::Snapshot& snap, DecisionLog* decisions) {
  // The reply's verdict per request node, as a code: kPass, or an index into explainStatuses_.
  const size_t n = nodes_.size();
  explainCodes_.resize(n);
  explainStatuses_.clear();
  uint32_t kept = 0;
  const bool names = args_.mode() == codec::NodesMode::NodeNames;
  // The verdicts already number the distinct failures (past DecisionLog's codes, the last one
  // stands for the rest). Verdicts of retried nominated nodes were turned into passes.
  const plugins::FailureCodes& failures = cycle_.failures();
  const auto codes = static_cast<plugins::Verdict>(std::min<size_t>(failures.size(), DecisionLog::kPass));
  for (plugins::Verdict code = 1; code <= codes; ++code) explainStatuses_.push_back(failures.status(code));
  for (size_t i = 0; i < n; ++i) {
    const plugins::Verdict v = verdict_[i];
    explainCodes_[i] = v == plugins::kPass ? DecisionLog::kPass : static_cast<uint16_t>(std::min(v, codes) - 1);
    kept += v == plugins::kPass;
  }

  if (decisions != nullptr) {
    DecisionLog::Entry& e = decisions->touch(args_.pod.namespace_, args_.pod.name, args_.pod.uid);
    DecisionLog::Filter& f = e.filter;
    e.prioritize.present = false;  // a new cycle: the previous prioritize belongs to the last one
    f.present = true;
    f.unixMs = unixMillis();
    f.asked = static_cast<uint32_t>(n + unknown_.size());
    f.kept = kept;
    recordNodes(snap, f.nodes);
    if (names) {
      f.verdict.assign(snap.idLimit(), DecisionLog::kNotAsked);
      for (size_t i = 0; i < n; ++i) f.verdict[nodeIds_[i]] = explainCodes_[i];
    } else {
      f.verdict.assign(explainCodes_.begin(), explainCodes_.end());
    }
    f.reasons.resize(explainStatuses_.size());
    for (size_t k = 0; k < explainStatuses_.size(); ++k) {
      f.reasons[k].text.assign(explainStatuses_[k].reason);
      f.reasons[k].unresolvable = explainStatuses_[k].code == plugins::Code::UnschedulableAndUnresolvable;
    }
  }

  if (log::enabled(kDecisionLogLevel)) {
    std::vector<uint32_t> counts(explainStatuses_.size(), 0);
    for (uint16_t c : explainCodes_) {
      if (c != DecisionLog::kPass) ++counts[c];
    }
    // Reasons by count, the most frequent first.
    std::vector<uint32_t> order;
    for (uint32_t k = 0; k < counts.size(); ++k) order.push_back(k);
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return counts[a] > counts[b]; });
    explainText_.assign(1, '{');  // not = "{": GCC 12's -Wrestrict misfires on it here
    for (uint32_t k : order) {
      if (counts[k] == 0) continue;
      if (explainText_.size() > 1) explainText_ += ',';
      log::appendJsonString(explainText_, explainStatuses_[k].reason);
      explainText_ += ':' + std::to_string(counts[k]);
    }
    if (!unknown_.empty()) {
      if (explainText_.size() > 1) explainText_ += ',';
      log::appendJsonString(explainText_, kUnknownNode);
      explainText_ += ':' + std::to_string(unknown_.size());
    }
    explainText_ += '}';
    FLOG_V(kDecisionLogLevel, "filter")
        .kv("pod", std::string(args_.pod.namespace_) + "/" + std::string(args_.pod.name))
        .kv("uid", args_.pod.uid)
        .kv("nodes", n + unknown_.size())
        .kv("kept", kept)
        .kvJson("reasons", explainText_);
  }
}

void Evaluator::explainPrioritize(const cache::Snapshot& snap, DecisionLog* decisions) {
  // Scores by request position: kFiltered unless fleetsched's filter kept the node.
  const size_t n = nodes_.size();
  explainScores_.assign(n, DecisionLog::kFiltered);
  for (size_t k = 0; k < inputIndexFeasible_.size(); ++k) {
    explainScores_[inputIndexFeasible_[k]] = static_cast<int16_t>(std::clamp(feasibleScores_[k], 0, 0x7fff));
  }
  if (decisions != nullptr) {
    DecisionLog::Entry& e = decisions->touch(args_.pod.namespace_, args_.pod.name, args_.pod.uid);
    DecisionLog::Prioritize& p = e.prioritize;
    p.present = true;
    p.unixMs = unixMillis();
    recordNodes(snap, p.nodes);
    if (args_.mode() == codec::NodesMode::NodeNames) {
      p.score.assign(snap.idLimit(), DecisionLog::kScoreNotAsked);
      for (size_t i = 0; i < n; ++i) p.score[nodeIds_[i]] = explainScores_[i];
    } else {
      p.score.assign(explainScores_.begin(), explainScores_.end());
    }
  }
  if (log::enabled(kDecisionLogLevel)) {
    // The three best, in the request's order among equals.
    std::vector<uint32_t> order(inputIndexFeasible_.size());
    for (uint32_t k = 0; k < order.size(); ++k) order[k] = k;
    const size_t top = std::min<size_t>(3, order.size());
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(top), order.end(),
                      [&](uint32_t a, uint32_t b) {
                        return feasibleScores_[a] != feasibleScores_[b] ? feasibleScores_[a] > feasibleScores_[b]
                                                                        : a < b;
                      });
    explainText_.assign(1, '{');  // not = "{": GCC 12's -Wrestrict misfires on it here
    for (size_t t = 0; t < top; ++t) {
      if (t > 0) explainText_ += ',';
      log::appendJsonString(explainText_, nodes_[inputIndexFeasible_[order[t]]]->name);
      explainText_ += ':' + std::to_string(feasibleScores_[order[t]]);
    }
    explainText_ += '}';
    FLOG_V(kDecisionLogLevel, "prioritize")
        .kv("pod", std::string(args_.pod.namespace_) + "/" + std::string(args_.pod.name))
        .kv("uid", args_.pod.uid)
        .kv("nodes", n + unknown_.size())
        .kv("feasible", inputIndexFeasible_.size())
        .kvJson("top", explainText_);
  }
}

}  // namespace fleetsched::engine
