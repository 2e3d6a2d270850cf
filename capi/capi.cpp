// The C ABI of capi/fleetsched.h over the engine's C++ modules (codec, plugins, cache).
#include "capi/fleetsched.h"

#include <algorithm>
#include <cassert>
#include <chrono>
#include <cstring>
#include <exception>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cache/binding.h"
#include "cache/cache.h"
#include "cache/snapshot_rows.h"
#include "codec/decoder.h"
#include "plugins/config.h"
#include "plugins/cycle.h"
#include "plugins/interpretation.h"
#include "plugins/profile.h"

namespace {

using fleetsched::cache::Cache;
using fleetsched::cache::Snapshot;
namespace codec = fleetsched::codec;
namespace plugins = fleetsched::plugins;

// A reservation outlives the scheduling cycle by the binding cycle (PreBind may wait minutes for
// volumes); Unreserve or the informer's bound pod ends it long before this in practice.
constexpr auto kReservationTtl = std::chrono::minutes(15);
constexpr auto kExpireEvery = std::chrono::seconds(1);
constexpr uint8_t kHole = 255;
constexpr uint32_t kMaxFailures = 254;

void copyText(std::string_view text, char* buf, size_t cap) {
  if (buf == nullptr || cap == 0) return;
  const size_t n = std::min(text.size(), cap - 1);
  if (n > 0) std::memcpy(buf, text.data(), n);  // an empty view may have a null data()
  buf[n] = '\0';
}

int32_t toCode(plugins::Code c) {
  switch (c) {
    case plugins::Code::Success: return FS_SUCCESS;
    case plugins::Code::Unschedulable: return FS_UNSCHEDULABLE;
    case plugins::Code::UnschedulableAndUnresolvable: return FS_UNSCHEDULABLE_AND_UNRESOLVABLE;
    case plugins::Code::Error: return FS_ERROR;
  }
  return FS_ERROR;
}

std::string_view view(const char* p, size_t n) { return p == nullptr ? std::string_view() : std::string_view(p, n); }

// Calls f, turning any exception into `fallback` and a message: nothing crosses the C boundary.
template <class R, class F>
R guarded(R fallback, char* err, size_t cap, F&& f) {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    copyText("fleetsched engine: out of memory", err, cap);
  } catch (const std::exception& e) {
    copyText(std::string("fleetsched engine: ") + e.what(), err, cap);
  } catch (...) {
    copyText("fleetsched engine: unknown error", err, cap);
  }
  return fallback;
}

}  // namespace

struct fs_engine {
  explicit fs_engine(plugins::Config c) : config(std::move(c)), cache(config.interpretation()), reader(cache) {}

  plugins::Config config;
  Cache cache;

  // Cache updates: one decoder, one writer at a time.
  std::mutex updateMutex;
  codec::Decoder updateDecoder;
  codec::PaddedBuffer updateBytes;

  // The scheduling cycle: everything below is guarded by cycleMutex.
  std::mutex cycleMutex;
  fleetsched::cache::Reader reader;
  Snapshot snap;  // the cycle's snapshot, from fs_prefilter until the next one or fs_reserve
  codec::Decoder podDecoder;
  codec::PaddedBuffer podBytes;
  codec::Pod pod;
  const plugins::Profile* profile = nullptr;
  uint64_t cycle = 0;
  plugins::Cycle run;  // begun by begin() on `snap`
  std::vector<const plugins::NodeInfo*> nodes;
  std::vector<uint32_t> ids;  // nodes[i]'s id
  fleetsched::cache::SnapshotRows rows;
  // What fs_reason answers, copied from the cycle (a later fs_filter_node or fs_reserve numbers
  // failures anew): [0] the PreFilter failure, [k] the filter's failure code k.
  std::vector<std::pair<int32_t, std::string>> failures;
  std::vector<int32_t> wire;
  codec::Decoder addDecoder;
  codec::PaddedBuffer addBytes;
  codec::Pod added;
  fleetsched::cache::Clock::time_point lastExpire{};

  // fs_engine_stats reads the nodes through a reader of its own: scrapes never wait for a cycle.
  std::mutex statsMutex;
  fleetsched::cache::Reader statsReader{cache};

  // Decodes `json` as the cycle's pod and picks its profile; a new cycle token.
  bool decode(std::string_view json, std::string& error) {
    podBytes.assign(json);
    if (!podDecoder.decodePod(podBytes.view(), pod)) {
      error = "pod: " + podDecoder.errorMessage();
      profile = nullptr;
      return false;
    }
    ++cycle;
    profile = &config.profileFor(pod);
    return true;
  }
  // decode, then the profile's preFilter against a fresh snapshot.
  bool begin(std::string_view json, std::string& error) {
    if (!decode(json, error)) return false;
    snap = Snapshot();
    snap = reader.acquire();
    failures.clear();
    const plugins::Status st = run.begin(*profile, pod, snap);
    failures.emplace_back(toCode(st.code), std::string(st.reason));
    return true;
  }
  // The cycle `token` is current, or begins again from the pod's JSON.
  bool resume(uint64_t token, std::string_view json, std::string& error) {
    if (token == cycle && profile != nullptr) return true;
    return begin(json, error);
  }
  void expireReservations() {
    const auto now = fleetsched::cache::Clock::now();
    if (now - lastExpire < kExpireEvery) return;
    lastExpire = now;
    cache.expire(now);
  }
};

extern "C" {

fs_engine* fs_engine_new(const char* config, size_t len, char* err, size_t err_cap) {
  return guarded<fs_engine*>(nullptr, err, err_cap, [&]() -> fs_engine* {
    const std::string_view text = view(config, len);
    std::optional<plugins::Config> loaded;
    if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
      loaded = plugins::defaultConfig();
    } else {
      std::string error;
      loaded = plugins::loadConfig(text, error);
      if (!loaded) {
        copyText(error, err, err_cap);
        return nullptr;
      }
    }
    return new fs_engine(std::move(*loaded));
  });
}

void fs_engine_free(fs_engine* e) { delete e; }

int fs_node_upsert(fs_engine* e, const char* json, size_t len, char* err, size_t err_cap) {
  return guarded(-1, err, err_cap, [&] {
    std::lock_guard lock(e->updateMutex);
    e->updateBytes.assign(view(json, len));
    codec::Node node;
    if (!e->updateDecoder.decodeNode(e->updateBytes.view(), node)) {
      copyText("node: " + e->updateDecoder.errorMessage(), err, err_cap);
      return -1;
    }
    if (node.name.empty()) {
      copyText("node: metadata.name is empty", err, err_cap);
      return -1;
    }
    e->cache.upsertNode(node);
    return 0;
  });
}

int fs_node_delete(fs_engine* e, const char* name, size_t len) {
  return guarded(-1, nullptr, 0, [&] {
    e->cache.deleteNode(view(name, len));
    return 0;
  });
}

int fs_pod_upsert(fs_engine* e, const char* json, size_t len, char* err, size_t err_cap) {
  return guarded(-1, err, err_cap, [&] {
    std::lock_guard lock(e->updateMutex);
    e->updateBytes.assign(view(json, len));
    codec::Pod pod;
    if (!e->updateDecoder.decodePod(e->updateBytes.view(), pod)) {
      copyText("pod: " + e->updateDecoder.errorMessage(), err, err_cap);
      return -1;
    }
    if (pod.uid.empty()) {
      copyText("pod: metadata.uid is empty", err, err_cap);
      return -1;
    }
    e->cache.upsertPod(pod);
    return 0;
  });
}

int fs_pod_delete(fs_engine* e, const char* uid, size_t len) {
  return guarded(-1, nullptr, 0, [&] {
    e->cache.deletePod(view(uid, len));
    return 0;
  });
}

int fs_prefilter(fs_engine* e, const char* pod, size_t len, uint8_t* verdict, uint16_t* pods, size_t cap,
                 fs_prefilter_result* out, char* err, size_t err_cap) {
  return guarded(-1, err, err_cap, [&] {
    std::lock_guard lock(e->cycleMutex);
    *out = fs_prefilter_result{};
    e->expireReservations();
    std::string error;
    if (!e->begin(view(pod, len), error)) {
      copyText(error, err, err_cap);
      return -1;
    }
    out->cycle = e->cycle;
    out->id_limit = e->snap.idLimit();
    out->name_set = e->snap.nameSetVersion();
    out->code = e->failures[0].first;
    if (!e->run.admitted() || cap < out->id_limit) return 0;

    e->nodes.clear();
    e->snap.collect(e->nodes);
    e->ids.clear();
    for (const plugins::NodeInfo* n : e->nodes) e->ids.push_back(n->id);
    const std::span<const plugins::Verdict> verdicts =
        e->run.filter({e->nodes, e->ids, &e->rows.refresh(e->snap, e->profile->gpuResources())});
    // The cycle numbers distinct failures from 1 already; past kMaxFailures the last code
    // stands for the rest.
    const plugins::FailureCodes& failures = e->run.failures();
    const auto codes = static_cast<plugins::Verdict>(std::min<size_t>(failures.size(), kMaxFailures));
    for (plugins::Verdict k = 1; k <= codes; ++k) {
      e->failures.emplace_back(toCode(failures.status(k).code), std::string(failures.status(k).reason));
    }
    std::fill_n(verdict, out->id_limit, kHole);
    if (pods != nullptr) std::fill_n(pods, out->id_limit, uint16_t{0});
    for (size_t i = 0; i < e->nodes.size(); ++i) {
      const plugins::NodeInfo& n = *e->nodes[i];
      if (pods != nullptr) pods[n.id] = static_cast<uint16_t>(std::clamp<int64_t>(n.usedPods, 0, UINT16_MAX));
      verdict[n.id] = static_cast<uint8_t>(std::min(verdicts[i], codes));
      out->feasible += verdicts[i] == plugins::kPass;
    }
    return 0;
  });
}

int32_t fs_reason(fs_engine* e, uint32_t k, char* buf, size_t cap, size_t* len) {
  return guarded<int32_t>(FS_ERROR, buf, cap, [&]() -> int32_t {
    std::lock_guard lock(e->cycleMutex);
    if (k >= e->failures.size()) {
      copyText("fleetsched: unknown failure", buf, cap);
      if (len != nullptr) *len = 0;
      return FS_ERROR;
    }
    const auto& [code, reason] = e->failures[k];
    copyText(reason, buf, cap);
    if (len != nullptr) *len = std::min(reason.size(), cap == 0 ? 0 : cap - 1);
    return code;
  });
}

size_t fs_node_names(fs_engine* e, char* buf, size_t cap, uint64_t* name_set, uint32_t* count, size_t* len) {
  return guarded<size_t>(0, nullptr, 0, [&]() -> size_t {
    std::lock_guard lock(e->cycleMutex);
    // The cycle's snapshot when one is held, so the names match its verdicts.
    Snapshot fresh;
    if (e->snap.version() == 0) fresh = e->reader.acquire();
    const Snapshot& s = e->snap.version() != 0 ? e->snap : fresh;
    size_t need = 0;
    for (uint32_t id = 0; id < s.idLimit(); ++id) {
      const plugins::NodeInfo* n = s.node(id);
      need += (n == nullptr ? 0 : n->name.size()) + 1;
    }
    if (need > cap) return need;
    size_t at = 0;
    for (uint32_t id = 0; id < s.idLimit(); ++id) {
      const plugins::NodeInfo* n = s.node(id);
      if (n != nullptr) {
        std::memcpy(buf + at, n->name.data(), n->name.size());
        at += n->name.size();
      }
      buf[at++] = '\0';
    }
    *name_set = s.nameSetVersion();
    *count = s.idLimit();
    *len = at;
    return 0;
  });
}

int fs_score(fs_engine* e, uint64_t cycle, const char* pod, size_t len, const uint32_t* ids, size_t n, int64_t* out,
             char* err, size_t err_cap) {
  return guarded(-1, err, err_cap, [&] {
    std::lock_guard lock(e->cycleMutex);
    std::string error;
    if (!e->resume(cycle, view(pod, len), error)) {
      copyText(error, err, err_cap);
      return -1;
    }
    e->nodes.clear();
    for (size_t i = 0; i < n; ++i) {
      const plugins::NodeInfo* node = e->snap.node(ids[i]);
      if (node == nullptr) {
        copyText("fleetsched: node id " + std::to_string(ids[i]) + " is not in the cycle's snapshot", err, err_cap);
        return -1;
      }
      e->nodes.push_back(node);
    }
    e->wire.assign(n, 0);
    if (e->run.admitted() && n > 0) {
      e->run.extenderScores({e->nodes, {ids, n}, &e->rows.refresh(e->snap, e->profile->gpuResources())}, e->wire);
    }
    // The extender's 0..10 on the framework's 0..100: what kube-scheduler makes of an extender
    // score (times MaxNodeScore / MaxExtenderPriority), so both deployments rank alike.
    for (size_t i = 0; i < n; ++i) out[i] = int64_t{e->wire[i]} * (plugins::kMaxNodeScore / plugins::kMaxExtenderScore);
    return 0;
  });
}

int32_t fs_filter_node(fs_engine* e, uint64_t cycle, const char* pod, size_t len, const char* node, size_t node_len,
                       const char* removed, size_t removed_len, const char* added, size_t added_len, char* err,
                       size_t err_cap) {
  return guarded<int32_t>(FS_ERROR, err, err_cap, [&]() -> int32_t {
    std::lock_guard lock(e->cycleMutex);
    std::string error;
    if (!e->resume(cycle, view(pod, len), error)) {
      copyText(error, err, err_cap);
      return FS_ERROR;
    }
    if (!e->run.admitted()) {
      copyText(e->failures[0].second, err, err_cap);
      return e->failures[0].first;
    }
    // The node as the engine holds it now, not as the cycle's snapshot did: the removed pods are
    // looked up in the current cache, and a deletion applied since the snapshot must not be
    // charged again (seen in the e2e preemption scenarios: a victim deleted between fs_prefilter
    // and preemption's what-if still counted, and kube-scheduler took a third victim).
    const Snapshot current = e->reader.acquire();
    const plugins::NodeInfo* known = current.find(view(node, node_len));
    if (known == nullptr) {
      copyText("node " + std::string(view(node, node_len)) + " is not in fleetsched's cache yet", err, err_cap);
      return FS_UNSCHEDULABLE;
    }
    plugins::NodeInfo sim = *known;
    for (std::string_view rest = view(removed, removed_len); !rest.empty();) {
      const size_t end = std::min(rest.find('\0'), rest.size());
      fleetsched::cache::PodCharge charge;
      if (end > 0 && e->cache.podCharge(rest.substr(0, end), charge) && charge.node == known->id) {
        fleetsched::cache::uncharge(charge, sim);
      }
      rest.remove_prefix(std::min(end + 1, rest.size()));
    }
    for (std::string_view rest = view(added, added_len); !rest.empty();) {
      const size_t end = std::min(rest.find('\0'), rest.size());
      if (end > 0) {
        e->addBytes.assign(rest.substr(0, end));
        plugins::PodInfo info;
        if (!e->addDecoder.decodePod(e->addBytes.view(), e->added)) {
          copyText("added pod: " + e->addDecoder.errorMessage(), err, err_cap);
          return FS_ERROR;
        }
        if (plugins::derivePodInfo(e->added, e->profile->gpuResources(), info).ok()) fleetsched::cache::charge(info, sim);
      }
      rest.remove_prefix(std::min(end + 1, rest.size()));
    }
    const plugins::Status st = e->run.filterOne(sim);
    copyText(st.reason, err, err_cap);
    return toCode(st.code);
  });
}

int32_t fs_reserve(fs_engine* e, const char* pod, size_t len, const char* node, size_t node_len, char* annotations,
                   size_t annotations_cap, size_t* annotations_len, char* err, size_t err_cap) {
  if (annotations_len == nullptr) {
    copyText("fs_reserve: annotations_len is NULL", err, err_cap);
    return FS_ERROR;
  }
  *annotations_len = 0;
  if (annotations_cap < FS_BINDING_ANNOTATIONS_MAX) {
    copyText("fs_reserve: the annotations buffer must hold FS_BINDING_ANNOTATIONS_MAX bytes", err, err_cap);
    return FS_ERROR;
  }
  return guarded<int32_t>(FS_ERROR, err, err_cap, [&]() -> int32_t {
    std::lock_guard lock(e->cycleMutex);
    std::string error;
    if (!e->decode(view(pod, len), error)) {
      copyText(error, err, err_cap);
      return FS_ERROR;
    }
    // Decide on the current version, which holds every earlier reservation.
    e->snap = Snapshot();
    Cache::Writer w = e->cache.write();
    Snapshot current = e->reader.acquire();
    const fleetsched::cache::Reservation r =
        fleetsched::cache::reserveOnNode(e->run, *e->profile, e->pod, current, w, view(node, node_len), kReservationTtl);
    e->profile = nullptr;  // the cycle is over: a later fs_score / fs_filter_node begins again
    if (!r.ok()) {
      copyText(r.refused, err, err_cap);
      return FS_UNSCHEDULABLE;
    }
    std::string pairs;
    for (const auto& [key, value] : fleetsched::cache::bindingAnnotations(r.placed)) {
      pairs.append(key).push_back('\0');
      pairs.append(value).push_back('\0');
    }
    // gpu-index names at most kMaxGpusPerNode indexes: far below the maximum.
    assert(pairs.size() <= FS_BINDING_ANNOTATIONS_MAX);
    std::copy(pairs.begin(), pairs.end(), annotations);
    *annotations_len = pairs.size();
    return FS_SUCCESS;
  });
}

int fs_unreserve(fs_engine* e, const char* uid, size_t len) {
  return guarded(-1, nullptr, 0, [&] {
    e->cache.unreserve(view(uid, len));
    return 0;
  });
}

int fs_signable(fs_engine* e, const char* pod, size_t len) {
  return guarded(0, nullptr, 0, [&] {
    std::lock_guard lock(e->cycleMutex);
    std::string error;
    if (!e->decode(view(pod, len), error)) return 0;
    std::string workload;
    for (const plugins::Profile::Entry& entry : e->profile->plugins()) {
      if (entry.weight != 0 && entry.plugin->scores() && entry.plugin->name() == "Zone" &&
          e->cache.interpretation().workloadKey(e->pod, workload)) {
        return 0;
      }
    }
    return 1;
  });
}

void fs_engine_stats(fs_engine* e, fs_stats* out) {
  guarded(0, nullptr, 0, [&] {
    const fleetsched::cache::CacheStats s = e->cache.stats();
    *out = fs_stats{s.nodes, s.boundPods, s.reservationsLive, s.gpuOvercommits, 0, 0};
    std::lock_guard<std::mutex> lock(e->statsMutex);
    const Snapshot snap = e->statsReader.acquire();
    snap.forEachNode([out](const plugins::NodeInfo& n) {
      if (n.scalarCount == 0) return;
      out->gpus_total += static_cast<uint64_t>(std::max<int64_t>(n.scalars[0].allocatable, 0));
      out->gpus_free += static_cast<uint64_t>(std::max<int64_t>(n.scalars[0].allocatable - n.scalars[0].used, 0));
    });
    return 0;
  });
}

}  // extern "C"
