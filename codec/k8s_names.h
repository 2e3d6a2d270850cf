// Kubernetes object names as kube-apiserver requires them: a namespace is a DNS-1123 label, a pod
// name a DNS-1123 subdomain. The extender refuses a bind request naming anything else before it
// reserves or sends anything; apiclient/api_paths.h then escapes the names into URLs.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace fleetsched::codec {

inline constexpr size_t kMaxLabelLength = 63;
inline constexpr size_t kMaxSubdomainLength = 253;

// [a-z0-9]([-a-z0-9]*[a-z0-9])?, at most 63 bytes (namespaces).
bool isDns1123Label(std::string_view s);
// DNS-1123 labels joined by '.', at most 253 bytes (pod names).
bool isDns1123Subdomain(std::string_view s);

// Checks a pod reference; false with a one-line error naming the offending field (the value
// quoted with control bytes escaped and cut to a readable length).
bool validatePodRef(std::string_view podNamespace, std::string_view podName, std::string& error);

}  // namespace fleetsched::codec
