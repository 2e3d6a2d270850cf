// Runs a kubeconfig's exec credential plugin the way client-go does
// (k8s.io/client-go/plugin/pkg/client/auth/exec): the command with its args and env, plus
// KUBERNETES_EXEC_INFO holding an ExecCredential whose spec says the session is not interactive
// (and, with provideClusterInfo, which cluster it is for); stdin is /dev/null, stderr is
// fleetsched's own, stdout must be an ExecCredential of the configured apiVersion whose status
// carries a token or a client certificate and key, and optionally an expirationTimestamp.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "apiclient/kube_config.h"

namespace fleetsched::apiclient {

struct ExecCredential {
  std::string token;
  std::string certPem;
  std::string keyPem;
  int64_t expiry = 0;  // Unix seconds; 0: none given
};

// Runs the plugin and reads its answer. A command that cannot start, does not finish within
// `timeoutMs`, exits non-zero or prints something other than a valid ExecCredential is an error
// naming the command (and its installHint when it could not be started).
bool runExecCredential(const ExecConfig& exec, const ClusterConfig& cluster, ExecCredential& out,
                       std::string& error, uint32_t timeoutMs = 60'000);

// The plugin's stdout: an ExecCredential of `apiVersion`.
bool parseExecCredential(std::string_view text, const std::string& apiVersion, ExecCredential& out,
                         std::string& error);

// What goes into KUBERNETES_EXEC_INFO.
std::string execInfo(const ExecConfig& exec, const ClusterConfig& cluster);

// RFC 3339 ("2026-12-06T01:02:03Z", fractions and ±hh:mm offsets allowed) to Unix seconds.
bool parseRfc3339(std::string_view text, int64_t& out);

}  // namespace fleetsched::apiclient
