// Where kube-apiserver is and how to authenticate: from a kubeconfig file (current or named
// context) or from the in-cluster service account. Errors are one line naming the problem.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace fleetsched::apiclient {

// A kubeconfig user's `exec` credential plugin (client.authentication.k8s.io ExecCredential), as
// client-go runs it: EKS (`aws eks get-token`), GKE and AKS kubeconfigs use one.
struct ExecConfig {
  std::string apiVersion;  // client.authentication.k8s.io/v1 or /v1beta1
  std::string command;     // a path with a slash is resolved against the kubeconfig's folder
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;  // added to fleetsched's environment
  std::string installHint;                               // shown when the command cannot run
  bool provideClusterInfo = false;                       // spec.cluster in KUBERNETES_EXEC_INFO
};

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
  // Set when the credentials come from an exec plugin: token (or certPem/keyPem) is what it last
  // returned, valid until credentialExpiry (Unix seconds; 0 = until the server answers 401).
  std::shared_ptr<const ExecConfig> exec;
  int64_t credentialExpiry = 0;
  bool execRan = false;
};

// Reads a kubeconfig. `context` empty = current-context. Relative file paths resolve against
// the kubeconfig's folder; *-data fields are base64.
bool loadKubeconfig(const std::string& path, const std::string& context, ClusterConfig& out, std::string& error);

// The service-account configuration of a pod: KUBERNETES_SERVICE_HOST/PORT, the token and CA
// under `saDir` (normally /var/run/secrets/kubernetes.io/serviceaccount).
bool inClusterConfig(ClusterConfig& out, std::string& error,
                     const std::string& saDir = "/var/run/secrets/kubernetes.io/serviceaccount");

// Brings the credentials up to date: re-reads tokenFile into token; runs the exec plugin when it
// has not run yet, when its credential expires within kExecRefreshMarginSeconds of `now` (Unix
// seconds), or when `force` (the server answered 401). Without either, a no-op. Returns false,
// with the reason, when the file cannot be read or the plugin fails; the old credentials stay.
constexpr int64_t kExecRefreshMarginSeconds = 90;  // longer than the ingest loop's 60 s check
bool refreshCredentials(ClusterConfig& config, int64_t now, bool force, std::string& error);

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
