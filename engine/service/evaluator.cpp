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

std::unique_lock<std::mutex> Evaluator::lockPlugins() {
  return pluginsMutex_ != nullptr ? std::unique_lock<std::mutex>(*pluginsMutex_) : std::unique_lock<std::mutex>();
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

const plugins::NodeColumns* Evaluator::columnsFor(const plugins::Profile& profile, const cache::Snapshot& snap) {
  if (!profile.hasColumnFilters()) return nullptr;
  const plugins::GpuResourceConfig& resources = profile.gpuResources();
  if (columns_.version == 0 || columns_.resources().resourceNames != resources.resourceNames) {
    columns_.reset(snap.idLimit(), resources);
    columnStamps_.clear();
  }
  if (columns_.version != snap.version() || columns_.version == 0) {
    // Only the chunks published since the rows were last refreshed: under pod churn every verb
    // sees a new version, usually with a few chunks changed (a bound pod republishes one), and
    // a pass over all 5,000 records per version would be paid again by each verb.
    const uint32_t chunks = snap.chunkCount();
    columnStamps_.resize(chunks, 0);
    for (uint32_t c = 0; c < chunks; ++c) {
      const uint64_t stamp = snap.chunkStamp(c);
      if (columnStamps_[c] == stamp) continue;
      columns_.clear(c * cache::kChunkSize, (c + 1) * cache::kChunkSize);
      snap.forEachNodeInChunk(c, [&](const plugins::NodeInfo& n) { columns_.set(n); });
      columnStamps_[c] = stamp;
    }
    columns_.version = snap.version();
  }
  return &columns_;
}

plugins::NodeSpan Evaluator::runFilter(const plugins::Profile& profile, const cache::Snapshot& snap) {
  statuses_.resize(nodes_.size());  // runFilter writes every entry
  if (args_.mode() == codec::NodesMode::NodeNames) {
    if (const plugins::NodeColumns* columns = columnsFor(profile, snap)) {
      return profile.runFilterColumns(args_.pod, state_, snap, nodes_, nodeIds_, *columns, statuses_, scratch_);
    }
  }
  return profile.runFilter(args_.pod, state_, snap, nodes_, statuses_, scratch_);
}

void Evaluator::filterByCodes(const plugins::Profile& profile, const cache::Snapshot& snap) {
  const size_t n = nodes_.size();
  verdict_.resize(n);
  const std::span<uint8_t> verdict(verdict_);
  const plugins::NodeColumns* columns = columnsFor(profile, snap);
  if (columns != nullptr &&
      profile.runFilterCodes(args_.pod, state_, snap, nodes_, nodeIds_, *columns, verdict, scratch_)) {
    failures_ = &scratch_.failures();
  } else {
    // A pod the rows cannot judge (e.g. a MIG profile): the plugins' Filter, then its statuses
    // as codes.
    runFilter(profile, snap);
    statusCodes_.clear();
    for (size_t i = 0; i < n; ++i) {
      const plugins::Status& s = statuses_[i];
      verdict[i] = s.ok() ? uint8_t{plugins::kColumnPass} : statusCodes_.code(s);
      if (verdict[i] == plugins::kColumnUndecided) {  // more distinct reasons than codes
        wideCodes();
        return;
      }
    }
    failures_ = &statusCodes_;
  }
  gatherPassed(verdict, [&](uint8_t v) {
    return v >= plugins::kColumnFailed && failures_->status(v).code == plugins::Code::Unschedulable;
  });
}

template <class Code, class Unschedulable>
void Evaluator::gatherPassed(std::span<Code> verdict, Unschedulable unschedulable) {
  // Kept nodes in the request's order, gathered without a branch per node.
  const size_t n = verdict.size();
  passedIds_.resize(n + 1);
  size_t kept = 0;
  for (size_t i = 0; i < n; ++i) {
    passedIds_[kept] = nodeIds_[i];
    kept += verdict[i] == plugins::kColumnPass;
  }
  // A preemptor is retried on its nominated node as soon as kube-scheduler's informer has seen
  // the victims go; fleetsched's watch may be milliseconds behind. Rejecting the node then for
  // "not enough free" makes kube-scheduler preempt again elsewhere (async preemption, victims
  // without grace period), so trust it for that node; the binder re-checks before binding.
  const std::string_view nominated = args_.pod.nominatedNodeName;
  if (!nominated.empty()) {
    for (size_t i = 0; i < n; ++i) {
      if (unschedulable(verdict[i]) && nodes_[i]->name == nominated) {
        verdict[i] = plugins::kColumnPass;
        passedIds_[kept++] = nodeIds_[i];
      }
    }
  }
  passedIds_.resize(kept);
}

void Evaluator::wideCodes() {
  const size_t n = nodes_.size();
  wideVerdict_.resize(n);
  for (uint32_t i = 0; i < n; ++i) {
    wideVerdict_[i] = statuses_[i].ok() ? uint32_t{plugins::kColumnPass} : plugins::kColumnFailed + i;
  }
  failures_ = nullptr;
  gatherPassed(std::span(wideVerdict_), [&](uint32_t v) {
    return v >= plugins::kColumnFailed && statuses_[v - plugins::kColumnFailed].code == plugins::Code::Unschedulable;
  });
}

void Evaluator::encodeNodeNamesFilter(codec::Buffer& out) {
  const size_t n = nodes_.size();
  if (failures_ != nullptr) {
    reasons_.assign(plugins::kColumnFailed + failures_->size(), codec::FilterReason{});
    for (size_t k = 0; k < failures_->size(); ++k) {
      const auto code = static_cast<uint8_t>(plugins::kColumnFailed + k);
      reasons_[code] = reasonOf(failures_->status(code));
    }
    codec::encodeNodeNamesFilter(
        names_, codec::NodeNamesVerdicts<uint8_t>{nodeIds_, std::span(verdict_).first(n), reasons_, passedIds_, unknown_,
                                                  kUnknownNode},
        out);
    return;
  }
  reasons_.assign(plugins::kColumnFailed + n, codec::FilterReason{});
  for (uint32_t i = 0; i < n; ++i) {
    if (!statuses_[i].ok()) reasons_[plugins::kColumnFailed + i] = reasonOf(statuses_[i]);
  }
  codec::encodeNodeNamesFilter(
      names_, codec::NodeNamesVerdicts<uint32_t>{nodeIds_, wideVerdict_, reasons_, passedIds_, unknown_, kUnknownNode},
      out);
}

void Evaluator::filter(ExtenderRequest& req, const cache::Snapshot& snap) {
  const uint64_t t0 = uv_hrtime();
  if (!decodeArgs(req, snap)) return;
  const uint64_t parsed = uv_hrtime();
  std::unique_lock<std::mutex> plugins = lockPlugins();

  const plugins::Profile& profile = config_.profileFor(args_.pod);
  if (args_.mode() == codec::NodesMode::NodeNames) {
    filterByCodes(profile, snap);
    const uint64_t decided = uv_hrtime();
    encodeNodeNamesFilter(req.response);
    stamp(t0, parsed, decided);
    return;
  }
  runFilter(profile, snap);

  codec::FilterResult& r = filterResult_;
  r.nodesRaw.clear();
  r.failedNodes.clear();
  r.failedAndUnresolvableNodes.clear();
  r.error = {};
  auto pass = [&](size_t i) { r.nodesRaw.push_back(args_.nodes[inputIndex_[i]].raw); };
  for (uint32_t i : scratch_.feasibleIndex()) pass(i);
  const std::string_view nominated = args_.pod.nominatedNodeName;  // see gatherPassed
  for (uint32_t i = 0; i < statuses_.size(); ++i) {
    const plugins::Status& s = statuses_[i];
    if (s.ok()) continue;
    if (s.code == plugins::Code::Unschedulable && !nominated.empty() && nodes_[i]->name == nominated) {
      pass(i);
      continue;
    }
    codec::FailedNode f{nodes_[i]->name, s.reason};
    if (s.code == plugins::Code::UnschedulableAndUnresolvable) {
      r.failedAndUnresolvableNodes.push_back(f);
    } else {
      r.failedNodes.push_back(f);
    }
  }
  const uint64_t decided = uv_hrtime();
  if (plugins.owns_lock()) plugins.unlock();

  codec::encodeFilterResult(r, req.response);
  stamp(t0, parsed, decided);
}

void Evaluator::prioritize(ExtenderRequest& req, const cache::Snapshot& snap) {
  const uint64_t t0 = uv_hrtime();
  if (!decodeArgs(req, snap)) return;
  const uint64_t parsed = uv_hrtime();
  std::unique_lock<std::mutex> plugins = lockPlugins();

  const plugins::Profile& profile = config_.profileFor(args_.pod);
  const bool names = args_.mode() == codec::NodesMode::NodeNames;
  // Score only what fleetsched's own filter accepts, so filter and prioritize never disagree;
  // the rest scores 0 (and is not listed).
  const plugins::NodeSpan kept = runFilter(profile, snap);
  // extenderScores reuses the scratch, so keep the feasible nodes and positions first.
  inputIndexFeasible_.assign(scratch_.feasibleIndex().begin(), scratch_.feasibleIndex().end());
  feasibleNodes_.assign(kept.begin(), kept.end());
  const plugins::NodeSpan feasible = feasibleNodes_;
  feasibleScores_.clear();
  std::span<const uint32_t> feasibleIds;
  if (names) {
    feasibleIds_.resize(inputIndexFeasible_.size());
    for (size_t k = 0; k < inputIndexFeasible_.size(); ++k) feasibleIds_[k] = nodeIds_[inputIndexFeasible_[k]];
    feasibleIds = feasibleIds_;
  }
  if (!feasible.empty()) {
    feasibleScores_.assign(feasible.size(), 0);
    const plugins::NodeColumns* columns = names ? columnsFor(profile, snap) : nullptr;
    if (columns != nullptr) {
      profile.extenderScoresColumns(state_, snap, feasible, feasibleIds, *columns, feasibleScores_, scratch_);
    } else {
      profile.extenderScores(state_, snap, feasible, feasibleScores_, scratch_);
    }
  }
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
  if (plugins.owns_lock()) plugins.unlock();

  if (names) {
    codec::encodeHostScores(names_, std::span(listedIds_).first(listed), std::span(kept_).first(listed), req.response);
  } else {
    codec::encodeHostPriorityList(priorities_, req.response);
  }
  stamp(t0, parsed, decided);
}

uint16_t Evaluator::explainCode(const plugins::Status& s) {
  auto [it, added] = explainIndex_.try_emplace(s.reason, static_cast<uint16_t>(explainStatuses_.size()));
  if (added) {
    if (explainStatuses_.size() == DecisionLog::kPass) {  // 65,534 distinct reasons: share the last
      explainIndex_.erase(it);
      return static_cast<uint16_t>(explainStatuses_.size() - 1);
    }
    explainStatuses_.push_back(s);
  }
  return it->second;
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
  if (names && failures_ != nullptr) {
    // The verdict bytes already number the distinct failures.
    for (size_t k = 0; k < failures_->size(); ++k) {
      explainStatuses_.push_back(failures_->status(static_cast<uint8_t>(plugins::kColumnFailed + k)));
    }
    for (size_t i = 0; i < n; ++i) {
      const uint8_t v = verdict_[i];
      explainCodes_[i] = v == plugins::kColumnPass ? DecisionLog::kPass : static_cast<uint16_t>(v - plugins::kColumnFailed);
    }
    kept = static_cast<uint32_t>(passedIds_.size());
  } else {
    explainIndex_.clear();
    const std::string_view nominated = args_.pod.nominatedNodeName;  // kept as the reply keeps it
    for (size_t i = 0; i < n; ++i) {
      const plugins::Status& s = statuses_[i];
      const bool pass = names ? wideVerdict_[i] == plugins::kColumnPass
                              : s.ok() || (s.code == plugins::Code::Unschedulable && !nominated.empty() &&
                                           nodes_[i]->name == nominated);
      explainCodes_[i] = pass ? DecisionLog::kPass : explainCode(s);
      kept += pass;
    }
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
    explainText_ = "{";
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
    explainText_ = "{";
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
