#include "apiclient/exec_credential.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "apiclient/kube_config.h"

namespace fleetsched::apiclient {
namespace {

namespace fs = std::filesystem;

constexpr const char* kV1 = "client.authentication.k8s.io/v1";

TEST(Rfc3339, ParsesWhatKubernetesWrites) {
  int64_t t = 0;
  ASSERT_TRUE(parseRfc3339("2026-12-06T01:02:03Z", t));
  EXPECT_EQ(t, 1796518923);
  ASSERT_TRUE(parseRfc3339("2026-12-06T01:02:03.123456Z", t));
  EXPECT_EQ(t, 1796518923);
  ASSERT_TRUE(parseRfc3339("2026-12-06T03:02:03+02:00", t));
  EXPECT_EQ(t, 1796518923);
  for (const char* bad : {"", "2026-12-06", "2026-12-06T01:02:03", "2026-13-06T01:02:03Z", "2026-12-06T01:02:03Zx",
                          "2026-12-06 01:02:03Z", "2026-12-06T01:02:03.Z", "2026-12-06T01:02:03+0200"}) {
    EXPECT_FALSE(parseRfc3339(bad, t)) << bad;
  }
}

TEST(ExecCredentialOutput, TokenCertificateAndWhatIsRefused) {
  ExecCredential c;
  std::string err;
  ASSERT_TRUE(parseExecCredential(
      R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential",
          "status":{"token":"k8s-aws-v1.abc","expirationTimestamp":"2026-12-06T01:02:03Z"}})",
      kV1, c, err))
      << err;
  EXPECT_EQ(c.token, "k8s-aws-v1.abc");
  EXPECT_EQ(c.expiry, 1796518923);
  ASSERT_TRUE(parseExecCredential(
      R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential",
          "status":{"clientCertificateData":"CERT","clientKeyData":"KEY"}})",
      kV1, c, err))
      << err;
  EXPECT_EQ(c.certPem, "CERT");
  EXPECT_EQ(c.expiry, 0);

  const std::pair<const char*, const char*> refused[] = {
      {R"({"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{"token":"t"}})",
       "not client.authentication.k8s.io/v1 ExecCredential"},
      {R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential"})", "no status"},
      {R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{}})",
       "neither a token nor a client certificate"},
      {R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"clientCertificateData":"C"}})",
       "without a key"},
      {R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"t","expirationTimestamp":"soon"}})",
       "not RFC 3339"},
      {"{{{", "not JSON"},
      {"[1,2]", "not an ExecCredential object"},
  };
  for (const auto& [text, why] : refused) {
    EXPECT_FALSE(parseExecCredential(text, kV1, c, err)) << text;
    EXPECT_NE(err.find(why), std::string::npos) << text << ": " << err;
  }
}

class ExecPlugin : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("fleetsched-exec-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string script(const std::string& name, const std::string& body) {
    const fs::path p = dir_ / name;
    std::ofstream(p) << "#!/bin/sh\n" << body;
    ::chmod(p.c_str(), 0755);
    return p.string();
  }
  std::string read(const std::string& name) {
    std::ifstream in(dir_ / name);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  // A plugin that counts its runs, records what it was given and answers with token tok-<run>.
  std::string countingPlugin(const std::string& expiry) {
    return script("cred.sh", "n=$(( $(cat \"$(dirname \"$0\")/runs\" 2>/dev/null || echo 0) + 1 ))\n"
                             "echo $n > \"$(dirname \"$0\")/runs\"\n"
                             "printf '%s' \"$KUBERNETES_EXEC_INFO\" > \"$(dirname \"$0\")/info\"\n"
                             "printf '%s %s' \"$1\" \"$REGION\" > \"$(dirname \"$0\")/seen\"\n"
                             "printf '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\","
                             "\"status\":{\"token\":\"tok-%s\"" +
                                 expiry + "}}' $n\n");
  }
  fs::path dir_;
};

TEST_F(ExecPlugin, RunsTheCommandWithArgsEnvAndExecInfo) {
  ExecConfig exec;
  exec.apiVersion = kV1;
  exec.command = countingPlugin(R"(,"expirationTimestamp":"2026-12-06T01:02:03Z")");
  exec.args = {"token"};
  exec.env = {{"REGION", "us-west-2"}};
  exec.provideClusterInfo = true;
  ClusterConfig cluster;
  cluster.server = "https://api.example:6443";
  cluster.caPem = "CA";
  ExecCredential got;
  std::string err;
  ASSERT_TRUE(runExecCredential(exec, cluster, got, err)) << err;
  EXPECT_EQ(got.token, "tok-1");
  EXPECT_EQ(got.expiry, 1796518923);
  EXPECT_EQ(read("seen"), "token us-west-2");
  EXPECT_EQ(read("info"),
            R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","spec":{"interactive":false,)"
            R"("cluster":{"server":"https://api.example:6443","certificate-authority-data":"Q0E="}}})");
}

TEST_F(ExecPlugin, FailuresNameTheCommand) {
  ExecConfig exec;
  exec.apiVersion = kV1;
  exec.installHint = "install aws-cli";
  ExecCredential got;
  std::string err;
  exec.command = (dir_ / "missing-plugin").string();
  EXPECT_FALSE(runExecCredential(exec, ClusterConfig{}, got, err));
  EXPECT_NE(err.find("cannot run"), std::string::npos) << err;
  EXPECT_NE(err.find("install aws-cli"), std::string::npos) << err;

  exec.command = script("fails.sh", "echo 'no credentials' >&2\nexit 3\n");
  EXPECT_FALSE(runExecCredential(exec, ClusterConfig{}, got, err));
  EXPECT_NE(err.find("exited with code 3"), std::string::npos) << err;

  exec.command = script("garbage.sh", "echo hello\n");
  EXPECT_FALSE(runExecCredential(exec, ClusterConfig{}, got, err));
  EXPECT_NE(err.find("garbage.sh"), std::string::npos) << err;

  exec.command = script("slow.sh", "exec sleep 5\n");
  EXPECT_FALSE(runExecCredential(exec, ClusterConfig{}, got, err, 200));
  EXPECT_NE(err.find("did not finish"), std::string::npos) << err;
}

TEST_F(ExecPlugin, KubeconfigRunsItAtLoadAndAgainWhenDue) {
  countingPlugin(R"(,"expirationTimestamp":"2026-12-06T01:02:03Z")");
  const fs::path kc = dir_ / "kubeconfig";
  std::ofstream(kc) << R"(clusters: [{name: c, cluster: {server: "https://h:6443"}}]
users:
- name: u
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: ./cred.sh
      args: [token]
      env: [{name: REGION, value: eu-central-1}]
      interactiveMode: Never
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
)";
  ClusterConfig c;
  std::string err;
  // The command is relative to the kubeconfig's folder, wherever fleetsched runs.
  ASSERT_TRUE(loadKubeconfig(kc.string(), "", c, err)) << err;
  EXPECT_EQ(c.token, "tok-1");
  EXPECT_EQ(c.credentialExpiry, 1796518923);
  EXPECT_EQ(read("seen"), "token eu-central-1");
  // Not due: well before the expiry.
  ASSERT_TRUE(refreshCredentials(c, 1796518923 - 3600, false, err)) << err;
  EXPECT_EQ(c.token, "tok-1");
  // Due: within the margin of the expiry; and forced (a 401).
  ASSERT_TRUE(refreshCredentials(c, 1796518923 - kExecRefreshMarginSeconds + 1, false, err)) << err;
  EXPECT_EQ(c.token, "tok-2");
  ASSERT_TRUE(refreshCredentials(c, 0, true, err)) << err;
  EXPECT_EQ(c.token, "tok-3");
  EXPECT_EQ(plaintextTokenWarning(c), "");

  // A plugin that fails at load fails the kubeconfig, naming the user.
  std::ofstream(kc) << R"(clusters: [{name: c, cluster: {server: "https://h"}}]
users: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: ./nope.sh}}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
)";
  EXPECT_FALSE(loadKubeconfig(kc.string(), "", c, err));
  EXPECT_NE(err.find("user \"u\": exec credential plugin"), std::string::npos) << err;

  for (const char* exec : {"{command: aws}", "{apiVersion: client.authentication.k8s.io/v1alpha1, command: aws}",
                           "{apiVersion: client.authentication.k8s.io/v1}",
                           "{apiVersion: client.authentication.k8s.io/v1, command: aws, interactiveMode: Always}"}) {
    std::ofstream(kc) << "clusters: [{name: c, cluster: {server: \"https://h\"}}]\nusers: [{name: u, user: {exec: " << exec
                      << "}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n";
    EXPECT_FALSE(loadKubeconfig(kc.string(), "", c, err)) << exec;
    EXPECT_NE(err.find("exec:"), std::string::npos) << exec << ": " << err;
  }
}

}  // namespace
}  // namespace fleetsched::apiclient
