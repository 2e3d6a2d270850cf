/* fleetsched's engine behind a C ABI, for the in-process kube-scheduler plugin (cgo).
 *
 * One fs_engine holds a validated FleetschedConfiguration and a node/pod cache fed by the
 * caller (the plugin forwards kube-scheduler's informer events). Decisions are the same C++ code
 * `fleetsched serve` runs: the profile's plugins over the cache's snapshot.
 *
 * Rules every function keeps:
 *   - no C++ exception and no abort crosses this boundary: failures come back as a non-zero
 *     return value and an error text;
 *   - inputs are (pointer, length) pairs and are copied before use; outputs go into memory the
 *     caller provides (the caller may pass Go memory: nothing is kept after the call returns);
 *   - cache updates (fs_*_upsert, fs_*_delete, fs_unreserve) may come from any thread; cycle
 *     calls (fs_prefilter .. fs_reserve) serialize on the engine, one scheduling cycle at a time,
 *     and preemption's concurrent fs_filter_node calls wait for each other.
 *
 * Error texts: `err` receives at most `err_cap` - 1 bytes and a terminating NUL.
 */
#ifndef FLEETSCHED_CAPI_H
#define FLEETSCHED_CAPI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fs_engine fs_engine;

/* Status codes, as the scheduling framework's (fwk.Code). */
enum {
  FS_SUCCESS = 0,
  FS_ERROR = 1,
  FS_UNSCHEDULABLE = 2,
  FS_UNSCHEDULABLE_AND_UNRESOLVABLE = 3,
};

/* A FleetschedConfiguration (YAML or JSON; empty: the default profile), validated with the
 * messages `fleetsched serve --config` gives. NULL on error, with the reason in err. */
fs_engine* fs_engine_new(const char* config, size_t len, char* err, size_t err_cap);
void fs_engine_free(fs_engine* e);

/* Cache updates: a Node or Pod object as JSON (what kube-apiserver serves). Return 0, or -1 with
 * the reason in err (the cache is unchanged then). */
int fs_node_upsert(fs_engine* e, const char* json, size_t len, char* err, size_t err_cap);
int fs_node_delete(fs_engine* e, const char* name, size_t len);
int fs_pod_upsert(fs_engine* e, const char* json, size_t len, char* err, size_t err_cap);
int fs_pod_delete(fs_engine* e, const char* uid, size_t len);

/* What fs_prefilter found. */
typedef struct {
  int32_t code;        /* FS_*: FS_SUCCESS, or the pod fits no node (reason from fs_reason(e, 0, ..)) */
  uint32_t id_limit;   /* node ids are below this; verdict needs id_limit bytes */
  uint32_t feasible;   /* nodes that passed */
  uint64_t name_set;   /* which id -> name map the verdicts use (fs_node_names) */
  uint64_t cycle;      /* this cycle's token, for fs_score / fs_filter_node */
} fs_prefilter_result;

/* Starts the scheduling cycle of the pod (JSON) and runs its profile's filters over every node of
 * the current snapshot. verdict[id] gets 0 for a node that passes, 255 for an id without a node,
 * or a failure number k (1..254) whose status comes from fs_reason(e, k, ..). pods (may be NULL)
 * gets, for every node of the snapshot, how many pods it charges there (bound and reserved, at
 * most 65535): a caller whose own view of the node holds fewer pods knows the verdict may be
 * stale. Both buffers hold `cap` entries; when cap is below id_limit nothing is written: call
 * again with larger buffers. Returns 0, or -1 when the pod JSON cannot be decoded (reason in
 * err). */
int fs_prefilter(fs_engine* e, const char* pod, size_t len, uint8_t* verdict, uint16_t* pods, size_t cap,
                 fs_prefilter_result* out, char* err, size_t err_cap);

/* Failure k of the cycle's last fs_prefilter (0: the pre-filter failure that rejects every node).
 * Returns its FS_* code and copies its reason into buf. */
int32_t fs_reason(fs_engine* e, uint32_t k, char* buf, size_t cap, size_t* len);

/* Node names by id for the snapshot with name set `*name_set`: names separated by '\0' into buf
 * (an id without a node gets an empty name). Sets *name_set, *count and *len; returns 0, or the
 * size needed when cap is too small (nothing written). */
size_t fs_node_names(fs_engine* e, char* buf, size_t cap, uint64_t* name_set, uint32_t* count, size_t* len);

/* Scores nodes ids[0..n) for the cycle `cycle` (re-decoding `pod` if another cycle ran since):
 * out[i] is 0..100, the profile's weighted total mapped as the extender's prioritize maps it
 * (times 10). Returns 0, or -1 with the reason in err. */
int fs_score(fs_engine* e, uint64_t cycle, const char* pod, size_t len, const uint32_t* ids, size_t n, int64_t* out,
             char* err, size_t err_cap);

/* Filters the cycle's pod on node `node` as the engine holds it now (not as the cycle's snapshot
 * did) with the pods whose UIDs are listed in `removed` (separated by '\0') gone from it and the
 * pods in `added` (JSON objects, each followed by '\0') bound to it: preemption's what-if, and
 * the node as kube-scheduler's NodeInfo holds it when the engine is behind. Returns the FS_*
 * code, the reason in err. */
int32_t fs_filter_node(fs_engine* e, uint64_t cycle, const char* pod, size_t len, const char* node, size_t node_len,
                       const char* removed, size_t removed_len, const char* added, size_t added_len, char* err,
                       size_t err_cap);

/* Reserves the pod on `node`: re-checks the node, picks its GPUs and charges them, so the next
 * cycle sees them. annotations receives what the pod's Binding must carry, exactly as the
 * extender's bind posts it: key '\0' value '\0' for each annotation, *annotations_len bytes in
 * all (0: none, the device plugin chooses); annotations_cap must be at least
 * FS_BINDING_ANNOTATIONS_MAX (else FS_ERROR, nothing reserved). Returns FS_SUCCESS, or another
 * FS_* code with the reason in err. */
#define FS_BINDING_ANNOTATIONS_MAX 1024
int32_t fs_reserve(fs_engine* e, const char* pod, size_t len, const char* node, size_t node_len, char* annotations,
                   size_t annotations_cap, size_t* annotations_len, char* err, size_t err_cap);
/* Releases what fs_reserve charged for the pod (no-op when none). */
int fs_unreserve(fs_engine* e, const char* uid, size_t len);

/* 1 when the pod's decision on a node depends on that node alone, so kube-scheduler may reuse it for
 * the next pod with the same signature (SignPlugin); 0 when it depends on other pods too (the
 * Zone plugin counts the pod's workload per zone) or the pod cannot be read. */
int fs_signable(fs_engine* e, const char* pod, size_t len);

typedef struct {
  uint64_t nodes;
  uint64_t bound_pods;
  uint64_t reservations_live;
  uint64_t gpu_overcommits;
  /* Summed over the nodes: each node's GPU resource (its first, as `serve`'s /debug/nodes shows
   * it), allocatable and not charged. */
  uint64_t gpus_total;
  uint64_t gpus_free;
} fs_stats;
void fs_engine_stats(fs_engine* e, fs_stats* out);

#ifdef __cplusplus
}
#endif

#endif /* FLEETSCHED_CAPI_H */
