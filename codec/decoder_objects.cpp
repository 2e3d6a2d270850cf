// The Decoder's Kubernetes objects: resource lists and quantities, object metadata, Pod (with its
// effective requests) and Node. The parser state and primitives are in decoder_internal.h.
#include "codec/decoder_internal.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace fleetsched::codec {

// Rounds a list into model Resources: cpu to milli-cores, the rest to whole units.
bool Decoder::Impl::toResources(const ResList& l, Resources& out) {
  for (const auto& r : l.items) {
    int64_t v = 0;
    if (nanoToScaled(r.nano, r.name == "cpu" ? 3 : 0, v) != QuantityError::None) {
      return fail("quantity out of range") || at(r.name);
    }
    if (r.name == "cpu") {
      out.milliCpu = v;
    } else if (r.name == "memory") {
      out.memory = v;
    } else if (r.name == "ephemeral-storage") {
      out.ephemeralStorage = v;
    } else if (r.name == "pods") {
      out.pods = v;
    } else {
      out.scalar.push_back({r.name, v});
    }
  }
  return true;
}

// A node's ResourceList straight into Resources (no sums, so no wide arithmetic).
bool Decoder::Impl::resourcesDirect(sj::value& v, Resources& out) {
  resetResources(out);
  return fields(v, [&](std::string_view k, sj::value& val) {
    std::string_view s;
    if (!str(val, s)) return at(k);
    int64_t amount = 0;
    QuantityError qe = k == "cpu" ? parseQuantityMilli(s, amount) : parseQuantityValue(s, amount);
    if (qe != QuantityError::None) return failQuantity(qe, s) || at(k);
    if (k == "cpu") {
      out.milliCpu = amount;
    } else if (k == "memory") {
      out.memory = amount;
    } else if (k == "ephemeral-storage") {
      out.ephemeralStorage = amount;
    } else if (k == "pods") {
      out.pods = amount;
    } else if (ResourceAmount* r = findScalar(out, k)) {
      r->value = amount;  // a repeated key: the last one wins, as in Go
    } else {
      out.scalar.push_back({k, amount});
    }
    return true;
  });
}
ResourceAmount* Decoder::Impl::findScalar(Resources& r, std::string_view name) {
  for (auto& x : r.scalar) {
    if (x.name == name) return &x;
  }
  return nullptr;
}
bool Decoder::Impl::failQuantity(QuantityError qe, std::string_view s) {
  std::string what(quantityErrorText(qe));
  what += " \"";
  what.append(s.substr(0, 64));
  what += '"';
  return fail(std::move(what));
}

// A ResourceList, in exact nano-units.
bool Decoder::Impl::quantityMap(sj::value& v, ResList& out) {
  out.clear();
  return fields(v, [&](std::string_view k, sj::value& val) {
    std::string_view s;
    if (!str(val, s)) return at(k);
    Nano128 amount = 0;
    QuantityError qe = parseQuantityNano(s, amount);
    // Values the int64 readers cannot represent are errors here too.
    int64_t check = 0;
    if (qe == QuantityError::None) qe = nanoToScaled(amount, k == "cpu" ? 3 : 0, check);
    if (qe != QuantityError::None) return failQuantity(qe, s) || at(k);
    out.set(k, amount);
    return true;
  });
}
// ---- Kubernetes objects -------------------------------------------------------------------

bool Decoder::Impl::meta(sj::value& v, const MetaOut& m) {
  return fields(v, [&](std::string_view k, sj::value& val) {
    bool ok = true;
    if (k == "name") {
      ok = str(val, *m.name);
    } else if (k == "namespace" && m.namespace_) {
      ok = str(val, *m.namespace_);
    } else if (k == "uid") {
      ok = str(val, *m.uid);
    } else if (k == "resourceVersion") {
      ok = str(val, *m.resourceVersion);
    } else if (k == "labels") {
      ok = stringMap(val, *m.labels);
    } else if (k == "annotations") {
      ok = stringMap(val, *m.annotations);
    } else if (k == "ownerReferences" && m.owners) {
      ok = ownerRefs(val, *m.owners);
    } else if (k == "deletionTimestamp" && m.terminating) {
      int n = isNull(val);
      if (n < 0) return at(k);
      if (n == 0) {
        std::string_view ts;
        ok = str(val, ts);
        *m.terminating = true;
      }
    }
    return ok || at(k);
  });
}

bool Decoder::Impl::ownerRefs(sj::value& v, std::vector<OwnerReference>& out) {
  out.clear();
  return elements(v, [&](size_t, sj::value& el) {
    OwnerReference o;
    bool ok = fields(el, [&](std::string_view k, sj::value& val) {
      bool r = true;
      if (k == "apiVersion") r = str(val, o.apiVersion);
      else if (k == "kind") r = str(val, o.kind);
      else if (k == "name") r = str(val, o.name);
      else if (k == "uid") r = str(val, o.uid);
      else if (k == "controller") r = boolean(val, o.controller);
      return r || at(k);
    });
    out.push_back(o);
    return ok;
  });
}

bool Decoder::Impl::selectorRequirements(sj::value& v, std::vector<NodeSelectorRequirement>& out) {
  out.clear();
  return elements(v, [&](size_t, sj::value& el) {
    NodeSelectorRequirement& r = out.emplace_back();
    return fields(el, [&](std::string_view k, sj::value& val) {
      bool ok = true;
      if (k == "key") {
        ok = str(val, r.key);
      } else if (k == "operator") {
        std::string_view op;
        ok = str(val, op);
        if (ok) {
          if (op == "In") r.op = SelectorOp::In;
          else if (op == "NotIn") r.op = SelectorOp::NotIn;
          else if (op == "Exists") r.op = SelectorOp::Exists;
          else if (op == "DoesNotExist") r.op = SelectorOp::DoesNotExist;
          else if (op == "Gt") r.op = SelectorOp::Gt;
          else if (op == "Lt") r.op = SelectorOp::Lt;
          else ok = fail("unknown operator \"" + std::string(op.substr(0, 32)) + "\"");
        }
      } else if (k == "values") {
        ok = stringList(val, r.values);
      }
      return ok || at(k);
    });
  });
}

bool Decoder::Impl::selectorTerm(sj::value& v, NodeSelectorTerm& t) {
  return fields(v, [&](std::string_view k, sj::value& val) {
    bool ok = true;
    if (k == "matchExpressions") ok = selectorRequirements(val, t.matchExpressions);
    else if (k == "matchFields") ok = selectorRequirements(val, t.matchFields);
    return ok || at(k);
  });
}

bool Decoder::Impl::nodeAffinity(sj::value& v, Pod& p) {
  return fields(v, [&](std::string_view k, sj::value& val) {
    bool ok = true;
    if (k == "requiredDuringSchedulingIgnoredDuringExecution") {
      p.requiredNodeAffinity.clear();
      ok = fields(val, [&](std::string_view k2, sj::value& v2) {
        if (k2 != "nodeSelectorTerms") return true;
        return elements(v2, [&](size_t, sj::value& el) {
          return selectorTerm(el, p.requiredNodeAffinity.emplace_back());
        }) || at(k2);
      });
    } else if (k == "preferredDuringSchedulingIgnoredDuringExecution") {
      p.preferredNodeAffinity.clear();
      ok = elements(val, [&](size_t, sj::value& el) {
        PreferredSchedulingTerm& t = p.preferredNodeAffinity.emplace_back();
        return fields(el, [&](std::string_view k2, sj::value& v2) {
          bool r = true;
          if (k2 == "weight") r = i32(v2, t.weight);
          else if (k2 == "preference") r = selectorTerm(v2, t.preference);
          return r || at(k2);
        });
      });
    }
    return ok || at(k);
  });
}

bool Decoder::Impl::taintEffect(std::string_view s, TaintEffect& out, bool allowEmpty) {
  if (s == "NoSchedule") out = TaintEffect::NoSchedule;
  else if (s == "PreferNoSchedule") out = TaintEffect::PreferNoSchedule;
  else if (s == "NoExecute") out = TaintEffect::NoExecute;
  else if (s.empty() && allowEmpty) out = TaintEffect::None;
  else return fail("unknown taint effect \"" + std::string(s.substr(0, 32)) + "\"");
  return true;
}

bool Decoder::Impl::tolerations(sj::value& v, std::vector<Toleration>& out) {
  out.clear();
  return elements(v, [&](size_t, sj::value& el) {
    Toleration& t = out.emplace_back();
    return fields(el, [&](std::string_view k, sj::value& val) {
      bool ok = true;
      std::string_view s;
      if (k == "key") {
        ok = str(val, t.key);
      } else if (k == "operator") {
        ok = str(val, s);
        if (ok) {
          if (s == "Exists") t.opExists = true;
          else if (s == "Equal" || s.empty()) t.opExists = false;
          else ok = fail("unknown toleration operator \"" + std::string(s.substr(0, 32)) + "\"");
        }
      } else if (k == "value") {
        ok = str(val, t.value);
      } else if (k == "effect") {
        ok = str(val, s) && taintEffect(s, t.effect, true);
      }
      return ok || at(k);
    });
  });
}

bool Decoder::Impl::taints(sj::value& v, std::vector<Taint>& out) {
  out.clear();
  return elements(v, [&](size_t, sj::value& el) {
    Taint& t = out.emplace_back();
    return fields(el, [&](std::string_view k, sj::value& val) {
      bool ok = true;
      std::string_view s;
      if (k == "key") ok = str(val, t.key);
      else if (k == "value") ok = str(val, t.value);
      else if (k == "effect") ok = str(val, s) && taintEffect(s, t.effect, false);
      return ok || at(k);
    });
  });
}

// resources: {limits, requests}; limits fill in missing requests (apiserver defaulting).
bool Decoder::Impl::resourceRequirements(sj::value& v, ResList& req, ResList& lim) {
  req.clear();
  lim.clear();
  return fields(v, [&](std::string_view k, sj::value& val) {
    bool ok = true;
    if (k == "requests") ok = quantityMap(val, req);
    else if (k == "limits") ok = quantityMap(val, lim);
    return ok || at(k);
  });
}

void Decoder::Impl::defaultRequests(ResList& req, const ResList& lim) {
  for (const auto& l : lim.items) {
    if (!req.find(l.name)) req.items.push_back(l);
  }
}

// One container: its requests (limits defaulted in) are left in ctrReq_; `sidecar` tells
// whether it is a restartable init container.
bool Decoder::Impl::container(sj::value& v, bool& sidecar) {
  sidecar = false;
  ctrReq_.clear();
  ctrLim_.clear();
  bool ok = fields(v, [&](std::string_view k, sj::value& val) {
    bool r = true;
    if (k == "resources") {
      r = resourceRequirements(val, ctrReq_, ctrLim_);
    } else if (k == "restartPolicy") {
      std::string_view s;
      r = str(val, s);
      sidecar = s == "Always";
    }
    return r || at(k);
  });
  if (ok) defaultRequests(ctrReq_, ctrLim_);
  return ok;
}

bool Decoder::Impl::podSpec(sj::value& v, Pod& p) {
  return fields(v, [&](std::string_view k, sj::value& val) {
    bool ok = true;
    if (k == "containers") {
      ok = elements(val, [&](size_t, sj::value& el) {
        bool sidecar = false;
        if (!container(el, sidecar)) return false;
        sum_.add(ctrReq_);
        return true;
      });
    } else if (k == "initContainers") {
      ok = elements(val, [&](size_t, sj::value& el) {
        bool sidecar = false;
        if (!container(el, sidecar)) return false;
        if (sidecar) {
          sum_.add(ctrReq_);
          restartable_.add(ctrReq_);
          initMax_.max(restartable_);
        } else {
          cur_.clear();
          cur_.add(ctrReq_);
          cur_.add(restartable_);
          initMax_.max(cur_);
        }
        return true;
      });
    } else if (k == "nodeName") {
      ok = str(val, p.nodeName);
    } else if (k == "schedulerName") {
      ok = str(val, p.schedulerName);
    } else if (k == "priority") {
      ok = i32(val, p.priority);
    } else if (k == "nodeSelector") {
      ok = stringMap(val, p.nodeSelector);
    } else if (k == "affinity") {
      ok = fields(val, [&](std::string_view k2, sj::value& v2) {
        return k2 != "nodeAffinity" || nodeAffinity(v2, p) || at(k2);
      });
    } else if (k == "tolerations") {
      ok = tolerations(val, p.tolerations);
    } else if (k == "overhead") {
      ok = quantityMap(val, overhead_);
    } else if (k == "resources") {
      sawPodResources_ = true;
      ok = resourceRequirements(val, podReq_, podLim_);
    }
    return ok || at(k);
  });
}

bool Decoder::Impl::podStatus(sj::value& v, Pod& p) {
  return fields(v, [&](std::string_view k, sj::value& val) {
    bool ok = true;
    if (k == "phase") {
      std::string_view s;
      ok = str(val, s);
      if (s == "Pending") p.phase = PodPhase::Pending;
      else if (s == "Running") p.phase = PodPhase::Running;
      else if (s == "Succeeded") p.phase = PodPhase::Succeeded;
      else if (s == "Failed") p.phase = PodPhase::Failed;
      else p.phase = PodPhase::Unknown;
    } else if (k == "nominatedNodeName") {
      ok = str(val, p.nominatedNodeName);
    }
    return ok || at(k);
  });
}

void Decoder::Impl::beginPod() {
  sum_.clear();
  restartable_.clear();
  initMax_.clear();
  podReq_.clear();
  podLim_.clear();
  overhead_.clear();
  sawPodResources_ = false;
}

// PodRequests' final steps: max with init containers, pod-level resources, overhead.
bool Decoder::Impl::finishPod(Pod& p) {
  sum_.max(initMax_);
  if (sawPodResources_) {
    auto supported = [](std::string_view r) { return r == "cpu" || r == "memory" || isHugePages(r); };
    for (const auto& r : podReq_.items) {
      if (supported(r.name)) sum_.set(r.name, r.nano);
    }
    // Pod-level limits without a pod-level request (apiserver defaulting): cpu and memory
    // default to the containers' aggregate when they request it, else to the limit.
    for (const auto& l : podLim_.items) {
      if (!supported(l.name) || podReq_.find(l.name)) continue;
      bool overcommittable = !isHugePages(l.name);
      if (overcommittable && sum_.find(l.name)) continue;
      sum_.set(l.name, l.nano);
    }
  }
  sum_.add(overhead_);
  return toResources(sum_, p.requests) || at("requests");
}

// A Pod object (null reads as an empty pod).
bool Decoder::Impl::pod(sj::value& v, Pod& p) {
  sj::object obj;
  bool present = false;
  if (!object(v, obj, present)) return false;
  if (!present) {
    resetPod(p);
    return true;
  }
  return pod(obj, p);
}
bool Decoder::Impl::pod(sj::object& obj, Pod& p) {
  resetPod(p);
  beginPod();
  MetaOut m{&p.name, &p.namespace_, &p.uid, &p.resourceVersion, &p.labels, &p.annotations,
            &p.ownerReferences, &p.terminating};
  bool ok = objectFields(obj, [&](std::string_view k, sj::value& val) {
    bool r = true;
    if (k == "metadata") r = meta(val, m);
    else if (k == "spec") r = podSpec(val, p);
    else if (k == "status") r = podStatus(val, p);
    return r || at(k);
  });
  return ok && finishPod(p);
}

bool Decoder::Impl::nodeSpec(sj::value& v, Node& n) {
  return fields(v, [&](std::string_view k, sj::value& val) {
    bool ok = true;
    if (k == "unschedulable") ok = boolean(val, n.unschedulable);
    else if (k == "taints") ok = taints(val, n.taints);
    return ok || at(k);
  });
}

bool Decoder::Impl::nodeStatus(sj::value& v, Node& n) {
  return fields(v, [&](std::string_view k, sj::value& val) {
    bool ok = true;
    if (k == "capacity") {
      ok = resourcesDirect(val, n.capacity);
    } else if (k == "allocatable") {
      ok = resourcesDirect(val, n.allocatable);
    }
    return ok || at(k);
  });
}

// A Node object, keeping its exact bytes in n.raw (null reads as an empty node).
bool Decoder::Impl::node(sj::value& v, Node& n) {
  const char* start = v.raw_json_token().data();
  sj::object obj;
  bool present = false;
  if (!object(v, obj, present)) return false;
  if (!present) {
    resetNode(n);
    return true;
  }
  return node(obj, n, start);
}
bool Decoder::Impl::node(sj::object& obj, Node& n, const char* start) {
  resetNode(n);
  MetaOut m{&n.name, nullptr, &n.uid, &n.resourceVersion, &n.labels, &n.annotations, nullptr, nullptr};
  bool ok = objectFields(obj, [&](std::string_view k, sj::value& val) {
    bool r = true;
    if (k == "metadata") r = meta(val, m);
    else if (k == "spec") r = nodeSpec(val, n);
    else if (k == "status") r = nodeStatus(val, n);
    return r || at(k);
  });
  if (!ok) return false;
  n.raw = rawUntilHere(start);
  return true;
}

// The bytes from `start` (an object's opening brace) to the iterator's position, which sits
// on the token after the object's closing brace (or at the end of the document), without
// the whitespace in between.
std::string_view Decoder::Impl::rawUntilHere(const char* start) {
  const char* end = nullptr;
  if (doc_.current_location().get(end) != simdjson::SUCCESS) end = docEnd_;
  while (end > start && (end[-1] == ' ' || end[-1] == '\n' || end[-1] == '\r' || end[-1] == '\t')) --end;
  if (end <= start || *start != '{' || end[-1] != '}') return {};
  return std::string_view(start, static_cast<size_t>(end - start));
}
}  // namespace fleetsched::codec
