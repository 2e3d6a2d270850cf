#include "apiclient/api_paths.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <utility>

namespace fleetsched::apiclient {
namespace {

TEST(ApiPaths, PathSegmentsAreEscaped) {
  const std::pair<std::string_view, std::string_view> segments[] = {
      {"train-0.a_b~", "train-0.a_b~"}, {"ml?dryRun=All", "ml%3FdryRun%3DAll"}, {"../x/y", "..%2Fx%2Fy"},
      {"..", "%2E%2E"},                 {".", "%2E"},                           {"a\r\n#", "a%0D%0A%23"},
  };
  for (const auto& [in, want] : segments) EXPECT_EQ(escapePathSegment(in), want) << in;
  EXPECT_EQ(escapeQueryValue("a+b/c=="), "a%2Bb%2Fc%3D%3D");
  EXPECT_EQ(podBindingPath("ml", "train-0"), "/api/v1/namespaces/ml/pods/train-0/binding");
  EXPECT_EQ(podBindingPath("..", "x?dryRun=All"), "/api/v1/namespaces/%2E%2E/pods/x%3FdryRun%3DAll/binding");
  EXPECT_EQ(eventsPath("../apis/events.k8s.io"), "/api/v1/namespaces/..%2Fapis%2Fevents.k8s.io/events");
  EXPECT_EQ(leasesPath("kube-system"), "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases");
  EXPECT_EQ(leasePath("kube-system", "fleetsched"), "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/fleetsched");
  EXPECT_EQ(leasePath("..", "a/b?x"), "/apis/coordination.k8s.io/v1/namespaces/%2E%2E/leases/a%2Fb%3Fx");
}

}  // namespace
}  // namespace fleetsched::apiclient
