// Encoders for the extender/v1 replies, byte for byte what Go's json.Marshal writes for the same
// values: field order of the Go structs, map keys sorted bytewise (Go's strings.Compare), Go's
// string escaping (see json_writer.h). Each appends to `out` and never fails.
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

#include <span>
#include <string>
#include <string_view>

#include "codec/buffer.h"
#include "codec/extender.h"

namespace fleetsched::codec {

// The failed lists may come in any order; they are written sorted. A Go map holds a key once:
// of duplicate node names the last entry wins, as repeated map assignment would.
void encodeFilterResult(const FilterResult& r, Buffer& out);

// Bytes [from, from + 8) of `s` as a big-endian integer, zero-padded past the end: comparing
// the prefixes at 0 and 8 orders names as Go orders map keys (bytewise) in almost every case,
// with the full names as the tie-break.
uint64_t nameSortPrefix(std::string_view s, size_t from);

// hostsEncoded: every host is a JSON string already (quoted and escaped), copied as it is.
void encodeHostPriorityList(std::span<const HostPriority> list, Buffer& out, bool hostsEncoded = false);

// Bytes a caller may promise readable from the start of each string it hands an encoder
// (padding after the last one): the encoder then copies short strings in one fixed-size block.
inline constexpr size_t kCopySlack = 64;

// The same reply as encodeHostPriorityList(list, out, true) from per-host entry prefixes
// (appendHostScorePrefix of each quoted host) and the scores: no per-entry field writing.
// padded: kCopySlack bytes are readable from the start of every prefix.
void encodeHostScores(std::span<const std::string_view> prefixes, std::span<const int32_t> scores, Buffer& out,
                      bool padded = false);
// Appends `{"Host":` quotedHost `,"Score":`.
void appendHostScorePrefix(std::string_view quotedHost, std::string& out);

// Writes each node's `uids`, nodes sorted by name (duplicates: the last wins).
void encodePreemptionResult(std::span<const NodeVictims> victims, Buffer& out);

void encodeBindingResult(std::string_view error, Buffer& out);

}  // namespace fleetsched::codec
