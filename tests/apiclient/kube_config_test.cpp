#include "apiclient/kube_config.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace fleetsched::apiclient {
namespace {

namespace fs = std::filesystem;

class KubeConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("fleetsched-kc-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }
  fs::path dir_;
};

TEST_F(KubeConfigTest, CurrentContextWithTokenAndRelativeCaFile) {
  write("ca.crt", "-----BEGIN CERTIFICATE-----\nabc\n-----END CERTIFICATE-----\n");
  std::string path = write("kubeconfig", R"(apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster: {server: "https://127.0.0.1:6443/", certificate-authority: ca.crt}
- name: other
  cluster: {server: "https://10.0.0.1", insecure-skip-tls-verify: true}
users:
- name: admin
  user: {token: s3cret}
contexts:
- name: e2e
  context: {cluster: e2e, user: admin, namespace: ml}
- name: o
  context: {cluster: other, user: admin}
current-context: e2e
)");
  ClusterConfig c;
  std::string err;
  ASSERT_TRUE(loadKubeconfig(path, "", c, err)) << err;
  EXPECT_EQ(c.server, "https://127.0.0.1:6443");
  EXPECT_EQ(c.token, "s3cret");
  EXPECT_NE(c.caPem.find("BEGIN CERTIFICATE"), std::string::npos);
  EXPECT_EQ(c.namespace_, "ml");
  EXPECT_FALSE(c.insecureSkipVerify);

  ClusterConfig o;
  ASSERT_TRUE(loadKubeconfig(path, "o", o, err)) << err;
  EXPECT_EQ(o.server, "https://10.0.0.1");
  EXPECT_TRUE(o.insecureSkipVerify);
}

TEST_F(KubeConfigTest, Base64DataFields) {
  // "hello-ca" and "cert!" in base64.
  std::string path = write("kc", R"(clusters:
- name: c
  cluster: {server: "https://h:1", certificate-authority-data: aGVsbG8tY2E=}
users:
- name: u
  user: {client-certificate-data: Y2VydCE=, client-key-data: a2V5}
contexts:
- name: x
  context: {cluster: c, user: u}
current-context: x
)");
  ClusterConfig c;
  std::string err;
  ASSERT_TRUE(loadKubeconfig(path, "", c, err)) << err;
  EXPECT_EQ(c.caPem, "hello-ca");
  EXPECT_EQ(c.certPem, "cert!");
  EXPECT_EQ(c.keyPem, "key");
}

TEST_F(KubeConfigTest, ClearErrors) {
  ClusterConfig c;
  std::string err;
  EXPECT_FALSE(loadKubeconfig((dir_ / "missing").string(), "", c, err));
  EXPECT_NE(err.find("cannot read"), std::string::npos);

  std::string path = write("kc", "clusters: []\ncontexts: []\ncurrent-context: nope\n");
  EXPECT_FALSE(loadKubeconfig(path, "", c, err));
  EXPECT_NE(err.find("context \"nope\" not found"), std::string::npos) << err;

  path = write("kc2", R"(clusters: [{name: c, cluster: {server: "https://h"}}]
users: [{name: u, user: {auth-provider: {name: gcp}}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
)");
  EXPECT_FALSE(loadKubeconfig(path, "", c, err));
  EXPECT_NE(err.find("auth-provider"), std::string::npos) << err;

  path = write("kc3", "{{{not yaml");
  EXPECT_FALSE(loadKubeconfig(path, "", c, err));
  EXPECT_NE(err.find("kubeconfig"), std::string::npos);
}

TEST_F(KubeConfigTest, InClusterReadsTokenAndRotates) {
  write("token", "tok-1\n");
  write("ca.crt", "CA");
  write("namespace", "fleet");
  ::setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
  ::setenv("KUBERNETES_SERVICE_PORT", "443", 1);
  ClusterConfig c;
  std::string err;
  ASSERT_TRUE(inClusterConfig(c, err, dir_.string())) << err;
  EXPECT_EQ(c.server, "https://[fd00::1]:443");
  EXPECT_EQ(c.token, "tok-1");
  EXPECT_EQ(c.caPem, "CA");
  EXPECT_EQ(c.namespace_, "fleet");
  write("token", "tok-2");
  ASSERT_TRUE(refreshCredentials(c, 0, false, err));
  EXPECT_EQ(c.token, "tok-2");
  ::unsetenv("KUBERNETES_SERVICE_HOST");
  EXPECT_FALSE(inClusterConfig(c, err, dir_.string()));
  EXPECT_NE(err.find("not running in a cluster"), std::string::npos);
}

// Issue 26, defect 9: tls-server-name parsed, then applied to where requests go.
TEST_F(KubeConfigTest, TlsServerNameRoutesToTheServerUnderThatName) {
  std::string path = write("kubeconfig", R"(apiVersion: v1
kind: Config
clusters:
- name: loop
  cluster: {server: "https://127.0.0.1:6443", tls-server-name: apiserver-loopback-client}
users:
- name: u
  user: {token: t}
contexts:
- name: c
  context: {cluster: loop, user: u}
current-context: c
)");
  ClusterConfig c;
  std::string err;
  ASSERT_TRUE(loadKubeconfig(path, "", c, err)) << err;
  EXPECT_EQ(c.tlsServerName, "apiserver-loopback-client");
  ServerRoute r = serverRoute(c);
  EXPECT_EQ(r.urlBase, "https://apiserver-loopback-client:6443");
  EXPECT_EQ(r.connectTo, "apiserver-loopback-client:6443:127.0.0.1:6443");
  EXPECT_EQ(r.hostHeader, "Host: 127.0.0.1:6443");

  c.server = "https://[::1]:6443";
  r = serverRoute(c);
  EXPECT_EQ(r.connectTo, "apiserver-loopback-client:6443:[::1]:6443");
  EXPECT_EQ(r.hostHeader, "Host: [::1]:6443");
  c.server = "https://rancher.example/k8s/clusters/c-1";
  r = serverRoute(c);
  EXPECT_EQ(r.urlBase, "https://apiserver-loopback-client:443/k8s/clusters/c-1");
  EXPECT_EQ(r.connectTo, "apiserver-loopback-client:443:rancher.example:443");
  // Nothing to do without a name, with the same name, or over http://.
  const char* const cases[][2] = {{"https://10.0.0.1:6443", ""},
                                  {"https://apiserver-loopback-client:6443", "apiserver-loopback-client"},
                                  {"http://127.0.0.1:8080", "apiserver-loopback-client"}};
  for (const auto& [server, name] : cases) {
    c.server.assign(server);
    c.tlsServerName.assign(name);
    r = serverRoute(c);
    EXPECT_EQ(r.urlBase, server);
    EXPECT_TRUE(r.connectTo.empty()) << server;
    EXPECT_TRUE(r.hostHeader.empty()) << server;
  }
}

ClusterConfig configWith(const char* server, const char* token, const char* tokenFile) {
  ClusterConfig c;
  c.server = server;
  c.token = token;
  c.tokenFile = tokenFile;
  return c;
}

TEST(PlaintextToken, WarnsOnlyForATokenOverHttp) {
  EXPECT_EQ(plaintextTokenWarning(configWith("http://127.0.0.1:8080", "", "")), "");  // no token
  EXPECT_NE(plaintextTokenWarning(configWith("http://127.0.0.1:8080", "t", "")).find("plain http://"),
            std::string::npos);
  EXPECT_NE(plaintextTokenWarning(configWith("http://127.0.0.1:8080", "", "/run/token")), "");
  EXPECT_EQ(plaintextTokenWarning(configWith("https://127.0.0.1:6443", "t", "")), "");
}

}  // namespace
}  // namespace fleetsched::apiclient
