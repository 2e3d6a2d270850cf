#include "codec/decoder.h"

#include <fstream>
#include <sstream>
#include <string>

#include "codec/decoder_internal.h"

namespace fleetsched::codec {

// ---- Decoder --------------------------------------------------------------------------------

Decoder::Decoder(size_t maxDocumentBytes) : impl_(std::make_unique<Impl>(maxDocumentBytes)) {}
Decoder::~Decoder() = default;

bool Decoder::decodePod(std::string_view padded, Pod& out) {
  Impl& d = *impl_;
  sj::object root;
  bool ok = d.begin(padded, root) && d.pod(root, out) && d.end();
  return Finish{}(ok, d, error_, message_);
}

bool Decoder::decodeNode(std::string_view padded, Node& out) {
  Impl& d = *impl_;
  sj::object root;
  bool ok = d.begin(padded, root) && d.node(root, out, Impl::firstByte(padded)) && d.end();
  return Finish{}(ok, d, error_, message_);
}

bool Decoder::decodeLease(std::string_view padded, Lease& out) {
  Impl& d = *impl_;
  out = Lease{};
  sj::object root;
  bool ok = d.begin(padded, root) && d.objectFields(root, [&](std::string_view k, sj::value& v) {
    if (k == "metadata") {
      return d.fields(v, [&](std::string_view k2, sj::value& v2) {
        if (k2 == "resourceVersion") return d.str(v2, out.resourceVersion) || d.at(k2);
        return true;
      }) || d.at("metadata");
    }
    if (k == "spec") {
      return d.fields(v, [&](std::string_view k2, sj::value& v2) {
        bool ok2 = true;
        if (k2 == "holderIdentity") ok2 = d.str(v2, out.holderIdentity);
        else if (k2 == "leaseDurationSeconds") ok2 = d.i32(v2, out.leaseDurationSeconds);
        else if (k2 == "acquireTime") ok2 = d.str(v2, out.acquireTime);
        else if (k2 == "renewTime") ok2 = d.str(v2, out.renewTime);
        else if (k2 == "leaseTransitions") ok2 = d.i32(v2, out.leaseTransitions);
        return ok2 || d.at(k2);
      }) || d.at("spec");
    }
    return true;
  }) && d.end();
  if (ok && out.resourceVersion.empty()) ok = d.fail("missing metadata.resourceVersion");
  return Finish{}(ok, d, error_, message_);
}

namespace {

// A list response (`kubectl get nodes -o json`, a LIST call): items decoded into reused slots
// by `item`, and the list's resourceVersion and continue token.
template <typename List, typename Reset, typename Item>
bool decodeList(Decoder::Impl& d, std::string_view padded, List& out, Reset reset, Item item) {
  out.resourceVersion = out.continueToken = {};
  size_t used = 0;
  sj::object root;
  bool ok = d.begin(padded, root) && d.objectFields(root, [&](std::string_view k, sj::value& v) {
    if (k == "items") {
      used = 0;
      return d.elements(v, [&](size_t, sj::value& el) { return item(el, nextSlot(out.items, used, reset)); }) ||
             d.at("items");
    }
    if (k == "metadata") {
      return d.fields(v, [&](std::string_view k2, sj::value& v2) {
        if (k2 == "resourceVersion") return d.str(v2, out.resourceVersion) || d.at(k2);
        if (k2 == "continue") return d.str(v2, out.continueToken) || d.at(k2);
        return true;
      }) || d.at("metadata");
    }
    return true;
  }) && d.end();
  out.items.resize(used);
  return ok;
}

}  // namespace

bool Decoder::decodeNodeList(std::string_view padded, NodeList& out) {
  Impl& d = *impl_;
  const bool ok = decodeList(d, padded, out, resetNode, [&](sj::value& el, Node& n) { return d.node(el, n); });
  return Finish{}(ok, d, error_, message_);
}

bool Decoder::decodePodList(std::string_view padded, PodList& out) {
  Impl& d = *impl_;
  const bool ok = decodeList(d, padded, out, resetPod, [&](sj::value& el, Pod& p) { return d.pod(el, p); });
  return Finish{}(ok, d, error_, message_);
}

bool Decoder::decodeWatchEvent(std::string_view padded, ObjectKind kind, WatchEvent& out) {
  Impl& d = *impl_;
  out.kind = {};
  out.resourceVersion = {};
  out.initialEventsEnd = false;
  out.status = {};
  resetPod(out.pod);
  resetNode(out.node);
  bool sawType = false, sawObject = false;
  sj::object root;
  bool ok = d.begin(padded, root) && d.objectFields(root, [&](std::string_view k, sj::value& v) {
    if (k == "type") {
      std::string_view t;
      if (!d.str(v, t)) return d.at("type");
      sawType = true;
      if (t == "ADDED") out.type = WatchEventType::Added;
      else if (t == "MODIFIED") out.type = WatchEventType::Modified;
      else if (t == "DELETED") out.type = WatchEventType::Deleted;
      else if (t == "BOOKMARK") out.type = WatchEventType::Bookmark;
      else if (t == "ERROR") out.type = WatchEventType::Error;
      else return d.fail("unknown event type \"" + std::string(t.substr(0, 32)) + "\"") || d.at("type");
      return true;
    }
    if (k != "object") return true;
    sawObject = true;
    // The object is a Pod, a Node or (ERROR) a Status. Its shape tells which, whatever the
    // order of "type" and "object": Status has a string "status" and top-level code/reason/
    // message; Pod and Node keep theirs under metadata/spec/status.
    d.beginPod();
    Pod& p = out.pod;
    Node& n = out.node;
    Impl::MetaOut m = kind == ObjectKind::Pod
                          ? Impl::MetaOut{&p.name, &p.namespace_, &p.uid, &p.resourceVersion, &p.labels,
                                          &p.annotations, &p.ownerReferences, &p.terminating}
                          : Impl::MetaOut{&n.name, nullptr, &n.uid, &n.resourceVersion, &n.labels, &n.annotations,
                                          nullptr, nullptr};
    const char* start = v.raw_json_token().data();
    bool r = d.fields(v, [&](std::string_view k2, sj::value& v2) {
      bool ok2 = true;
      if (k2 == "kind") {
        ok2 = d.str(v2, out.kind);
      } else if (k2 == "metadata") {
        ok2 = d.meta(v2, m);
      } else if (k2 == "spec") {
        ok2 = kind == ObjectKind::Pod ? d.podSpec(v2, p) : d.nodeSpec(v2, n);
      } else if (k2 == "status") {
        sj::json_type t;
        if (v2.type().get(t) != simdjson::SUCCESS) return d.fail("invalid JSON") || d.at(k2);
        if (t == sj::json_type::string) ok2 = d.str(v2, out.status.status);
        else ok2 = kind == ObjectKind::Pod ? d.podStatus(v2, p) : d.nodeStatus(v2, n);
      } else if (k2 == "code") {
        ok2 = d.i32(v2, out.status.code);
      } else if (k2 == "reason") {
        ok2 = d.str(v2, out.status.reason);
      } else if (k2 == "message") {
        ok2 = d.str(v2, out.status.message);
      }
      return ok2 || d.at(k2);
    });
    if (!r) return d.at("object");
    if (kind == ObjectKind::Pod) {
      if (!d.finishPod(p)) return d.at("object");
    } else {
      n.raw = d.rawUntilHere(start);
    }
    return true;
  }) && d.end();
  if (ok && (!sawType || !sawObject)) ok = d.fail(!sawType ? "missing type" : "missing object");
  if (ok) {
    const auto& annotations = kind == ObjectKind::Pod ? out.pod.annotations : out.node.annotations;
    out.resourceVersion = kind == ObjectKind::Pod ? out.pod.resourceVersion : out.node.resourceVersion;
    if (out.type == WatchEventType::Bookmark) {
      const std::string_view* v = findKey(annotations, "k8s.io/initial-events-end");
      out.initialEventsEnd = v != nullptr && *v == "true";
    }
  }
  return Finish{}(ok, d, error_, message_);
}

// ---- PaddedBuffer ----------------------------------------------------------------------------

void PaddedBuffer::assign(std::string_view bytes) {
  size_ = bytes.size();
  data_.assign(bytes);
  data_.append(kDecodePadding, '\0');
}

bool PaddedBuffer::loadFile(const std::string& path, std::string& err) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    err = "cannot open " + path;
    return false;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) {
    err = "cannot read " + path;
    return false;
  }
  assign(ss.str());
  return true;
}

}  // namespace fleetsched::codec
