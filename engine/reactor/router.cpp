#include "engine/reactor/router.h"

#include <llhttp.h>

namespace fleetsched::engine {
namespace {

constexpr std::string_view kVerbNames[kVerbCount] = {"filter", "prioritize", "preempt", "bind"};
constexpr std::string_view kAllowGet = "GET";
constexpr std::string_view kAllowPost = "POST";

}  // namespace

std::string_view verbName(Verb v) {
  auto i = static_cast<size_t>(v);
  return i < kVerbCount ? kVerbNames[i] : std::string_view("unknown");
}

std::string normalizePrefix(std::string_view prefix) {
  // kube-scheduler's urlPrefix is a full URL; accept it as such and keep its path.
  if (auto scheme = prefix.find("://"); scheme != std::string_view::npos) {
    auto path = prefix.find('/', scheme + 3);
    prefix = path == std::string_view::npos ? std::string_view() : prefix.substr(path);
  }
  while (!prefix.empty() && prefix.back() == '/') prefix.remove_suffix(1);
  std::string out;
  if (prefix.empty()) return out;
  if (prefix.front() != '/') out.push_back('/');
  out.append(prefix);
  return out;
}

Router::Router(std::string_view prefix) : prefix_(normalizePrefix(prefix)) {
  for (size_t i = 0; i < kVerbCount; ++i) {
    verbPaths_[i] = prefix_;
    verbPaths_[i].push_back('/');
    verbPaths_[i].append(kVerbNames[i]);
  }
}

uint32_t Router::addGet(std::string path) {
  gets_.push_back(std::move(path));
  return static_cast<uint32_t>(gets_.size() - 1);
}

Router::Match Router::match(uint8_t method, std::string_view target) const {
  if (auto q = target.find('?'); q != std::string_view::npos) target = target.substr(0, q);
  // Absolute form ("POST http://host:port/filter"), as sent through a forward proxy.
  if (!target.empty() && target.front() != '/') {
    auto scheme = target.find("://");
    auto path = scheme == std::string_view::npos ? scheme : target.find('/', scheme + 3);
    target = path == std::string_view::npos ? std::string_view("/") : target.substr(path);
  }
  Match m;
  bool get = method == HTTP_GET;
  bool post = method == HTTP_POST;
  for (size_t i = 0; i < kVerbCount; ++i) {
    if (target != verbPaths_[i]) continue;
    if (!post) {
      m.kind = Kind::kMethodNotAllowed;
      m.allow = kAllowPost;
      return m;
    }
    m.kind = Kind::kVerb;
    m.verb = static_cast<Verb>(i);
    return m;
  }
  if (target == "/healthz") {
    m.kind = Kind::kHealthz;
  } else if (target == "/readyz") {
    m.kind = Kind::kReadyz;
  } else if (target == "/metrics") {
    m.kind = Kind::kMetrics;
  } else {
    for (uint32_t i = 0; i < gets_.size(); ++i) {
      const std::string& g = gets_[i];
      bool subtree = !g.empty() && g.back() == '/';
      if (target == g || (subtree && target.starts_with(g))) {
        m.kind = Kind::kCustom;
        m.custom = i;
        break;
      }
    }
    if (m.kind == Kind::kNotFound) return m;
  }
  if (!get) {
    m.kind = Kind::kMethodNotAllowed;
    m.allow = kAllowGet;
  }
  return m;
}

}  // namespace fleetsched::engine
