// Where kube-apiserver is and how to authenticate: from a kubeconfig file (current or named
// context) or from the in-cluster service account. Errors are one line naming the problem.
#pragma once

#include <string>

namespace fleetsched::apiclient {

struct ClusterConfig {
  std::string server;     // "https://host:port", no trailing slash
  std::string token;      // bearer token; empty for client-certificate auth
  std::string tokenFile;  // when set, the token is (re-)read from here: projected tokens rotate
  std::string caPem;      // trusted CA bundle (PEM); empty = system trust store
  std::string certPem;    // client certificate and key (PEM)
  std::string keyPem;
  bool insecureSkipVerify = false;
  std::string tlsServerName;
  std::string namespace_;
};

// Reads a kubeconfig. `context` empty = current-context. Relative file paths resolve against
// the kubeconfig's folder; *-data fields are base64.
bool loadKubeconfig(const std::string& path, const std::string& context, ClusterConfig& out, std::string& error);

// The service-account configuration of a pod: KUBERNETES_SERVICE_HOST/PORT, the token and CA
// under `saDir` (normally /var/run/secrets/kubernetes.io/serviceaccount).
bool inClusterConfig(ClusterConfig& out, std::string& error,
                     const std::string& saDir = "/var/run/secrets/kubernetes.io/serviceaccount");

// Re-reads tokenFile into token (no-op without a tokenFile). Returns false when unreadable.
bool reloadToken(ClusterConfig& config, std::string& error);

// A one-line warning when `config` sends a bearer token over plain http:// (anyone on the path
// can read and replay it); empty otherwise.
std::string plaintextTokenWarning(const ClusterConfig& config);

// Where requests go. With a tls-server-name (client-go's ServerName) the URL names that host, so
// libcurl sends it as SNI and verifies the certificate against it, CURLOPT_CONNECT_TO sends the
// connection to the server's own host and port, and the Host header keeps the server's
// authority. Without one (or for http://) the URL is the server and the rest is empty.
struct ServerRoute {
  std::string urlBase;     // prefix of every request URL: scheme://host[:port][/path]
  std::string connectTo;   // CURLOPT_CONNECT_TO entry "NAME:PORT:HOST:PORT", or empty
  std::string hostHeader;  // "Host: HOST[:PORT]" to send, or empty
};
ServerRoute serverRoute(const ClusterConfig& config);

// Whole file into `out`; false when it cannot be read.
bool readFile(const std::string& path, std::string& out);

}  // namespace fleetsched::apiclient
