#include "tools/loadgen/churn.h"

#include <netdb.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "tools/fleet/fleet_gen.h"
#include "tools/fleet/json_value.h"

namespace fleetsched::tools::loadgen {

std::string requestHead(const LoadgenOptions& o, int verb, size_t bodySize) {
  std::string prefix = o.urlPrefix;
  while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
  return "POST " + prefix + "/" + kVerbNames[verb] + " HTTP/1.1\r\nHost: " + o.target +
         "\r\nUser-Agent: Go-http-client/1.1\r\nContent-Length: " + std::to_string(bodySize) +
         "\r\nContent-Type: application/json\r\nAccept-Encoding: gzip\r\n\r\n";
}

bool parseKeptNodes(simdjson::dom::parser& parser, std::string_view reply, ArgsMode mode,
                    std::vector<std::string>& kept) {
  kept.clear();
  simdjson::dom::element doc;
  if (parser.parse(reply.data(), reply.size()).get(doc) != simdjson::SUCCESS || !doc.is_object()) return false;
  simdjson::dom::element list;
  if (mode == ArgsMode::kNodeNames) {
    if (doc["NodeNames"].get(list) == simdjson::SUCCESS && !list.is_null()) {
      simdjson::dom::array names;
      if (list.get(names) != simdjson::SUCCESS) return false;
      for (simdjson::dom::element n : names) {
        std::string_view name;
        if (n.get(name) != simdjson::SUCCESS) return false;
        kept.emplace_back(name);
      }
    }
  } else if (doc["Nodes"].get(list) == simdjson::SUCCESS && !list.is_null()) {
    simdjson::dom::array items;
    if (list["items"].get(items) != simdjson::SUCCESS) return false;
    for (simdjson::dom::element item : items) {
      std::string_view name;
      if (item["metadata"]["name"].get(name) != simdjson::SUCCESS) return false;
      kept.emplace_back(name);
    }
  }
  return true;
}

Churn::Churn(const LoadgenOptions& o, apiserver::FakeApiServer& api)
    : o_(o), api_(api), nonce_(static_cast<uint32_t>(std::random_device{}())), rng_(o.seed) {}

uint32_t Churn::start(const PodTemplate& t) {
  uint32_t slot;
  if (free_.empty()) {
    slot = static_cast<uint32_t>(slots_.size());
    slots_.emplace_back();
  } else {
    slot = free_.back();
    free_.pop_back();
  }
  Slot& s = slots_[slot];
  const uint64_t seq = seq_++;
  char uid[40];
  std::snprintf(uid, sizeof uid, "%08x-0000-4000-8000-%012llx", nonce_, static_cast<unsigned long long>(seq));
  s.namespace_.assign(t.namespace_);
  s.name.assign(t.name).append("-").append(std::to_string(seq));
  s.uid = uid;
  // The corpus pod's object with this pod's name and UID (the first of each: metadata's).
  s.wire.assign(t.wire);
  const std::string nameField = "\"name\":\"" + std::string(t.name) + "\"";
  const std::string uidField = "\"uid\":\"" + std::string(t.uid) + "\"";
  if (size_t at = s.wire.find(nameField); at != std::string::npos) {
    s.wire.replace(at, nameField.size(), "\"name\":\"" + s.name + "\"");
  }
  if (size_t at = s.wire.find(uidField); at != std::string::npos) {
    s.wire.replace(at, uidField.size(), "\"uid\":\"" + s.uid + "\"");
  }
  s.nodesTail = t.nodesTail;
  s.filterHead = requestHead(o_, kFilter, fleet::kNodeNamesArgsHead.size() + s.wire.size() + s.nodesTail.size());
  s.error.clear();
  api_.createPod(s.namespace_, s.name, s.wire);
  return slot;
}

RequestParts Churn::request(uint32_t slot, Verb verb) const {
  const Slot& s = slots_[slot];
  RequestParts r;
  switch (verb) {
    case kFilter:
      r.head = s.filterHead;
      r.parts = {fleet::kNodeNamesArgsHead, s.wire, s.nodesTail};
      r.count = 3;
      break;
    case kPrioritize:
      r.head = s.prioritizeHead;
      r.parts = {fleet::kNodeNamesArgsHead, s.wire, s.prioritizeTail};
      r.count = 3;
      break;
    case kBind:
      r.head = s.bindHead;
      r.parts[0] = s.bindBody;
      r.count = 1;
      break;
  }
  return r;
}

Churn::Step Churn::bindTo(Slot& s, const std::string& node) {
  // ExtenderBindingArgs as kube-scheduler's extender client marshals it.
  s.bindBody = "{\"PodName\":";
  fleet::appendJsonString(s.bindBody, s.name);
  s.bindBody += ",\"PodNamespace\":";
  fleet::appendJsonString(s.bindBody, s.namespace_);
  s.bindBody += ",\"PodUID\":";
  fleet::appendJsonString(s.bindBody, s.uid);
  s.bindBody += ",\"Node\":";
  fleet::appendJsonString(s.bindBody, node);
  s.bindBody += "}";
  s.bindHead = requestHead(o_, kBind, s.bindBody.size());
  return Step::kBind;
}

// kube-scheduler's selectHost over the extender's scores (nodes left out scored 0): the
// highest, one of several at random.
Churn::Step Churn::choose(Slot& s, std::string_view reply) {
  simdjson::dom::element doc;
  if (parser_.parse(reply.data(), reply.size()).get(doc) != simdjson::SUCCESS) {
    s.error = "prioritize reply is not JSON";
    return Step::kFailed;
  }
  int64_t best = 0;
  uint64_t ties = 0;
  std::string chosen;
  if (!doc.is_null()) {
    simdjson::dom::array list;
    if (doc.get(list) != simdjson::SUCCESS) {
      s.error = "prioritize reply is not a HostPriorityList";
      return Step::kFailed;
    }
    for (simdjson::dom::element e : list) {
      std::string_view host;
      int64_t score = 0;
      if (e["Host"].get(host) != simdjson::SUCCESS || e["Score"].get(score) != simdjson::SUCCESS) {
        s.error = "prioritize reply entry without Host and Score";
        return Step::kFailed;
      }
      if (score <= 0 || score < best) continue;
      if (score > best) {
        best = score;
        ties = 0;
      }
      if (rng_() % ++ties == 0) chosen.assign(host);
    }
  }
  if (chosen.empty()) chosen = s.kept[rng_() % s.kept.size()];
  return bindTo(s, chosen);
}

Churn::Step Churn::onReply(uint32_t slot, Verb verb, std::string_view reply) {
  Slot& s = slots_[slot];
  switch (verb) {
    case kFilter:
      if (!parseKeptNodes(parser_, reply, ArgsMode::kNodeNames, s.kept)) {
        s.error = "filter reply is not an ExtenderFilterResult";
        return Step::kFailed;
      }
      if (s.kept.empty()) return Step::kUnschedulable;
      if (s.kept.size() == 1) return bindTo(s, s.kept.front());
      s.prioritizeTail = fleet::nodeNamesArgsTail(s.kept);
      s.prioritizeHead =
          requestHead(o_, kPrioritize, fleet::kNodeNamesArgsHead.size() + s.wire.size() + s.prioritizeTail.size());
      return Step::kPrioritize;
    case kPrioritize:
      return choose(s, reply);
    case kBind: {
      simdjson::dom::element doc;
      std::string_view error;
      if (parser_.parse(reply.data(), reply.size()).get(doc) != simdjson::SUCCESS) {
        s.error = "bind reply is not JSON";
        return Step::kFailed;
      }
      if (doc["Error"].get(error) == simdjson::SUCCESS && !error.empty()) {
        s.error = "bind " + s.namespace_ + "/" + s.name + ": " + std::string(error);
        return Step::kFailed;
      }
      return Step::kBound;
    }
  }
  return Step::kFailed;
}

void Churn::release(uint32_t slot, bool bound) {
  Slot& s = slots_[slot];
  if (!bound) api_.deletePod(s.namespace_, s.name);
  free_.push_back(slot);
}

bool waitReady(const std::string& target, double seconds) {
  const size_t colon = target.rfind(':');
  if (colon == std::string::npos) return false;
  std::string host = target.substr(0, colon), port = target.substr(colon + 1);
  if (host.size() > 1 && host.front() == '[') host = host.substr(1, host.size() - 2);
  const std::string request = "GET /readyz HTTP/1.1\r\nHost: " + target + "\r\nConnection: close\r\n\r\n";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  for (;;) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* res = nullptr;
    std::string reply;
    if (getaddrinfo(host.c_str(), port.c_str(), &hints, &res) == 0) {
      const int fd = ::socket(res->ai_family, SOCK_STREAM, 0);
      timeval tv{2, 0};
      ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
      if (fd >= 0 && ::connect(fd, res->ai_addr, res->ai_addrlen) == 0 &&
          ::send(fd, request.data(), request.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(request.size())) {
        char buf[256];
        for (ssize_t n; reply.size() < 16 && (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) {
          reply.append(buf, static_cast<size_t>(n));
        }
      }
      if (fd >= 0) ::close(fd);
      freeaddrinfo(res);
    }
    if (reply.starts_with("HTTP/1.1 200")) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

}  // namespace fleetsched::tools::loadgen
