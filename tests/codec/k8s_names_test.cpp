#include "codec/k8s_names.h"

#include <gtest/gtest.h>

#include <string>

namespace fleetsched::codec {
namespace {

TEST(K8sNames, LabelsAndSubdomains) {
  EXPECT_TRUE(isDns1123Label("default"));
  EXPECT_TRUE(isDns1123Label("kube-system"));
  EXPECT_TRUE(isDns1123Label("a"));
  EXPECT_TRUE(isDns1123Label(std::string(63, 'a')));
  EXPECT_FALSE(isDns1123Label(std::string(64, 'a')));
  for (const char* bad : {"", "-a", "a-", "A", "a.b", "a/b", "a?dryRun=All", "..", "a\r\nb", "a b", "é"}) {
    EXPECT_FALSE(isDns1123Label(bad)) << bad;
  }
  EXPECT_TRUE(isDns1123Subdomain("train-0"));
  EXPECT_TRUE(isDns1123Subdomain("job.worker-1.x"));
  EXPECT_TRUE(isDns1123Subdomain(std::string(253, 'a')));
  EXPECT_FALSE(isDns1123Subdomain(std::string(254, 'a')));
  for (const char* bad : {"", ".", "..", "a..b", ".a", "a.", "a/../b", "a%2F", "Pod", "a_b", "x\n", "a.-b"}) {
    EXPECT_FALSE(isDns1123Subdomain(bad)) << bad;
  }
}

TEST(K8sNames, PodRefErrorsNameTheFieldAndEscapeTheValue) {
  std::string error;
  EXPECT_TRUE(validatePodRef("ml", "train-0", error));
  ASSERT_FALSE(validatePodRef("ml?dryRun=All", "train-0", error));
  EXPECT_NE(error.find("namespace \"ml?dryRun=All\""), std::string::npos) << error;
  ASSERT_FALSE(validatePodRef("ml", "p\r\nX-Injected: 1", error));
  EXPECT_NE(error.find("pod name \"p\\x0D\\x0AX-Injected: 1\""), std::string::npos) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos);
  ASSERT_FALSE(validatePodRef("ml", std::string(300, 'a'), error));
  EXPECT_LT(error.size(), 300u);
}

}  // namespace
}  // namespace fleetsched::codec
