#include "apiclient/k8s_names.h"

#include <gtest/gtest.h>

#include <string>

namespace fleetsched::apiclient {
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

TEST(K8sNames, PathSegmentsAreEscaped) {
  EXPECT_EQ(escapePathSegment("train-0.a_b~"), "train-0.a_b~");
  EXPECT_EQ(escapePathSegment("ml?dryRun=All"), "ml%3FdryRun%3DAll");
  EXPECT_EQ(escapePathSegment("../x/y"), "..%2Fx%2Fy");
  EXPECT_EQ(escapePathSegment(".."), "%2E%2E");
  EXPECT_EQ(escapePathSegment("."), "%2E");
  EXPECT_EQ(escapePathSegment("a\r\n#"), "a%0D%0A%23");
  EXPECT_EQ(escapeQueryValue("a+b/c=="), "a%2Bb%2Fc%3D%3D");
  EXPECT_EQ(podBindingPath("ml", "train-0"), "/api/v1/namespaces/ml/pods/train-0/binding");
  EXPECT_EQ(podBindingPath("..", "x?dryRun=All"), "/api/v1/namespaces/%2E%2E/pods/x%3FdryRun%3DAll/binding");
  EXPECT_EQ(eventsPath("../apis/events.k8s.io"), "/api/v1/namespaces/..%2Fapis%2Fevents.k8s.io/events");
}

}  // namespace
}  // namespace fleetsched::apiclient
