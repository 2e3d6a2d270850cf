// Package perf runs kube-scheduler's own benchmark, test/integration/scheduler_perf of the
// pinned k8s.io/kubernetes, with Fleetsched in its out-of-tree registry: each workload of
// performance-config.yaml with kube-scheduler's default profile (stock), with the profile of
// scheduler-config-fleetsched.yaml (the Fleetsched plugin enabled), and with `fleetsched serve`
// as an extender (scheduler-config-extender*.yaml), on the same in-process kube-apiserver and
// etcd harness upstream uses for its own plugins. For the extender, the registry entry
// FleetschedServe starts fleetsched against the harness's API server (extender_test.go).
//
// The benchmark builds only with the schedulerperf build tag: it compiles kube-apiserver and
// etcd's client into the test binary, which plain `go test ./...` and `go vet ./...` should not
// pay for. bench/scheduler-perf.sh builds and runs it and prints each configuration against
// stock.
package perf
