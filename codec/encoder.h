// Encoders for the extender/v1 replies, byte for byte what Go's json.Marshal writes for the same
// values: field order of the Go structs, map keys sorted bytewise (Go's strings.Compare), Go's
// string escaping (see json_writer.h). One encoder per reply and payload mode; each appends to
// `out` and never fails. Every byte fleetsched answers an extender verb with is written here.
//
// Empty vs nil (Go writes null for nil slices and maps; kube-scheduler reads both the same way,
// except a null NodeNames in a NodeNames-mode filter reply, which rejects every node):
//   filter:     the mode's list is always written ([] / "items":[] when nothing passes), the
//               other one is null; failed maps are {} when empty. A non-empty error writes
//               Go's zero-value result: {"Nodes":null,"NodeNames":null,"FailedNodes":null,
//               "FailedAndUnresolvableNodes":null,"Error":"..."}.
//   prioritize: [] when empty.
//   preempt:    {"NodeNameToMetaVictims":{}} when empty; each node's Pods is [] when empty.
//   bind:       {"Error":""} on success.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "codec/buffer.h"
#include "codec/extender.h"
#include "codec/node_name_table.h"

namespace fleetsched::codec {

// Filter, full Nodes: the passing nodes' input bytes echoed, the failed maps sorted. The failed
// lists may come in any order; a Go map holds a key once: of duplicate node names the last entry
// wins, as repeated map assignment would.
void encodeFilterResult(const FilterResult& r, Buffer& out);

// Filter, NodeNames: which of the request's names pass, and why the others fail, as verdict
// codes over a NodeNameTable, so that names are copied pre-encoded, the failed maps are walked
// in name order by rank (no sort) and each distinct reason is escaped once.
enum class FailedMap : uint8_t { None, Failed, Unresolvable };  // None: the node passes
struct FilterReason {
  std::string_view text;
  FailedMap map = FailedMap::None;
};
template <class Code>
struct NodeNamesVerdicts {
  std::span<const uint32_t> ids;    // the table id of each listed name the table knows, in list order
  std::span<const Code> codes;      // codes[i]: ids[i]'s verdict, an index into reasons (below its size)
  std::span<const FilterReason> reasons;
  std::span<const uint32_t> passed;  // the NodeNames list: ids kept, in reply order
  // Listed names the table lacks, in any order, repeats allowed: FailedNodes, for unknownReason.
  std::span<const std::string_view> unknown;
  std::string_view unknownReason;
};
// A node listed twice has one entry in a failed map; `passed` is written as given. Instantiated for uint8_t and uint32_t codes (the plugins' verdicts, plugins::Verdict).
template <class Code>
void encodeNodeNamesFilter(const NodeNameTable& table, const NodeNamesVerdicts<Code>& v, Buffer& out);

// Prioritize, full Nodes: `list` in its order.
void encodeHostPriorityList(std::span<const HostPriority> list, Buffer& out);
// Prioritize, NodeNames: the nodes `ids` of `table` with `scores` (same size), in their order.
void encodeHostScores(const NodeNameTable& table, std::span<const uint32_t> ids, std::span<const int32_t> scores,
                      Buffer& out);

// Writes each node's `uids`, nodes sorted by name (duplicates: the last wins).
void encodePreemptionResult(std::span<const NodeVictims> victims, Buffer& out);

void encodeBindingResult(std::string_view error, Buffer& out);

}  // namespace fleetsched::codec
