# shellcheck shell=bash
# Sourced by the scripts that build Kubernetes binaries (tests/e2e/build-components.sh,
# scripts/build-scheduler.sh). fleetsched_k8s_ldflags VERSION prints the -ldflags that set the
# variables upstream's hack/lib/version.sh sets; without them the binaries report
# v0.0.0-master and clients see no real server version.
fleetsched_k8s_ldflags() {
  local version=$1 minor
  minor=${version#v1.}
  minor=${minor%%.*}
  echo "-s -w \
 -X k8s.io/component-base/version.gitVersion=$version \
 -X k8s.io/component-base/version.gitMajor=1 \
 -X k8s.io/component-base/version.gitMinor=$minor \
 -X k8s.io/component-base/version.gitTreeState=clean \
 -X k8s.io/client-go/pkg/version.gitVersion=$version \
 -X k8s.io/client-go/pkg/version.gitMajor=1 \
 -X k8s.io/client-go/pkg/version.gitMinor=$minor"
}

# fleetsched_k8s_pin GO_MOD prints the k8s.io/kubernetes version a go.mod requires.
fleetsched_k8s_pin() {
  awk '$1 == "require" && $2 == "k8s.io/kubernetes" {print $3; exit} $1 == "k8s.io/kubernetes" && $2 ~ /^v/ {print $2; exit}' "$1"
}
