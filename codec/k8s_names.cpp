#include "codec/k8s_names.h"

#include <cstdio>

namespace fleetsched::codec {
namespace {

bool isLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// One label without the length limit: [a-z0-9]([-a-z0-9]*[a-z0-9])?
bool isLabelShape(std::string_view s) {
  if (s.empty() || !isLowerAlnum(s.front()) || !isLowerAlnum(s.back())) return false;
  for (char c : s) {
    if (!isLowerAlnum(c) && c != '-') return false;
  }
  return true;
}

// The value for an error message: quoted, control and non-ASCII bytes as \xHH, cut at 80.
std::string quoted(std::string_view s) {
  constexpr size_t kShown = 80;
  std::string out = "\"";
  for (size_t i = 0; i < s.size() && i < kShown; ++i) {
    const auto b = static_cast<unsigned char>(s[i]);
    if (b < 0x20 || b >= 0x7F || b == '"' || b == '\\') {
      char hex[5];
      std::snprintf(hex, sizeof hex, "\\x%02X", b);
      out += hex;
    } else {
      out.push_back(static_cast<char>(b));
    }
  }
  out += s.size() > kShown ? "\"..." : "\"";
  return out;
}

}  // namespace

bool isDns1123Label(std::string_view s) { return s.size() <= kMaxLabelLength && isLabelShape(s); }

bool isDns1123Subdomain(std::string_view s) {
  if (s.empty() || s.size() > kMaxSubdomainLength) return false;
  size_t start = 0;
  for (;;) {
    const size_t dot = s.find('.', start);
    if (!isLabelShape(s.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start))) {
      return false;
    }
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

bool validatePodRef(std::string_view podNamespace, std::string_view podName, std::string& error) {
  if (!isDns1123Label(podNamespace)) {
    error = "invalid pod namespace " + quoted(podNamespace) +
            ": must be a DNS-1123 label (lower-case letters, digits and '-', starting and ending with a letter or "
            "digit, at most 63 characters)";
    return false;
  }
  if (!isDns1123Subdomain(podName)) {
    error = "invalid pod name " + quoted(podName) +
            ": must be a DNS-1123 subdomain (lower-case letters, digits, '-' and '.', each dot-separated part "
            "starting and ending with a letter or digit, at most 253 characters)";
    return false;
  }
  return true;
}

}  // namespace fleetsched::codec
