// Kubernetes object names as they reach API URLs. Every caller-supplied string that becomes a
// path segment is first validated as the name kind kube-apiserver itself requires
// (codec/k8s_names.h: a namespace is a DNS-1123 label, a pod name a DNS-1123 subdomain) and
// then percent-encoded, so neither a '?', a '/', "..", a CR-LF nor any other byte can change
// which URL is requested.
#pragma once

#include <string>
#include <string_view>

namespace fleetsched::apiclient {

// Percent-encodes every byte but RFC 3986's unreserved ones (A-Z a-z 0-9 - . _ ~); a segment
// that is "." or ".." has its dots encoded as well, so no client or proxy resolves it.
std::string escapePathSegment(std::string_view s);
// Percent-encodes a query parameter's value (same set as a path segment).
std::string escapeQueryValue(std::string_view s);

// "/api/v1/namespaces/<ns>/pods/<name>", ".../pods/<name>/binding" and
// "/api/v1/namespaces/<ns>/events", each segment escaped.
std::string podPath(std::string_view podNamespace, std::string_view podName);
std::string podBindingPath(std::string_view podNamespace, std::string_view podName);
std::string eventsPath(std::string_view podNamespace);
// "/apis/coordination.k8s.io/v1/namespaces/<ns>/leases" and ".../leases/<name>", each segment
// escaped (leader election's Lease).
std::string leasesPath(std::string_view leaseNamespace);
std::string leasePath(std::string_view leaseNamespace, std::string_view leaseName);

}  // namespace fleetsched::apiclient
