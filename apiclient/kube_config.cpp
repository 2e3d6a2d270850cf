#include "apiclient/kube_config.h"

#include "apiclient/exec_credential.h"

#include <openssl/evp.h>
#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <ctime>
#include <string_view>
#include <fstream>
#include <sstream>

namespace fleetsched::apiclient {
namespace {

bool decodeBase64(const std::string& in, std::string& out) {
  std::string clean;
  clean.reserve(in.size());
  for (char c : in) {
    if (c != '\n' && c != '\r' && c != ' ' && c != '\t') clean.push_back(c);
  }
  if (clean.size() % 4 != 0) return false;
  out.resize(clean.size() / 4 * 3);
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(clean.data()), static_cast<int>(clean.size()));
  if (n < 0) return false;
  size_t pad = 0;
  if (!clean.empty() && clean.back() == '=') ++pad;
  if (clean.size() > 1 && clean[clean.size() - 2] == '=') ++pad;
  out.resize(static_cast<size_t>(n) - pad);
  return true;
}

std::string resolve(const std::string& dir, const std::string& path) {
  if (path.empty() || path.front() == '/') return path;
  return dir + "/" + path;
}

// Fills `pem` from `<key>-data` (base64) or `<key>` (a file).
bool pemField(const YAML::Node& n, const std::string& key, const std::string& dir, std::string& pem,
              std::string& error) {
  if (const YAML::Node d = n[key + "-data"]) {
    if (!decodeBase64(d.as<std::string>(), pem)) {
      error = key + "-data is not valid base64";
      return false;
    }
    return true;
  }
  if (const YAML::Node f = n[key]) {
    std::string path = resolve(dir, f.as<std::string>());
    if (!readFile(path, pem)) {
      error = key + ": cannot read " + path;
      return false;
    }
  }
  return true;
}

// The `field` map of the entry called `name`; a null node when there is none.
YAML::Node findNamed(const YAML::Node& list, const std::string& name, const char* field) {
  if (list && list.IsSequence()) {
    for (const auto& item : list) {
      if (item["name"] && item["name"].as<std::string>() == name && item[field].IsMap()) return item[field];
    }
  }
  return YAML::Node(YAML::NodeType::Null);
}

// A user's `exec` stanza, checked as client-go checks it (apiVersion known; a session that
// must be interactive cannot run here: fleetsched has no terminal).
bool execField(const YAML::Node& n, const std::string& dir, ExecConfig& out, std::string& error) {
  out.apiVersion = n["apiVersion"].as<std::string>("");
  if (out.apiVersion != "client.authentication.k8s.io/v1" && out.apiVersion != "client.authentication.k8s.io/v1beta1") {
    error = "exec: apiVersion \"" + out.apiVersion +
            "\" is not client.authentication.k8s.io/v1 or client.authentication.k8s.io/v1beta1";
    return false;
  }
  out.command = n["command"].as<std::string>("");
  if (out.command.empty()) {
    error = "exec: no command";
    return false;
  }
  // client-go resolves a command naming a path (it has a slash) against the kubeconfig's folder;
  // a bare name is looked up on PATH.
  if (out.command.find('/') != std::string::npos) out.command = resolve(dir, out.command);
  if (const YAML::Node args = n["args"]) {
    if (!args.IsSequence()) {
      error = "exec: args is not a list";
      return false;
    }
    for (const auto& a : args) out.args.push_back(a.as<std::string>());
  }
  if (const YAML::Node env = n["env"]) {
    if (!env.IsSequence()) {
      error = "exec: env is not a list";
      return false;
    }
    for (const auto& e : env) {
      const std::string name = e["name"].as<std::string>("");
      if (name.empty() || name.find('=') != std::string::npos) {
        error = "exec: an env entry has no valid name";
        return false;
      }
      out.env.emplace_back(name, e["value"].as<std::string>(""));
    }
  }
  out.installHint = n["installHint"].as<std::string>("");
  out.provideClusterInfo = n["provideClusterInfo"].as<bool>(false);
  if (n["interactiveMode"].as<std::string>("") == "Always") {
    error = "exec: interactiveMode Always needs a terminal, and fleetsched has none";
    return false;
  }
  return true;
}

}  // namespace

bool readFile(const std::string& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return true;
}

bool loadKubeconfig(const std::string& path, const std::string& context, ClusterConfig& out, std::string& error) {
  out = ClusterConfig{};
  std::string text;
  if (!readFile(path, text)) {
    error = "kubeconfig " + path + ": cannot read";
    return false;
  }
  std::string dir = ".";
  if (auto slash = path.rfind('/'); slash != std::string::npos) dir = path.substr(0, slash);
  try {
    YAML::Node root = YAML::Load(text);
    std::string ctxName = context.empty() ? root["current-context"].as<std::string>("") : context;
    if (ctxName.empty()) {
      error = "kubeconfig " + path + ": no current-context and no --context given";
      return false;
    }
    YAML::Node ctx = findNamed(root["contexts"], ctxName, "context");
    if (ctx.IsNull()) {
      error = "kubeconfig " + path + ": context \"" + ctxName + "\" not found";
      return false;
    }
    std::string clusterName = ctx["cluster"].as<std::string>("");
    std::string userName = ctx["user"].as<std::string>("");
    out.namespace_ = ctx["namespace"].as<std::string>("default");
    YAML::Node cluster = findNamed(root["clusters"], clusterName, "cluster");
    if (cluster.IsNull() || !cluster["server"]) {
      error = "kubeconfig " + path + ": cluster \"" + clusterName + "\" has no server";
      return false;
    }
    out.server = cluster["server"].as<std::string>();
    while (!out.server.empty() && out.server.back() == '/') out.server.pop_back();
    out.insecureSkipVerify = cluster["insecure-skip-tls-verify"].as<bool>(false);
    out.tlsServerName = cluster["tls-server-name"].as<std::string>("");
    std::string why;
    if (!pemField(cluster, "certificate-authority", dir, out.caPem, why)) {
      error = "kubeconfig " + path + ": cluster \"" + clusterName + "\": " + why;
      return false;
    }
    YAML::Node user = findNamed(root["users"], userName, "user");
    if (!user.IsNull()) {
      if (user["auth-provider"]) {
        error = "kubeconfig " + path + ": user \"" + userName +
                "\" uses an auth-provider (removed from client-go in Kubernetes 1.26); use an exec "
                "credential plugin, a token, a client certificate or the in-cluster service account";
        return false;
      }
      out.token = user["token"].as<std::string>("");
      if (user["tokenFile"]) {
        out.tokenFile = resolve(dir, user["tokenFile"].as<std::string>());
      }
      if (!pemField(user, "client-certificate", dir, out.certPem, why) ||
          !pemField(user, "client-key", dir, out.keyPem, why)) {
        error = "kubeconfig " + path + ": user \"" + userName + "\": " + why;
        return false;
      }
      if (const YAML::Node exec = user["exec"]; exec && !exec.IsNull()) {
        auto config = std::make_shared<ExecConfig>();
        if (!execField(exec, dir, *config, why)) {
          error = "kubeconfig " + path + ": user \"" + userName + "\": " + why;
          return false;
        }
        out.exec = std::move(config);
      }
      // The token file is read, and the exec plugin run, now: a kubeconfig that cannot give
      // credentials fails at start, not at the first request.
      if (!refreshCredentials(out, static_cast<int64_t>(std::time(nullptr)), false, why)) {
        error = "kubeconfig " + path + ": user \"" + userName + "\": " + why;
        return false;
      }
    }
  } catch (const YAML::Exception& e) {
    error = "kubeconfig " + path + ": " + e.what();
    return false;
  }
  return true;
}

bool inClusterConfig(ClusterConfig& out, std::string& error, const std::string& saDir) {
  out = ClusterConfig{};
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  if (host == nullptr || port == nullptr || *host == '\0' || *port == '\0') {
    error = "not running in a cluster: KUBERNETES_SERVICE_HOST/PORT are not set";
    return false;
  }
  std::string h = host;
  if (h.find(':') != std::string::npos) h = "[" + h + "]";  // IPv6
  out.server = "https://" + h + ":" + port;
  out.tokenFile = saDir + "/token";
  if (!refreshCredentials(out, 0, false, error)) return false;
  if (!readFile(saDir + "/ca.crt", out.caPem)) {
    error = "in-cluster: cannot read " + saDir + "/ca.crt";
    return false;
  }
  std::string ns;
  if (readFile(saDir + "/namespace", ns)) out.namespace_ = ns;
  return true;
}

std::string plaintextTokenWarning(const ClusterConfig& config) {
  if (config.token.empty() && config.tokenFile.empty() && !config.exec) return {};
  if (config.server.compare(0, 7, "http://") != 0) return {};
  return "warning: the API server " + config.server +
         " is plain http://: the bearer token is sent unencrypted (use https://)";
}

ServerRoute serverRoute(const ClusterConfig& config) {
  ServerRoute r;
  r.urlBase = config.server;
  const std::string& s = config.server;
  const std::string_view https = "https://";
  if (config.tlsServerName.empty() || s.compare(0, https.size(), https) != 0) return r;
  const size_t hostFrom = https.size();
  const size_t slash = s.find('/', hostFrom);
  const std::string authority = s.substr(hostFrom, slash == std::string::npos ? std::string::npos : slash - hostFrom);
  const std::string path = slash == std::string::npos ? std::string() : s.substr(slash);
  // host (an IPv6 literal keeps its brackets) and port (443 when absent).
  std::string host = authority;
  std::string port = "443";
  const size_t close = authority.rfind(']');
  const size_t colon = authority.rfind(':');
  if (colon != std::string::npos && (close == std::string::npos || colon > close)) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
  }
  if (host.empty() || host == config.tlsServerName) return r;
  r.urlBase = "https://" + config.tlsServerName + ":" + port + path;
  r.connectTo = config.tlsServerName + ":" + port + ":" + host + ":" + port;
  r.hostHeader = "Host: " + authority;
  return r;
}

bool refreshCredentials(ClusterConfig& config, int64_t now, bool force, std::string& error) {
  if (config.exec) {
    const bool due = !config.execRan || force ||
                     (config.credentialExpiry != 0 && now + kExecRefreshMarginSeconds >= config.credentialExpiry);
    if (!due) return true;
    ExecCredential got;
    if (!runExecCredential(*config.exec, config, got, error)) return false;
    config.token = std::move(got.token);
    if (!got.certPem.empty()) {
      config.certPem = std::move(got.certPem);
      config.keyPem = std::move(got.keyPem);
    }
    config.credentialExpiry = got.expiry;
    config.execRan = true;
    return true;
  }
  if (config.tokenFile.empty()) return true;
  std::string token;
  if (!readFile(config.tokenFile, token)) {
    error = "cannot read token file " + config.tokenFile;
    return false;
  }
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r' || token.back() == ' ')) token.pop_back();
  config.token = std::move(token);
  return true;
}

}  // namespace fleetsched::apiclient
