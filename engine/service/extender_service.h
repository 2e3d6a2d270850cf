// ExtenderService: the extender verbs behind the reactor. One batch = one cache snapshot; each
// request is decoded in place (codec), run through the pod's profile (plugins) against the
// snapshot's nodes, and encoded as Go's encoding/json would (codec).
//
//   NodeNames mode  every name is looked up in a codec::NodeNameTable (per node set); a name the
//                   cache does not know is reported in FailedNodes, never dropped. The replies
//                   are written from that table and the verdicts (codec/encoder.h).
//   Nodes mode      each request node is turned into a NodeInfo; what the cache knows about a
//                   node of that name (pods bound, reservations, zone) is carried over, so
//                   accounting is the same in both modes. The reply echoes the input objects'
//                   bytes. Node objects equal to ones decoded before are copied from the
//                   decoder's memo instead (codec::Decoder::reusedNodes; up to one maximal
//                   document, 64 MB, of node bytes kept).
//
// Outcomes go back as HTTP 200 (kube-scheduler treats anything else as an outage); only an
// undecodable body gets 400 (413 when over the decoder's limit, ServiceOptions::maxBodyBytes).
//
// Bind (with enableBinding): the pod is the one remembered from its last filter/prioritize
// call; fleetsched re-checks the node against the current snapshot, picks the GPUs (the
// profile's selectGpus), reserves them in the cache so the next pod sees them at once, and
// posts the Binding (carrying the fleetsched.io/gpu-index annotation) from the ingestion
// thread; the reply is deferred until kube-apiserver answers. A failed Binding releases the
// reservation; otherwise the watch event showing the pod bound confirms it. Without
// enableBinding the verb answers an Error saying how to enable it. With
// ServiceOptions::bindNeedsVerifiedFilter, a bind (and the filter that remembered its pod) must
// have come over a TLS connection whose client certificate verified, or it is refused. Bind and preempt need the
// cache's writer lock and never wait for it on the reactor (see withWriter).
//
// Everything runs on the reactor thread.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <unordered_map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cache/cache.h"
#include "cache/node_builder.h"
#include "codec/decoder.h"
#include "codec/encoder.h"
#include "codec/extender.h"
#include "codec/node_name_table.h"
#include "engine/reactor/handler.h"
#include "engine/reactor/metrics.h"
#include "engine/reactor/server.h"
#include "engine/service/binder.h"
#include "engine/service/decision_log.h"
#include "engine/service/owned_pod.h"
#include "log/log.h"
#include "plugins/config.h"
#include "plugins/profile.h"

namespace fleetsched::engine {

struct ServiceOptions {
  // Print one line per N requests with per-phase timings (0: off).
  uint32_t traceEvery = 0;
  // Keep the last filter and prioritize decision of this many pods for debugPod (0: none).
  size_t debugDecisions = 0;
  // Bind only a pod whose last filter came over a connection whose client certificate verified
  // (ExtenderRequest::peerVerified: `serve --client-ca-file`), and only on such a connection.
  // Pod UIDs are readable by anyone who can list pods: without this, whoever reaches the port
  // could filter and then bind any pod with fleetsched's credentials.
  bool bindNeedsVerifiedFilter = false;
  // The decoder's limit on one body: serve passes ServerConfig::maxBodyBytes, the HTTP layer's
  // limit, so a body the reactor accepts is never refused by the decoder (both default to 64 MiB).
  size_t maxBodyBytes = codec::kDefaultMaxDocumentBytes;
};

class ExtenderService : public BatchHandler {
 public:
  ExtenderService(cache::Cache& cache, const plugins::Config& config, Metrics& metrics,
                  ServiceOptions options = {});
  ~ExtenderService() override;

  void handleBatch(std::span<ExtenderRequest*> batch) override;
  bool ready() const override { return !readyCheck_ || readyCheck_(); }

  // /readyz follows `check` (e.g. the watch's initial sync); ready by default.
  void setReadyCheck(std::function<bool()> check) { readyCheck_ = std::move(check); }
  // Serves bind through `binder` (the Ingestor), which must outlive every bind in flight.
  void enableBinding(Binder* binder) { binder_ = binder; }

  // GET /debug/pods/<namespace>/<name>: the pod's last recorded filter and prioritize decision,
  // node by node, as JSON; 400 for a path that does not name a pod the way Kubernetes names
  // them, 404 for a pod without a recorded decision (or with recording off).
  void debugPod(std::string_view target, LocalResponse& out) const;
  // The recorded decisions; null when options.debugDecisions is 0.
  const DecisionLog* decisions() const { return decisions_.get(); }

 private:
  void filter(ExtenderRequest& req, const cache::Snapshot& snap);
  void prioritize(ExtenderRequest& req, const cache::Snapshot& snap);
  // Bind and preempt need the cache's writer lock (reserve, unreserve; pods' charges). The
  // reactor never waits for it: when the ingestion thread holds it, or earlier work already
  // waits, the request is deferred into writerQueue_ and runs, in order, once the ingestion
  // thread hands the turn back between two of its writes (Binder::afterIngestTurn).
  void withWriter(ExtenderRequest& req, const cache::Snapshot& snap);
  // Runs bind or preempt; false when the answer comes later (the Binding is in flight).
  bool runWithWriter(ExtenderRequest& req, const cache::Snapshot& snap, cache::Cache::Writer& w);
  void unreserveLater(std::string uid);
  void retryWriterLater();
  void drainWriterQueue();
  void preempt(ExtenderRequest& req, const cache::Snapshot& snap, const cache::Cache::Writer& w);
  // The current cycle's pod passes the profile's filters and fits cpu/memory/pods on `node`.
  bool fitsAfterEviction(const plugins::Profile& profile, const plugins::NodeInfo& node);
  bool bind(ExtenderRequest& req, cache::Cache::Writer& w);
  // Decodes ExtenderArgs and resolves its nodes into nodes_ (unknown names into unknown_;
  // NodeNames mode also fills nodeIds_). Returns false after filling a 400/413 response.
  bool decodeArgs(ExtenderRequest& req, const cache::Snapshot& snap);
  // NodeNames mode: rebuilds names_ when `snap`'s node set is not the one it describes.
  void refreshNames(const cache::Snapshot& snap);
  // NodeNames mode: resolves args_.nodeNames through names_ into the own* vectors.
  void resolveNames(const cache::Snapshot& snap);
  // NodeNames mode: `snap`'s rows for the profile's column filters (rebuilt when the snapshot
  // version moved on), or nullptr when the profile cannot use them.
  const plugins::NodeColumns* columnsFor(const plugins::Profile& profile, const cache::Snapshot& snap);
  // runFilter over nodes_, through the rows in NodeNames mode.
  plugins::NodeSpan runFilter(const plugins::Profile& profile, const cache::Snapshot& snap);
  // NodeNames filter: a verdict byte per node into verdict_ (failure codes in *failures_), the
  // kept nodes' ids into passedIds_ (reply order). When the run has more distinct failures than
  // codes, wideCodes() instead (failures_ null).
  void filterByCodes(const plugins::Profile& profile, const cache::Snapshot& snap);
  // A verdict per node into wideVerdict_ from runFilter's statuses_: kColumnFailed + i for a
  // node i that fails; passedIds_ as filterByCodes fills it.
  void wideCodes();
  // passedIds_ from `verdict` (kColumnPass: kept), with a preemptor's nominated node kept when
  // `unschedulable(its verdict)`.
  template <class Code, class Unschedulable>
  void gatherPassed(std::span<Code> verdict, Unschedulable unschedulable);
  // NodeNames mode: the filter reply from names_ and the verdicts (codec::encodeNodeNamesFilter).
  void encodeNodeNamesFilter(codec::Buffer& out);
  void badRequest(ExtenderRequest& req);
  void remember(const codec::Pod& pod, bool peerVerified);
  // Reserves and posts the Binding; returns an error text when it cannot start.
  std::string startBind(ExtenderRequest& req, const cache::Snapshot& snap, cache::Cache::Writer& w);
  // At -v=4 a line per decision, and the record for debugPod: both off cost one branch.
  bool explaining() const { return decisions_ != nullptr || log::enabled(kDecisionLogLevel); }
  void explainFilter(const cache::Snapshot& snap);
  void explainPrioritize(const cache::Snapshot& snap);
  // Records by cache id in NodeNames mode, by position in full-Nodes mode.
  void recordNodes(const cache::Snapshot& snap, DecisionLog::Nodes& out);
  uint16_t explainCode(const plugins::Status& s);
  void trace(const ExtenderRequest& req, const codec::Pod& pod, uint64_t t0, uint64_t parsed, uint64_t decided,
             uint64_t encoded);

  cache::Cache& cache_;
  cache::Reader reader_;
  const plugins::Config& config_;
  ServiceOptions options_;
  Binder* binder_ = nullptr;
  std::function<bool()> readyCheck_;
  // Pods seen by filter while binding is on, by UID, oldest evicted first; with the channel of
  // the filter that remembered each (ExtenderRequest::peerVerified).
  struct RememberedPod {
    std::unique_ptr<OwnedPod> pod;
    bool peerVerified = false;
  };
  std::unordered_map<std::string, RememberedPod> remembered_;
  std::deque<std::string> rememberedOrder_;
  struct WriterWork {
    ExtenderRequest* req;      // a deferred bind or preempt, or
    std::string unreserveUid;  // (req null) a failed Binding's reservation to release
  };
  std::deque<WriterWork> writerQueue_;
  bool retryPending_ = false;

  // Per-request scratch, reused across requests (the reactor is single-threaded).
  codec::Decoder decoder_;
  codec::ExtenderArgs args_;
  codec::BindingArgs bindArgs_;
  codec::PreemptionArgs preemptArgs_;
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
  // What the column filters read, refreshed per snapshot version chunk by chunk (engine-side,
  // like names_).
  plugins::NodeColumns columns_;
  std::vector<uint64_t> columnStamps_;  // per chunk: the stamp its rows in columns_ come from
  std::vector<uint32_t> passedIds_;    // NodeNames filter: ids of the nodes kept, in reply order
  std::vector<uint8_t> verdict_;       // NodeNames filter: per position, pass or failure code
  std::vector<uint32_t> wideVerdict_;  // the same when there are more failures than codes
  const plugins::FailureCodes* failures_ = nullptr;  // what verdict_'s codes stand for
  plugins::FailureCodes statusCodes_;  // codes of runFilter's statuses, when the rows were not used
  std::vector<codec::FilterReason> reasons_;  // what each verdict code means on the wire
  std::vector<plugins::NodeInfo> requestNodes_;  // Nodes mode
  std::vector<plugins::Status> statuses_;
  std::vector<uint32_t> listedIds_;        // prioritize, NodeNames: the listed entries' ids
  std::vector<int32_t> kept_;               // prioritize, NodeNames: the listed entries' scores
  std::vector<uint32_t> order_;          // preempt: victims by decreasing priority
  std::vector<std::string_view> keptUids_;
  std::vector<uint32_t> inputIndexFeasible_;
  std::vector<const plugins::NodeInfo*> feasibleNodes_;
  std::vector<int32_t> feasibleScores_;
  std::vector<uint32_t> feasibleIds_;
  cache::NodeBuilder builder_;
  plugins::CycleState state_;
  plugins::ProfileScratch scratch_;
  uint64_t requests_ = 0;
  // Decisions (explainFilter / explainPrioritize): the request's verdicts by position
  // (DecisionLog::kPass or an index into explainStatuses_), scores by position.
  static constexpr int kDecisionLogLevel = 4;
  std::unique_ptr<DecisionLog> decisions_;
  DecisionLog::NameTable nameTable_;  // node names by id for nameTableVersion_'s node set
  uint64_t nameTableVersion_ = 0;
  std::vector<uint16_t> explainCodes_;
  std::vector<plugins::Status> explainStatuses_;
  std::unordered_map<std::string_view, uint16_t> explainIndex_;
  std::vector<int16_t> explainScores_;
  std::string explainText_;

  Histogram* parse_;
  Histogram* decide_;
  Histogram* encode_;
  Counter* decodeErrors_;
  Counter* unknownNodes_;
  Counter* writerWaits_;
  Counter* nodesReused_;
};

}  // namespace fleetsched::engine
