// ExtenderService: the extender verbs behind the reactor. One batch = one cache snapshot; each
// request is decoded in place (codec), run through the pod's profile (plugins) against the
// snapshot's nodes, and encoded as Go's encoding/json would (codec).
//
//   NodeNames mode  names are looked up in the snapshot; a name the cache does not know is
//                   reported in FailedNodes, never dropped. Each verb remembers its last list:
//                   the same names on the same node set reuse the resolved ids, and the same
//                   bytes are not parsed again. Replies take names pre-encoded and failed maps
//                   in order from a NodeNameTable (per node set).
//   Nodes mode      each request node is turned into a NodeInfo; what the cache knows about a
//                   node of that name (pods bound, reservations, zone) is carried over, so
//                   accounting is the same in both modes. The reply echoes the input objects'
//                   bytes. Node objects equal to ones decoded before are copied from the
//                   decoder's memo instead (codec::Decoder::reusedNodes; up to one maximal
//                   document, 64 MB, of node bytes kept).
//
// Outcomes go back as HTTP 200 (kube-scheduler treats anything else as an outage); only an
// undecodable body gets 400 (413 when over the decoder's limit).
//
// Bind (with enableBinding): the pod is the one remembered from its last filter/prioritize
// call; fleetsched re-checks the node against the current snapshot, picks the GPUs (the
// profile's selectGpus), reserves them in the cache so the next pod sees them at once, and
// posts the Binding (carrying the fleetsched.io/gpu-index annotation) from the ingestion
// thread; the reply is deferred until kube-apiserver answers. A failed Binding releases the
// reservation; otherwise the watch event showing the pod bound confirms it. Without
// enableBinding the verb answers an Error saying how to enable it. Bind and preempt need the
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
#include <vector>

#include "cache/cache.h"
#include "cache/node_builder.h"
#include "codec/decoder.h"
#include "codec/extender.h"
#include "engine/handler.h"
#include "engine/metrics.h"
#include "engine/node_name_table.h"
#include "engine/owned_pod.h"
#include "plugins/config.h"
#include "plugins/profile.h"

namespace fleetsched::engine {

class Ingestor;

struct ServiceOptions {
  // Print one line per N requests with per-phase timings (0: off).
  uint32_t traceEvery = 0;
};

class ExtenderService : public BatchHandler {
 public:
  ExtenderService(cache::Cache& cache, const plugins::Config& config, Metrics& metrics,
                  ServiceOptions options = {});
  ~ExtenderService() override;

  void handleBatch(std::span<ExtenderRequest*> batch) override;
  bool ready() const override { return !readyCheck_ || readyCheck_(); }
  // A NodeNames filter reply's kept list stays prioritize's expected bytes: the buffer moves to
  // the list's memo instead of being copied (a third of a 5,000-node reply).
  void responseDone(ExtenderRequest& req) override;

  // /readyz follows `check` (e.g. the watch's initial sync); ready by default.
  void setReadyCheck(std::function<bool()> check) { readyCheck_ = std::move(check); }
  // Serves bind through `ingestor`, which must outlive every bind in flight.
  void enableBinding(Ingestor* ingestor) { ingestor_ = ingestor; }

 private:
  struct NameListMemo;
  void filter(ExtenderRequest& req, const cache::Snapshot& snap);
  void prioritize(ExtenderRequest& req, const cache::Snapshot& snap);
  // Bind and preempt need the cache's writer lock (reserve, unreserve; pods' charges). The
  // reactor never waits for it: when the ingestion thread holds it, or earlier work already
  // waits, the request is deferred into writerQueue_ and runs, in order, once the ingestion
  // thread hands the turn back between two of its writes (Ingestor::afterIngestTurn).
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
  // NodeNames mode: fills memo_->ids (an id or kNoNode per input name), reusing the previous
  // request's when it sent the same names against the same node set.
  void resolveNames(const cache::Snapshot& snap);
  // Decodes a body whose NodeNames bytes equal memo_->raw without parsing the list again; false
  // when the shortcut does not apply (nothing reported: decode the body normally).
  bool decodeWithoutKnownList(ExtenderRequest& req, const cache::Snapshot& snap);
  // Points memo_ at the verb's memo whose list the body carries, decoded as by
  // decodeWithoutKnownList (true); else at the memo a new list should replace (false). Sets
  // primedByThisPod_ when that memo is the one this pod's filter primed.
  bool decodeWithKnownList(ExtenderRequest& req, const cache::Snapshot& snap);
  // The prioritize slot to replace next (oldest first).
  NameListMemo& takePrioritizeMemo();
  void rememberListBytes(std::string_view body);
  // NodeNames mode: `snap`'s rows for the profile's column filters (rebuilt when the snapshot
  // version moved on), or nullptr when the profile cannot use them.
  const plugins::NodeColumns* columnsFor(const plugins::Profile& profile, const cache::Snapshot& snap);
  // runFilter over nodes_, through the rows in NodeNames mode.
  plugins::NodeSpan runFilter(const plugins::Profile& profile, const cache::Snapshot& snap);
  // NodeNames filter: a verdict byte per node into verdict_ (failure codes in *failures_), the
  // kept nodes' ids into passedIds_ (reply order). False when the run has more distinct
  // failures than codes; `filtered` tells whether statuses_ holds runFilter's verdicts then.
  bool filterByCodes(const plugins::Profile& profile, const cache::Snapshot& snap, bool& filtered);
  // Sorts the unknown names (unknownOrder_, unknownQuoted_): they join FailedNodes by name.
  void orderUnknown();
  // memo_->rankPos: each rank's position in nodes_ (nodes_.size() when the list lacks it).
  const std::vector<uint32_t>& rankPositions();
  // NodeNames mode: the filter reply, as codec::encodeFilterResult writes it, from passedIds_
  // and the verdict codes; [namesBegin, namesEnd) is the NodeNames array's content in `out`.
  void encodeNodeNamesFilter(codec::Buffer& out, size_t& namesBegin, size_t& namesEnd);
  // Makes the nodes a NodeNames filter kept (passedIds_ and passedNodes_, reply order;
  // `quotedList` their JSON strings joined by commas, as the reply lists them) one of
  // prioritize's last lists, resolved at `snap`'s version; `req` is the filter request, whose
  // response holds quotedList.
  void primePrioritizeList(const cache::Snapshot& snap, std::string_view quotedList, const ExtenderRequest& req);
  // Fills names/ends of a memo primed from ids (names_ must describe its node set).
  void materializeNames(NameListMemo& m);
  std::string_view quotedUnknown(size_t i) const {
    return {unknownQuoted_.data() + unknownQuotedOffset_[i], unknownQuotedOffset_[i + 1] - unknownQuotedOffset_[i]};
  }
  void badRequest(ExtenderRequest& req);
  void remember(const codec::Pod& pod);
  // Reserves and posts the Binding; returns an error text when it cannot start.
  std::string startBind(ExtenderRequest& req, const cache::Snapshot& snap, cache::Cache::Writer& w);
  void trace(const ExtenderRequest& req, const codec::Pod& pod, uint64_t t0, uint64_t parsed, uint64_t decided,
             uint64_t encoded);

  cache::Cache& cache_;
  cache::Reader reader_;
  const plugins::Config& config_;
  ServiceOptions options_;
  Ingestor* ingestor_ = nullptr;
  std::function<bool()> readyCheck_;
  // Pods seen by filter/prioritize while binding is on, by UID, oldest evicted first.
  std::unordered_map<std::string, std::unique_ptr<OwnedPod>> remembered_;
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
  // The request's nodes, for this request only: views into the list's memo (NodeNames mode:
  // resolved once per list and snapshot version, not copied per request) or into ownNodes_ and
  // ownInputIndex_ (Nodes mode).
  std::span<const plugins::NodeInfo* const> nodes_;
  std::span<const uint32_t> inputIndex_;  // nodes_[i] came from request node inputIndex_[i]
  std::span<const std::string_view> unknown_;
  std::span<const uint32_t> nodeIds_;  // NodeNames: nodeIds_[i] is nodes_[i]'s id
  std::vector<const plugins::NodeInfo*> ownNodes_;
  std::vector<uint32_t> ownInputIndex_;
  // NodeNames mode: names by node set, the last resolved list (names back to back, end offsets,
  // ids) and the failed-map scratch.
  NodeNameTable names_;
  // What the column filters read, refreshed per snapshot version chunk by chunk (engine-side,
  // like names_).
  plugins::NodeColumns columns_;
  std::vector<uint64_t> columnStamps_;  // per chunk: the stamp its rows in columns_ come from
  // NodeNames lists resolved before. kube-scheduler sends filter all candidate nodes (the same
  // list pod after pod) and prioritize only the ones filter kept, so each verb has its own:
  // filter the last list, prioritize the last kPrimedLists lists filter replies named
  // (primePrioritizeList), so that pods in flight at once (several schedulers, or a load
  // generator's connections) each find theirs.
  struct NameListMemo {
    bool valid = false;
    uint64_t nameSet = 0;           // Snapshot::nameSetVersion() the ids belong to
    std::string names;              // the names back to back
    std::vector<uint32_t> ends;     // end offset of each name in `names`
    bool namesPending = false;      // primed from ids: names/ends not written until needed
    std::vector<uint32_t> ids;      // an id or kNoNode per name
    bool rawValid = false;
    // The list's JSON between the brackets, as last sent: in rawStore, or in rawLender's
    // response while the reactor still writes it (keepRaw, lendRaw, dropRaw).
    std::string_view raw;
    codec::Buffer rawStore;
    const ExtenderRequest* rawLender = nullptr;
    uint64_t generation = 0;  // bumped whenever names/ids change
    // The list resolved against one snapshot version (decodeArgs' nodes_, nodeIds_,
    // inputIndex_, unknown_): reused while neither the list nor the version changes.
    uint64_t resolvedVersion = 0;
    uint64_t resolvedGeneration = 0;
    std::vector<const plugins::NodeInfo*> nodes;
    std::vector<uint32_t> nodeIds;
    std::vector<uint32_t> inputIndex;
    std::vector<std::string_view> unknown;
    // Primed by a filter reply (primePrioritizeList): the snapshot version it decided on (0:
    // none, or a nominated node was let through) and its request without the list's bytes.
    uint64_t primedVersion = 0;
    std::string primedRest;
    size_t primedOpen = 0;  // where the list's '[' is in primedRest
    // Filter replies walk the failed nodes by name rank: rank -> position in `nodes`.
    bool rankPosValid = false;
    std::vector<uint32_t> rankPos;

    void keepRaw(std::string_view list) {
      rawLender = nullptr;
      rawStore.assign(list);
      raw = rawStore.view();
      rawValid = true;
    }
    // `list` lies in req.response, which the memo takes over in responseDone.
    void lendRaw(std::string_view list, const ExtenderRequest& req) {
      rawLender = &req;
      raw = list;
      rawValid = true;
    }
    void dropRaw() {
      rawLender = nullptr;
      raw = {};
      rawValid = false;
    }
  };
  static constexpr size_t kPrimedLists = 8;
  NameListMemo filterMemo_;
  NameListMemo prioritizeMemos_[kPrimedLists];
  size_t nextPrioritizeMemo_ = 0;  // the slot the next primed or resolved list replaces
  NameListMemo* memo_ = &filterMemo_;
  std::string compact_;  // a body without its list, padded
  // decodeArgs took a prioritize list that a filter of this very pod (same bytes around the
  // list) primed at this snapshot version: every listed node passes the filters.
  bool primedByThisPod_ = false;
  std::vector<uint32_t> passedIds_;    // NodeNames filter: ids of the nodes kept, in reply order
  std::vector<const plugins::NodeInfo*> passedNodes_;  // and their records
  bool nominatedKept_ = false;         // the nominated node was kept though it failed
  std::vector<uint8_t> verdict_;       // NodeNames filter: per position, pass or failure code
  const plugins::FailureCodes* failures_ = nullptr;  // what verdict_'s codes stand for
  plugins::FailureCodes statusCodes_;  // codes of runFilter's statuses, when the rows were not used
  std::vector<uint32_t> failedAt_[2];  // ranks of the FailedNodes / FailedAndUnresolvable entries
  std::vector<uint32_t> unknownOrder_;
  std::string unknownQuoted_;  // NodeNameTable::kCopySlack zero bytes after the last
  std::vector<uint32_t> unknownQuotedOffset_;
  // Each failure code's reason as a JSON string, followed by NodeNameTable::kCopySlack bytes
  // of padding (offset 0: an empty one, for codes that are not failures).
  std::string reasonsEscaped_;
  std::vector<plugins::NodeInfo> requestNodes_;  // Nodes mode
  std::vector<plugins::Status> statuses_;
  std::vector<std::string_view> prefixes_;  // prioritize, NodeNames: each listed entry up to its score
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

  Histogram* parse_;
  Histogram* decide_;
  Histogram* encode_;
  Counter* decodeErrors_;
  Counter* unknownNodes_;
  Counter* listsReused_;
  Counter* listsTrusted_;
  Counter* writerWaits_;
  Counter* nodesReused_;
};

}  // namespace fleetsched::engine
