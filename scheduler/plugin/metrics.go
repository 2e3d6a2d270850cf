package plugin

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/component-base/metrics/legacyregistry"

	"fleetsched/capi"
)

// What the engines' caches hold, on kube-scheduler's /metrics: summed over every profile's
// plugin (each profile that enables Fleetsched has its own engine).
var (
	registerOnce sync.Once
	enginesMu    sync.Mutex
	engines      []*capi.Engine
)

func track(e *capi.Engine) {
	enginesMu.Lock()
	engines = append(engines, e)
	enginesMu.Unlock()
	registerOnce.Do(func() {
		gauge := func(name, help string, f func(capi.Stats) uint64) {
			legacyregistry.RawMustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Name: "fleetsched_plugin_" + name, Help: help,
			}, func() float64 {
				enginesMu.Lock()
				defer enginesMu.Unlock()
				var sum uint64
				for _, e := range engines {
					sum += f(e.Stats())
				}
				return float64(sum)
			}))
		}
		gauge("cache_nodes", "Nodes in the Fleetsched plugin's cache.", func(s capi.Stats) uint64 { return s.Nodes })
		gauge("cache_bound_pods", "Pods the Fleetsched plugin's cache charges as bound.", func(s capi.Stats) uint64 { return s.BoundPods })
		gauge("reservations_live", "GPU reservations (Reserve) not yet confirmed by the bound pod or released.", func(s capi.Stats) uint64 { return s.ReservationsLive })
		gauge("cache_gpus", "GPUs allocatable on the nodes in the Fleetsched plugin's cache.", func(s capi.Stats) uint64 { return s.GpusTotal })
		gauge("cache_gpus_free", "GPUs of those not charged to a bound pod or a reservation.", func(s capi.Stats) uint64 { return s.GpusFree })
		gauge("gpu_overcommits", "Per-GPU charges clipped at a whole GPU (accounting drift; 0 when healthy).", func(s capi.Stats) uint64 { return s.GpuOvercommits })
	})
}
