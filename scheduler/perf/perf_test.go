//go:build schedulerperf

package perf

import (
	"fmt"
	"os"
	"testing"

	_ "k8s.io/component-base/logs/json/register"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	scheduler_perf "k8s.io/kubernetes/test/integration/scheduler_perf"

	"fleetsched/scheduler/plugin"
)

func TestMain(m *testing.M) {
	if err := scheduler_perf.InitTests(); err != nil {
		fmt.Fprintf(os.Stderr, "%v\n", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// BenchmarkPerfScheduling runs the workloads of performance-config.yaml that the label filter
// (-perf-scheduling-label-filter, upstream's default "performance") selects. The registry holds
// the Fleetsched plugin and FleetschedServe, which starts `fleetsched serve` for the extender
// configuration (extender_test.go); the hooks wait for fleetsched to hold every node before the
// pods are created and check it at the end. Both are no-ops for the other test cases.
func BenchmarkPerfScheduling(b *testing.B) {
	scheduler_perf.RunBenchmarkPerfScheduling(b, "performance-config.yaml", "fleetsched",
		frameworkruntime.Registry{plugin.Name: plugin.New, serveName: newServe},
		scheduler_perf.WithNodeUpdateFn(waitForNodes), scheduler_perf.WithPrepareFn(checkServe))
}
