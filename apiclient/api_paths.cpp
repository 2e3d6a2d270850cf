#include "apiclient/api_paths.h"

namespace fleetsched::apiclient {
namespace {

bool isUnreserved(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
         c == '_' || c == '~';
}

std::string percentEncode(std::string_view s, bool encodeDots) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (isUnreserved(c) && !(encodeDots && c == '.')) {
      out.push_back(c);
    } else {
      const auto b = static_cast<unsigned char>(c);
      out.push_back('%');
      out.push_back(kHex[b >> 4]);
      out.push_back(kHex[b & 0xF]);
    }
  }
  return out;
}

}  // namespace

std::string escapePathSegment(std::string_view s) {
  return percentEncode(s, /*encodeDots=*/s == "." || s == "..");
}

std::string escapeQueryValue(std::string_view s) { return percentEncode(s, false); }

std::string podPath(std::string_view podNamespace, std::string_view podName) {
  return "/api/v1/namespaces/" + escapePathSegment(podNamespace) + "/pods/" + escapePathSegment(podName);
}

std::string podBindingPath(std::string_view podNamespace, std::string_view podName) {
  return podPath(podNamespace, podName) + "/binding";
}

std::string eventsPath(std::string_view podNamespace) {
  return "/api/v1/namespaces/" + escapePathSegment(podNamespace) + "/events";
}

std::string leasesPath(std::string_view leaseNamespace) {
  return "/apis/coordination.k8s.io/v1/namespaces/" + escapePathSegment(leaseNamespace) + "/leases";
}

std::string leasePath(std::string_view leaseNamespace, std::string_view leaseName) {
  return leasesPath(leaseNamespace) + "/" + escapePathSegment(leaseName);
}

}  // namespace fleetsched::apiclient
