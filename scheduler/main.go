// fleetsched-scheduler: kube-scheduler with fleetsched's engine compiled in as the Fleetsched
// plugin (package plugin). Everything else is upstream kube-scheduler: same flags, same
// KubeSchedulerConfiguration; enable the plugin in a profile (deploy/ has the configuration).
package main

import (
	"os"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"

	"fleetsched/scheduler/plugin"
)

func main() {
	command := app.NewSchedulerCommand(app.WithPlugin(plugin.Name, plugin.New))
	os.Exit(cli.Run(command))
}
