#include "engine/service/extender_service.h"

#include <uv.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "cache/binding.h"
#include "codec/encoder.h"
#include "codec/k8s_names.h"
#include "log/log.h"
#include "plugins/annotations.h"
#include "plugins/interpretation.h"

namespace fleetsched::engine {
namespace {

constexpr std::string_view kUnknownNode = "node not found in fleetsched's cache";
constexpr size_t kRememberedPods = 8192;
constexpr auto kReservationTtl = std::chrono::seconds(60);
constexpr std::string_view kNoBinder =
    "fleetsched does not bind here: start it with --bind and an API server (--kubeconfig or --in-cluster)";

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

}  // namespace

ExtenderService::ExtenderService(cache::Cache& cache, const plugins::Config& config, Metrics& metrics,
                                 ServiceOptions options)
    : cache_(cache),
      reader_(cache),
      config_(config),
      options_(options),
      decoder_(options.maxBodyBytes),
      builder_(cache.interpretation()) {
  if (options_.debugDecisions > 0) decisions_ = std::make_unique<DecisionLog>(options_.debugDecisions);
  const char* help = "Time spent per request phase";
  parse_ = &metrics.histogram("phase_duration_seconds", help, {{"phase", "parse"}});
  decide_ = &metrics.histogram("phase_duration_seconds", help, {{"phase", "decide"}});
  encode_ = &metrics.histogram("phase_duration_seconds", help, {{"phase", "encode"}});
  decodeErrors_ = &metrics.counter("decode_errors_total", "Extender requests whose body could not be decoded");
  unknownNodes_ = &metrics.counter("unknown_nodes_total", "Node names in requests that the cache does not know");
  writerWaits_ = &metrics.counter("cache_writer_waits_total",
                                  "Bind and preempt requests that waited for the cache writer lock (held by "
                                  "ingestion) instead of blocking the reactor");
  nodesReused_ = &metrics.counter("full_nodes_reused_total",
                                  "Node objects in full-Nodes requests equal to ones decoded before, not decoded again");
}

ExtenderService::~ExtenderService() = default;

void ExtenderService::handleBatch(std::span<ExtenderRequest*> batch) {
  // One snapshot for the whole batch: every request of the turn sees the same cluster.
  cache::Snapshot snap = reader_.acquire();
  for (ExtenderRequest* req : batch) {
    req->status = 200;
    req->response.clear();
    switch (req->verb) {
      case Verb::Filter:
        filter(*req, snap);
        break;
      case Verb::Prioritize:
        prioritize(*req, snap);
        break;
      case Verb::Preempt:
      case Verb::Bind:
        withWriter(*req, snap);
        break;
    }
  }
}

void ExtenderService::badRequest(ExtenderRequest& req) {
  decodeErrors_->inc();
  req.status = decoder_.error() == codec::DecodeError::TooLarge ? 413 : 400;
  req.response = std::string(verbName(req.verb)) + ": " + decoder_.errorMessage() + "\n";
}

bool ExtenderService::decodeArgs(ExtenderRequest& req, const cache::Snapshot& snap) {
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
    nodesReused_->inc(decoder_.reusedNodes());
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
  unknownNodes_->inc(unknown_.size());
  return true;
}

void ExtenderService::refreshNames(const cache::Snapshot& snap) {
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

void ExtenderService::resolveNames(const cache::Snapshot& snap) {
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

const plugins::NodeColumns* ExtenderService::columnsFor(const plugins::Profile& profile, const cache::Snapshot& snap) {
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

plugins::NodeSpan ExtenderService::runFilter(const plugins::Profile& profile, const cache::Snapshot& snap) {
  statuses_.resize(nodes_.size());  // runFilter writes every entry
  if (args_.mode() == codec::NodesMode::NodeNames) {
    if (const plugins::NodeColumns* columns = columnsFor(profile, snap)) {
      return profile.runFilterColumns(args_.pod, state_, snap, nodes_, nodeIds_, *columns, statuses_, scratch_);
    }
  }
  return profile.runFilter(args_.pod, state_, snap, nodes_, statuses_, scratch_);
}

void ExtenderService::filterByCodes(const plugins::Profile& profile, const cache::Snapshot& snap) {
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
void ExtenderService::gatherPassed(std::span<Code> verdict, Unschedulable unschedulable) {
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

void ExtenderService::wideCodes() {
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

void ExtenderService::encodeNodeNamesFilter(codec::Buffer& out) {
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

void ExtenderService::filter(ExtenderRequest& req, const cache::Snapshot& snap) {
  const uint64_t t0 = uv_hrtime();
  if (!decodeArgs(req, snap)) return;
  const uint64_t parsed = uv_hrtime();

  remember(args_.pod, req.peerVerified);
  const plugins::Profile& profile = config_.profileFor(args_.pod);
  if (args_.mode() == codec::NodesMode::NodeNames) {
    filterByCodes(profile, snap);
    const uint64_t decided = uv_hrtime();
    encodeNodeNamesFilter(req.response);
    trace(req, args_.pod, t0, parsed, decided, uv_hrtime());
    if (explaining()) explainFilter(snap);
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

  codec::encodeFilterResult(r, req.response);
  trace(req, args_.pod, t0, parsed, decided, uv_hrtime());
  if (explaining()) explainFilter(snap);
}

void ExtenderService::prioritize(ExtenderRequest& req, const cache::Snapshot& snap) {
  const uint64_t t0 = uv_hrtime();
  if (!decodeArgs(req, snap)) return;
  const uint64_t parsed = uv_hrtime();

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

  if (names) {
    codec::encodeHostScores(names_, std::span(listedIds_).first(listed), std::span(kept_).first(listed), req.response);
  } else {
    codec::encodeHostPriorityList(priorities_, req.response);
  }
  trace(req, args_.pod, t0, parsed, decided, uv_hrtime());
  if (explaining()) explainPrioritize(snap);
}

bool ExtenderService::fitsAfterEviction(const plugins::Profile& profile, const plugins::NodeInfo& node) {
  const plugins::NodeInfo* one[1] = {&node};
  statuses_.assign(1, plugins::Status{});
  profile.filter(state_, plugins::NodeSpan(one, 1), statuses_, scratch_);
  return statuses_[0].ok() && cache::resourcesFit(state_.pod, node);
}

void ExtenderService::withWriter(ExtenderRequest& req, const cache::Snapshot& snap) {
  if (writerQueue_.empty()) {
    // Without an ingestion thread only the reactor itself writes: the lock is free.
    std::optional<cache::Cache::Writer> w =
        binder_ != nullptr ? cache_.tryWrite() : std::optional<cache::Cache::Writer>(cache_.write());
    if (w) {
      runWithWriter(req, snap, *w);
      return;
    }
  }
  writerWaits_->inc();
  req.deferred = true;
  writerQueue_.push_back(WriterWork{&req, {}});
  retryWriterLater();
}

bool ExtenderService::runWithWriter(ExtenderRequest& req, const cache::Snapshot& snap, cache::Cache::Writer& w) {
  if (req.verb == Verb::Preempt) {
    preempt(req, snap, w);
    return true;
  }
  return bind(req, w);
}

void ExtenderService::unreserveLater(std::string uid) {
  if (writerQueue_.empty()) {
    if (std::optional<cache::Cache::Writer> w = cache_.tryWrite()) {
      w->unreserve(uid);
      return;
    }
  }
  writerQueue_.push_back(WriterWork{nullptr, std::move(uid)});
  retryWriterLater();
}

void ExtenderService::retryWriterLater() {
  if (retryPending_) return;
  retryPending_ = true;
  // The ingestion thread runs the hop between two of its own writes, so the lock is free when
  // it starts; when the thread is starved (idle priority under load), the reactor keeps serving
  // filter and prioritize meanwhile instead of stalling every connection on the mutex.
  binder_->afterIngestTurn([this] {
    retryPending_ = false;
    drainWriterQueue();
  });
}

void ExtenderService::drainWriterQueue() {
  if (writerQueue_.empty()) return;
  std::optional<cache::Cache::Writer> w = cache_.tryWrite();
  if (!w) {
    retryWriterLater();
    return;
  }
  // In arrival order, each published before the next decides: a bind after an unreserve of the
  // same pod, or after another bind to the same node, sees what came before it.
  while (!writerQueue_.empty()) {
    WriterWork work = std::move(writerQueue_.front());
    writerQueue_.pop_front();
    if (work.req == nullptr) {
      w->unreserve(work.unreserveUid);
    } else {
      cache::Snapshot snap = reader_.acquire();
      if (runWithWriter(*work.req, snap, *w)) work.req->complete(work.req);
    }
    w->publish();
  }
}

void ExtenderService::preempt(ExtenderRequest& req, const cache::Snapshot& snap, const cache::Cache::Writer& w) {
  const uint64_t t0 = uv_hrtime();
  if (!decoder_.decodePreemptionArgs(req.body, preemptArgs_)) {
    badRequest(req);
    return;
  }
  const uint64_t parsed = uv_hrtime();
  auto& victims = preemptArgs_.hasMetaVictims ? preemptArgs_.nodeNameToMetaVictims : preemptArgs_.nodeNameToVictims;
  // A node offered without victims cannot be returned (kube-scheduler rejects a kept node with
  // none).
  std::erase_if(victims, [](const codec::NodeVictims& v) { return v.uids.empty(); });

  // kube-scheduler chose victims by its own accounting, which does not know which GPUs a pod
  // holds. Check each node with fleetsched's: evict the lowest-priority victims first until the
  // preemptor fits; victims not needed for that stay; a node where evicting every victim does
  // not make room is dropped. Nodes and victims fleetsched knows nothing about pass unchanged.
  const plugins::Profile& profile = config_.profileFor(preemptArgs_.pod);
  const bool judge = profile.preFilter(preemptArgs_.pod, state_, snap).ok() && state_.pod.wantsGpu();
  if (judge) {
    std::erase_if(victims, [&](codec::NodeVictims& v) {
      const plugins::NodeInfo* known = snap.find(v.node);
      if (known == nullptr) return false;
      plugins::NodeInfo sim = *known;
      if (fitsAfterEviction(profile, sim)) return false;  // not a GPU shortage: kube-scheduler's call
      // Victims arrive in decreasing priority; full pods carry their priority, so sort by it.
      order_.resize(v.uids.size());
      for (size_t i = 0; i < order_.size(); ++i) order_[i] = static_cast<uint32_t>(i);
      if (v.pods.size() == v.uids.size()) {
        std::stable_sort(order_.begin(), order_.end(),
                         [&](uint32_t a, uint32_t b) { return v.pods[a].priority > v.pods[b].priority; });
      }
      size_t needed = 0;
      bool fits = false;
      for (size_t k = order_.size(); k-- > 0;) {  // lowest priority first
        ++needed;
        cache::PodCharge charge;
        if (w.podCharge(v.uids[order_[k]], charge) && charge.node == known->id) cache::uncharge(charge, sim);
        if (fitsAfterEviction(profile, sim)) {
          fits = true;
          break;
        }
      }
      if (!fits) return true;
      // Keep the `needed` lowest-priority victims, in decreasing priority.
      keptUids_.clear();
      for (size_t k = order_.size() - needed; k < order_.size(); ++k) keptUids_.push_back(v.uids[order_[k]]);
      v.uids.assign(keptUids_.begin(), keptUids_.end());
      return false;
    });
  }
  const uint64_t decided = uv_hrtime();
  codec::encodePreemptionResult(victims, req.response);
  trace(req, preemptArgs_.pod, t0, parsed, decided, uv_hrtime());
}

void ExtenderService::remember(const codec::Pod& pod, bool peerVerified) {
  if (binder_ == nullptr || pod.uid.empty()) return;
  std::string uid(pod.uid);
  auto it = remembered_.find(uid);
  if (it != remembered_.end()) {
    // An unverified filter never replaces what a verified one remembered (the pod's
    // annotations choose its GPUs) when binds need a verified filter.
    if (options_.bindNeedsVerifiedFilter && !peerVerified && it->second.peerVerified) return;
    it->second.pod->assign(pod);  // the pod may have changed since
    it->second.peerVerified = peerVerified;
    return;
  }
  if (remembered_.size() >= kRememberedPods) {
    remembered_.erase(rememberedOrder_.front());
    rememberedOrder_.pop_front();
  }
  rememberedOrder_.push_back(uid);
  remembered_.emplace(std::move(uid), RememberedPod{std::make_unique<OwnedPod>(pod), peerVerified});
}

bool ExtenderService::bind(ExtenderRequest& req, cache::Cache::Writer& w) {
  if (!decoder_.decodeBindingArgs(req.body, bindArgs_)) {
    badRequest(req);
    return true;
  }
  // The namespace and name become path segments of the Binding's URL (and of the Event that
  // reports a failure): refuse what kube-apiserver could not hold before anything is reserved
  // or sent.
  if (std::string invalid; !codec::validatePodRef(bindArgs_.podNamespace, bindArgs_.podName, invalid)) {
    decodeErrors_->inc();
    req.status = 400;
    req.response = "bind: " + invalid + "\n";
    return true;
  }
  // The batch's snapshot predates the reservations of the binds before this one in the batch
  // (kube-scheduler binds from parallel goroutines, so a burst brings several per loop turn):
  // deciding on it handed two pods the same GPU indexes. Decide on the current version, which
  // holds every earlier reservation (each is published before the next bind runs).
  cache::Snapshot current = reader_.acquire();
  std::string error = binder_ == nullptr ? std::string(kNoBinder) : startBind(req, current, w);
  if (error.empty() && binder_ != nullptr) return false;  // answered when kube-apiserver has
  codec::encodeBindingResult(error, req.response);
  return true;
}

std::string ExtenderService::startBind(ExtenderRequest& req, const cache::Snapshot& snap, cache::Cache::Writer& w) {
  const codec::BindingArgs& a = bindArgs_;
  std::string who = std::string(a.podNamespace) + "/" + std::string(a.podName);
  if (options_.bindNeedsVerifiedFilter && !req.peerVerified) {
    return "bind refused for pod " + who + ": the request did not come with a verified client certificate";
  }
  auto it = remembered_.find(std::string(a.podUid));
  if (it == remembered_.end()) {
    return "pod " + who + " was not filtered by fleetsched, so it cannot choose its GPUs; retrying will filter it";
  }
  if (options_.bindNeedsVerifiedFilter && !it->second.peerVerified) {
    return "bind refused for pod " + who + ": no filter with a verified client certificate asked about it";
  }
  const codec::Pod& pod = it->second.pod->pod();
  cache::Placement placed;
  std::string refused = cache::reserveOnNode(config_.profileFor(pod), cache_.interpretation(), pod, snap, w, a.node,
                                             kReservationTtl, state_, scratch_, statuses_, placed);
  if (!refused.empty()) return refused;
  const plugins::GpuAssignment& gpus = placed.gpus;
  const cache::ReserveResult reserved = placed.result;

  BindingRequest b;
  b.podNamespace = a.podNamespace;
  b.podName = a.podName;
  b.podUid = a.podUid;
  b.node = a.node;
  if (gpus.count > 0) {
    b.annotations.emplace_back(plugins::annotations::kGpuIndex, plugins::formatGpuIndex(gpus));
    b.annotations.emplace_back(plugins::annotations::kAssumeTime, std::to_string(uv_hrtime()));
  }
  req.deferred = true;
  std::string uid(a.podUid);
  binder_->postBinding(std::move(b), [this, &req, uid, reserved](std::string error) {
    if (!error.empty() && reserved != cache::ReserveResult::AlreadyBound) unreserveLater(uid);
    codec::encodeBindingResult(error, req.response);
    req.complete(&req);
  });
  return {};
}

namespace {

int64_t unixMillis() {
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  return int64_t{now.tv_sec} * 1000 + now.tv_nsec / 1'000'000;
}

}  // namespace

uint16_t ExtenderService::explainCode(const plugins::Status& s) {
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

void ExtenderService::recordNodes(const cache::Snapshot& snap, DecisionLog::Nodes& out) {
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

void ExtenderService::explainFilter(const cache::Snapshot& snap) {
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

  if (decisions_) {
    DecisionLog::Entry& e = decisions_->touch(args_.pod.namespace_, args_.pod.name, args_.pod.uid);
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

void ExtenderService::explainPrioritize(const cache::Snapshot& snap) {
  // Scores by request position: kFiltered unless fleetsched's filter kept the node.
  const size_t n = nodes_.size();
  explainScores_.assign(n, DecisionLog::kFiltered);
  for (size_t k = 0; k < inputIndexFeasible_.size(); ++k) {
    explainScores_[inputIndexFeasible_[k]] = static_cast<int16_t>(std::clamp(feasibleScores_[k], 0, 0x7fff));
  }
  if (decisions_) {
    DecisionLog::Entry& e = decisions_->touch(args_.pod.namespace_, args_.pod.name, args_.pod.uid);
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

void ExtenderService::debugPod(std::string_view target, LocalResponse& out) const {
  constexpr std::string_view kPrefix = "/debug/pods/";
  constexpr std::string_view kUsage = "want GET /debug/pods/NAMESPACE/NAME\n";
  if (const size_t q = target.find('?'); q != std::string_view::npos) target = target.substr(0, q);
  if (const size_t at = target.find(kPrefix); at != std::string_view::npos) {
    target.remove_prefix(at + kPrefix.size());  // an absolute-form target keeps its scheme and host first
  } else {
    out.status = 400;
    out.body = kUsage;
    return;
  }
  const size_t slash = target.find('/');
  if (slash == std::string_view::npos) {
    out.status = 400;
    out.body = std::string(kUsage);
    return;
  }
  const std::string_view ns = target.substr(0, slash);
  const std::string_view name = target.substr(slash + 1);
  if (std::string invalid; !codec::validatePodRef(ns, name, invalid)) {
    out.status = 400;
    out.body = "/debug/pods: " + invalid + "; " + std::string(kUsage);
    return;
  }
  if (!decisions_) {
    out.status = 404;
    out.body = "/debug/pods: decisions are not recorded: start serve with --debug-decisions N (N > 0)\n";
    return;
  }
  const DecisionLog::Entry* e = decisions_->find(ns, name);
  if (e == nullptr) {
    out.status = 404;
    out.body = "/debug/pods: no decision recorded for pod " + std::string(ns) + "/" + std::string(name) +
               ": fleetsched keeps the last filter and prioritize of the " + std::to_string(decisions_->capacity()) +
               " pods decided most recently (--debug-decisions)\n";
    return;
  }
  out.contentType = "application/json";
  DecisionLog::render(*e, out.body);
}

void ExtenderService::trace(const ExtenderRequest& req, const codec::Pod& pod, uint64_t t0, uint64_t parsed,
                            uint64_t decided, uint64_t encoded) {
  parse_->observeNanos(parsed - t0);
  decide_->observeNanos(decided - parsed);
  encode_->observeNanos(encoded - decided);
  ++requests_;
  if (options_.traceEvery != 0 && requests_ % options_.traceEvery == 0) {
    FLOG_INFO(log::format("trace %s pod=%.*s/%.*s nodes=%zu unknown=%zu parse=%.1fus decide=%.1fus encode=%.1fus "
                          "bytes=%zu",
                          std::string(verbName(req.verb)).c_str(), static_cast<int>(pod.namespace_.size()),
                          pod.namespace_.data(), static_cast<int>(pod.name.size()), pod.name.data(), nodes_.size(),
                          unknown_.size(), (parsed - t0) / 1e3, (decided - parsed) / 1e3, (encoded - decided) / 1e3,
                          req.response.size()));
  }
}

}  // namespace fleetsched::engine
