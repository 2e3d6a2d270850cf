#include "apiclient/exec_credential.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>

#include "codec/json_writer.h"

extern char** environ;

namespace fleetsched::apiclient {
namespace {

constexpr size_t kMaxOutputBytes = 1u << 20;  // an ExecCredential is a few KB

std::string base64(std::string_view in) {
  std::string out(4 * ((in.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(in.data()), static_cast<int>(in.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

bool digits(std::string_view s, size_t at, size_t n, int& out) {
  if (at + n > s.size()) return false;
  out = 0;
  for (size_t i = at; i < at + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    out = out * 10 + (s[i] - '0');
  }
  return true;
}

std::string commandLine(const ExecConfig& exec) {
  std::string s = exec.command;
  for (const auto& a : exec.args) s += " " + a;
  return s;
}

}  // namespace

bool parseRfc3339(std::string_view s, int64_t& out) {
  // YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)
  int year, month, day, hour, minute, second;
  if (!digits(s, 0, 4, year) || s.size() < 20 || s[4] != '-' || !digits(s, 5, 2, month) || s[7] != '-' ||
      !digits(s, 8, 2, day) || (s[10] != 'T' && s[10] != 't') || !digits(s, 11, 2, hour) || s[13] != ':' ||
      !digits(s, 14, 2, minute) || s[16] != ':' || !digits(s, 17, 2, second)) {
    return false;
  }
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) return false;
  size_t at = 19;
  if (at < s.size() && s[at] == '.') {
    ++at;
    const size_t from = at;
    while (at < s.size() && s[at] >= '0' && s[at] <= '9') ++at;
    if (at == from) return false;
  }
  int64_t offset = 0;
  if (at < s.size() && (s[at] == 'Z' || s[at] == 'z')) {
    ++at;
  } else if (at < s.size() && (s[at] == '+' || s[at] == '-')) {
    int oh, om;
    if (!digits(s, at + 1, 2, oh) || at + 3 >= s.size() || s[at + 3] != ':' || !digits(s, at + 4, 2, om)) return false;
    offset = (s[at] == '+' ? 1 : -1) * (oh * 3600 + om * 60);
    at += 6;
  } else {
    return false;
  }
  if (at != s.size()) return false;
  std::tm tm{};
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second;
  out = static_cast<int64_t>(timegm(&tm)) - offset;
  return true;
}

std::string execInfo(const ExecConfig& exec, const ClusterConfig& cluster) {
  std::string s;
  codec::JsonWriter<> w(s);
  w.ch('{');
  w.key("apiVersion");
  w.string(exec.apiVersion);
  w.raw(",\"kind\":\"ExecCredential\",\"spec\":{\"interactive\":false");
  if (exec.provideClusterInfo) {
    w.raw(",\"cluster\":{");
    w.key("server");
    w.string(cluster.server);
    if (!cluster.tlsServerName.empty()) {
      w.raw(",\"tls-server-name\":");
      w.string(cluster.tlsServerName);
    }
    if (cluster.insecureSkipVerify) w.raw(",\"insecure-skip-tls-verify\":true");
    if (!cluster.caPem.empty()) {
      w.raw(",\"certificate-authority-data\":");
      w.string(base64(cluster.caPem));
    }
    w.ch('}');
  }
  w.raw("}}");
  w.finish();
  return s;
}

bool parseExecCredential(std::string_view text, const std::string& apiVersion, ExecCredential& out,
                         std::string& error) {
  out = ExecCredential{};
  try {
    const YAML::Node root = YAML::Load(std::string(text));
    if (!root.IsMap()) {
      error = "its output is not an ExecCredential object";
      return false;
    }
    const std::string kind = root["kind"].as<std::string>("");
    const std::string version = root["apiVersion"].as<std::string>("");
    if (kind != "ExecCredential" || version != apiVersion) {
      error = "its output is " + (version.empty() ? std::string("?") : version) + " " +
              (kind.empty() ? std::string("?") : kind) + ", not " + apiVersion + " ExecCredential";
      return false;
    }
    const YAML::Node status = root["status"];
    if (!status || !status.IsMap()) {
      error = "its ExecCredential has no status";
      return false;
    }
    out.token = status["token"].as<std::string>("");
    out.certPem = status["clientCertificateData"].as<std::string>("");
    out.keyPem = status["clientKeyData"].as<std::string>("");
    if (out.certPem.empty() != out.keyPem.empty()) {
      error = "its ExecCredential has a client certificate without a key, or a key without a certificate";
      return false;
    }
    if (out.token.empty() && out.certPem.empty()) {
      error = "its ExecCredential has neither a token nor a client certificate";
      return false;
    }
    if (const YAML::Node t = status["expirationTimestamp"]; t && !t.IsNull()) {
      if (!parseRfc3339(t.as<std::string>(), out.expiry)) {
        error = "its expirationTimestamp \"" + t.as<std::string>() + "\" is not RFC 3339";
        return false;
      }
    }
  } catch (const YAML::Exception& e) {
    error = std::string("its output is not JSON: ") + e.what();
    return false;
  }
  return true;
}

bool runExecCredential(const ExecConfig& exec, const ClusterConfig& cluster, ExecCredential& out,
                       std::string& error, uint32_t timeoutMs) {
  const std::string what = "exec credential plugin \"" + commandLine(exec) + "\"";
  // Environment: ours, the config's entries on top, then KUBERNETES_EXEC_INFO.
  std::vector<std::string> env;
  auto setEnv = [&env](const std::string& name, const std::string& value) {
    const std::string prefix = name + "=";
    for (auto& e : env) {
      if (e.compare(0, prefix.size(), prefix) == 0) {
        e = prefix + value;
        return;
      }
    }
    env.push_back(prefix + value);
  };
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) env.emplace_back(*e);
  for (const auto& [name, value] : exec.env) setEnv(name, value);
  setEnv("KUBERNETES_EXEC_INFO", execInfo(exec, cluster));
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> argvStore{exec.command};
  argvStore.insert(argvStore.end(), exec.args.begin(), exec.args.end());
  std::vector<char*> argv;
  for (auto& a : argvStore) argv.push_back(a.data());
  argv.push_back(nullptr);

  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    error = what + ": pipe: " + std::strerror(errno);
    return false;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  pid_t pid = -1;
  const int rc = ::posix_spawnp(&pid, exec.command.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (rc != 0) {
    ::close(fds[0]);
    error = what + " cannot run: " + std::strerror(rc);
    if (!exec.installHint.empty()) error += " (" + exec.installHint + ")";
    return false;
  }

  std::string output;
  bool timedOut = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutMs);
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timedOut = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int n = ::poll(&p, 1, static_cast<int>(left.count()));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      timedOut = n == 0;
      break;
    }
    char buf[4096];
    const ssize_t got = ::read(fds[0], buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    if (output.size() + static_cast<size_t>(got) > kMaxOutputBytes) {
      ::kill(pid, SIGKILL);
      ::close(fds[0]);
      ::waitpid(pid, nullptr, 0);
      error = what + " printed more than " + std::to_string(kMaxOutputBytes) + " bytes";
      return false;
    }
    output.append(buf, static_cast<size_t>(got));
  }
  ::close(fds[0]);
  if (timedOut) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timedOut) {
    error = what + " did not finish within " + std::to_string(timeoutMs / 1000) + " s";
    return false;
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    error = what + (WIFEXITED(status) ? " exited with code " + std::to_string(WEXITSTATUS(status))
                                      : " was killed by signal " + std::to_string(WTERMSIG(status)));
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127 && !exec.installHint.empty()) {
      error += " (" + exec.installHint + ")";
    }
    return false;
  }
  std::string why;
  if (!parseExecCredential(output, exec.apiVersion, out, why)) {
    error = what + ": " + why;
    return false;
  }
  return true;
}

}  // namespace fleetsched::apiclient
