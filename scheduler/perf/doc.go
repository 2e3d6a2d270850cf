// Package perf runs kube-scheduler's own benchmark, test/integration/scheduler_perf of the
// pinned k8s.io/kubernetes, with the Fleetsched plugin in its out-of-tree registry: each
// workload of performance-config.yaml once with kube-scheduler's default profile (stock) and
// once with the profile of scheduler-config-fleetsched.yaml (Fleetsched enabled), on the same
// in-process kube-apiserver and etcd harness upstream uses for its own plugins.
//
// The benchmark builds only with the schedulerperf build tag: it compiles kube-apiserver and
// etcd's client into the test binary, which plain `go test ./...` and `go vet ./...` should not
// pay for. bench/scheduler-perf.sh builds and runs it and prints stock against Fleetsched.
package perf
