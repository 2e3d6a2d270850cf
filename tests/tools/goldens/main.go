// Command goldens writes the byte-exact wire fixtures for fleetsched's codec tests: Go's own
// encoding/json output of the kube-scheduler extender/v1 types and of Kubernetes objects, plus
// reference values computed by the real Kubernetes libraries (quantity parsing, PodRequests).
//
// Regenerate from the repository root with:
//
//	cd tests/tools/goldens && go run . ../../data/codec
//
// The C++ tests only read the generated files; they never need Go.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"sort"
	"time"

	"gopkg.in/inf.v0"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	resourcehelper "k8s.io/component-helpers/resource"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"
)

var outDir string

func must(err error) {
	if err != nil {
		panic(err)
	}
}

func write(name string, v any) {
	b, err := json.Marshal(v)
	must(err)
	must(os.WriteFile(filepath.Join(outDir, name), b, 0o644))
}

func writeRaw(name string, b []byte) {
	must(os.WriteFile(filepath.Join(outDir, name), b, 0o644))
}

func q(s string) resource.Quantity { return resource.MustParse(s) }

func rl(kv ...string) v1.ResourceList {
	out := v1.ResourceList{}
	for i := 0; i+1 < len(kv); i += 2 {
		out[v1.ResourceName(kv[i])] = q(kv[i+1])
	}
	return out
}

func ptr[T any](v T) *T { return &v }

var created = metav1.NewTime(time.Date(2026, 11, 30, 8, 15, 0, 0, time.UTC))

func managedFields() []metav1.ManagedFieldsEntry {
	return []metav1.ManagedFieldsEntry{{
		Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate,
		APIVersion: "v1", Time: &created, FieldsType: "FieldsV1",
		FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"main\"}":{".":{},"f:image":{}}}}}`)},
	}}
}

// trainPod is a GPU training pod: init containers (plain and a restartable sidecar), limits-only
// containers, tolerations, required and preferred node affinity, owner references, overhead.
func trainPod() *v1.Pod {
	always := v1.ContainerRestartPolicyAlways
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "train-llama-0", Namespace: "ml", UID: "6f1c2a9e-4b7d-4e11-9a3c-0d2b8e5f7a10",
			ResourceVersion: "48213", CreationTimestamp: created,
			Labels: map[string]string{"app": "llama-train", "fleetsched.io/workload": "llama",
				"batch.kubernetes.io/job-name": "llama-train"},
			Annotations: map[string]string{"fleetsched.io/gpu-models": "A100|H100",
				"fleetsched.io/gpu-min-memory": "40000", "note": "<tensor & pipeline>"},
			OwnerReferences: []metav1.OwnerReference{
				{APIVersion: "batch/v1", Kind: "Job", Name: "llama-train", UID: "0a7c9d1e-1111-4f00-8000-00000000beef",
					Controller: ptr(true), BlockOwnerDeletion: ptr(true)},
				{APIVersion: "v1", Kind: "ConfigMap", Name: "llama-config", UID: "0a7c9d1e-2222-4f00-8000-00000000cafe"},
			},
			ManagedFields: managedFields(),
		},
		Spec: v1.PodSpec{
			SchedulerName:     "fleetsched",
			PriorityClassName: "training-high",
			Priority:          ptr(int32(100000)),
			NodeSelector:      map[string]string{"nvidia.com/gpu.present": "true"},
			Affinity: &v1.Affinity{
				NodeAffinity: &v1.NodeAffinity{
					RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{
						{MatchExpressions: []v1.NodeSelectorRequirement{
							{Key: "topology.kubernetes.io/zone", Operator: v1.NodeSelectorOpIn, Values: []string{"us-east-1a", "us-east-1b"}},
							{Key: "nvidia.com/gpu.memory", Operator: v1.NodeSelectorOpGt, Values: []string{"40000"}},
							{Key: "node.kubernetes.io/exclude", Operator: v1.NodeSelectorOpDoesNotExist},
						}},
						{MatchFields: []v1.NodeSelectorRequirement{
							{Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: []string{"gpu-a"}},
						}},
					}},
					PreferredDuringSchedulingIgnoredDuringExecution: []v1.PreferredSchedulingTerm{
						{Weight: 50, Preference: v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{
							{Key: "karpenter.sh/capacity-type", Operator: v1.NodeSelectorOpNotIn, Values: []string{"spot"}}}}},
						{Weight: 10, Preference: v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{
							{Key: "nvidia.com/gpu.product", Operator: v1.NodeSelectorOpExists},
							{Key: "nvidia.com/gpu.count", Operator: v1.NodeSelectorOpLt, Values: []string{"9"}}}}},
					},
				},
				PodAntiAffinity: &v1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{{
					Weight: 1, PodAffinityTerm: v1.PodAffinityTerm{TopologyKey: "kubernetes.io/hostname",
						LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "llama-train"}}}}}},
			},
			Tolerations: []v1.Toleration{
				{Key: "nvidia.com/gpu", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule},
				{Key: "fleetsched.io/spot", Operator: v1.TolerationOpEqual, Value: "true", Effect: v1.TaintEffectNoSchedule},
				{Key: "node.kubernetes.io/not-ready", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute, TolerationSeconds: ptr(int64(300))},
				{Key: "dedicated", Value: "ml"},
				{Operator: v1.TolerationOpExists},
			},
			InitContainers: []v1.Container{
				{Name: "download-weights", Image: "registry.example/tools:1.4", Command: []string{"sh", "-c", "fetch"},
					Resources: v1.ResourceRequirements{Requests: rl("cpu", "16", "memory", "32Gi")}},
				{Name: "log-shipper", Image: "registry.example/fluent-bit:3", RestartPolicy: &always,
					Resources: v1.ResourceRequirements{Requests: rl("cpu", "250m", "memory", "256Mi")}},
				{Name: "warmup", Image: "registry.example/llama:7b",
					Resources: v1.ResourceRequirements{Limits: rl("cpu", "2", "memory", "70Gi", "nvidia.com/gpu", "4")}},
			},
			Containers: []v1.Container{
				{Name: "trainer", Image: "registry.example/llama:7b", Args: []string{"--epochs=3"},
					Env:   []v1.EnvVar{{Name: "NCCL_DEBUG", Value: "INFO"}},
					Ports: []v1.ContainerPort{{ContainerPort: 29500, Protocol: v1.ProtocolTCP}},
					Resources: v1.ResourceRequirements{
						Requests: rl("cpu", "7500m", "memory", "60Gi", "nvidia.com/gpu", "4"),
						Limits:   rl("memory", "64Gi", "nvidia.com/gpu", "4", "ephemeral-storage", "20Gi")},
					VolumeMounts: []v1.VolumeMount{{Name: "shm", MountPath: "/dev/shm"}}},
				{Name: "metrics-exporter", Image: "registry.example/dcgm-exporter:3",
					Resources: v1.ResourceRequirements{Requests: rl("cpu", "100m", "memory", "128Mi")}},
			},
			Overhead: rl("cpu", "250m", "memory", "120Mi"),
			Volumes: []v1.Volume{{Name: "shm", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{Medium: v1.StorageMediumMemory}}}},
		},
		Status: v1.PodStatus{
			Phase:             v1.PodPending,
			NominatedNodeName: "gpu-b",
			Conditions: []v1.PodCondition{{Type: v1.PodScheduled, Status: v1.ConditionFalse, Reason: "Unschedulable",
				Message: "0/3 nodes are available: 3 Insufficient nvidia.com/gpu."}},
			QOSClass: v1.PodQOSBurstable,
		},
	}
}

// cpuPod only sets limits, as many web workloads do; requests come from apiserver defaulting.
func cpuPod() *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-7d4f9-x2x8k", Namespace: "default", UID: "c1d2e3f4-0000-4000-8000-000000000001",
			ResourceVersion: "991", GenerateName: "web-7d4f9-", Labels: map[string]string{"app": "web", "pod-template-hash": "7d4f9"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-7d4f9",
				UID: "c1d2e3f4-0000-4000-8000-0000000000aa", Controller: ptr(true), BlockOwnerDeletion: ptr(true)}}},
		Spec: v1.PodSpec{
			SchedulerName: "default-scheduler",
			Containers: []v1.Container{
				{Name: "nginx", Image: "nginx:1.27", Resources: v1.ResourceRequirements{Limits: rl("cpu", "1", "memory", "512Mi")}},
				{Name: "sidecar", Image: "envoy:1.31", Resources: v1.ResourceRequirements{Requests: rl("cpu", "50m"), Limits: rl("cpu", "200m", "memory", "64Mi")}},
			},
		},
		Status: v1.PodStatus{Phase: v1.PodPending},
	}
}

func boundPod() *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "infer-0", Namespace: "serving", UID: "b0b0b0b0-0000-4000-8000-000000000002", ResourceVersion: "3001",
			Labels: map[string]string{"app": "infer"}},
		Spec: v1.PodSpec{NodeName: "gpu-a", SchedulerName: "fleetsched", Priority: ptr(int32(-5)),
			Containers: []v1.Container{{Name: "server", Image: "vllm:0.6",
				Resources: v1.ResourceRequirements{Requests: rl("cpu", "4", "memory", "32Gi", "nvidia.com/gpu", "2"), Limits: rl("nvidia.com/gpu", "2")}}}},
		Status: v1.PodStatus{Phase: v1.PodRunning},
	}
}

func terminatingPod() *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "old-job-z", Namespace: "ml", UID: "dddddddd-0000-4000-8000-000000000003", ResourceVersion: "3002",
			DeletionTimestamp: &created, DeletionGracePeriodSeconds: ptr(int64(30))},
		Spec: v1.PodSpec{NodeName: "gpu-b", Containers: []v1.Container{{Name: "c", Image: "busybox",
			Resources: v1.ResourceRequirements{Requests: rl("cpu", "1", "nvidia.com/gpu", "1"), Limits: rl("nvidia.com/gpu", "1")}}}},
		Status: v1.PodStatus{Phase: v1.PodRunning},
	}
}

// podLevelPod uses pod-level resources (KEP 2837): they replace the container sum for cpu/memory.
func podLevelPod() *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "pod-level", Namespace: "default", UID: "eeeeeeee-0000-4000-8000-000000000004"},
		Spec: v1.PodSpec{
			Resources: &v1.ResourceRequirements{Requests: rl("cpu", "4", "memory", "8Gi"), Limits: rl("cpu", "8", "memory", "8Gi")},
			Containers: []v1.Container{
				{Name: "a", Image: "a", Resources: v1.ResourceRequirements{Requests: rl("cpu", "1", "memory", "1Gi", "nvidia.com/gpu", "1"), Limits: rl("nvidia.com/gpu", "1")}},
				{Name: "b", Image: "b", Resources: v1.ResourceRequirements{Requests: rl("cpu", "500m", "ephemeral-storage", "1Gi")}},
			},
			Overhead: rl("cpu", "100m", "memory", "64Mi"),
		},
		Status: v1.PodStatus{Phase: v1.PodPending},
	}
}

// fractionPod has amounts that are not whole units: kube-scheduler adds the exact quantities and
// rounds the sum, so 2 x 1.1Gi is 2362232013 bytes, not 2 x 1181116007.
func fractionPod() *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "fractions", Namespace: "default", UID: "ffffffff-0000-4000-8000-000000000005"},
		Spec: v1.PodSpec{
			Containers: []v1.Container{
				{Name: "a", Image: "a", Resources: v1.ResourceRequirements{Requests: rl("cpu", "0.5m", "memory", "1.1Gi", "example.com/dev", "0.3")}},
				{Name: "b", Image: "b", Resources: v1.ResourceRequirements{Requests: rl("cpu", "0.5m", "memory", "1.1Gi", "example.com/dev", "0.3")}},
			},
		},
		Status: v1.PodStatus{Phase: v1.PodPending},
	}
}

func gpuNode(name, zone, product, mem, count, capType string, spot bool) v1.Node {
	labels := map[string]string{
		"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
		"topology.kubernetes.io/zone": zone, "topology.kubernetes.io/region": "us-east-1",
		"node.kubernetes.io/instance-type": "p4d.24xlarge",
		"karpenter.sh/capacity-type": capType, "eks.amazonaws.com/capacityType": map[bool]string{true: "SPOT", false: "ON_DEMAND"}[spot],
		"nvidia.com/gpu.present": "true", "nvidia.com/gpu.product": product, "nvidia.com/gpu.memory": mem,
		"nvidia.com/gpu.count": count, "nvidia.com/gpu.family": "ampere", "nvidia.com/cuda.driver.major": "550",
		"nvidia.com/mig.capable": "true", "nvidia.com/gfd.timestamp": "1732954500",
	}
	taints := []v1.Taint{{Key: "nvidia.com/gpu", Value: "present", Effect: v1.TaintEffectNoSchedule}}
	if spot {
		taints = append(taints, v1.Taint{Key: "fleetsched.io/spot", Value: "true", Effect: v1.TaintEffectNoSchedule},
			v1.Taint{Key: "node.kubernetes.io/spot-interruption", Effect: v1.TaintEffectPreferNoSchedule})
	}
	return v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("11111111-2222-4333-8444-" + fmt.Sprintf("%012x", len(name)*7919+len(zone))),
			ResourceVersion: "77" + count, CreationTimestamp: created, Labels: labels,
			Annotations: map[string]string{"node.alpha.kubernetes.io/ttl": "0", "volumes.kubernetes.io/controller-managed-attach-detach": "true"},
			ManagedFields: managedFields()},
		Spec: v1.NodeSpec{ProviderID: "aws:///" + zone + "/i-0abc" + name, Taints: taints},
		Status: v1.NodeStatus{
			Capacity: rl("cpu", "96", "memory", "1176637456Ki", "ephemeral-storage", "3905110864Ki", "pods", "737",
				"nvidia.com/gpu", count, "hugepages-1Gi", "0", "hugepages-2Mi", "0", "vpc.amazonaws.com/efa", "4"),
			Allocatable: rl("cpu", "95690m", "memory", "1147304848Ki", "ephemeral-storage", "3598798569707", "pods", "737",
				"nvidia.com/gpu", count, "hugepages-1Gi", "0", "hugepages-2Mi", "0", "vpc.amazonaws.com/efa", "4"),
			Conditions: []v1.NodeCondition{
				{Type: v1.NodeMemoryPressure, Status: v1.ConditionFalse, Reason: "KubeletHasSufficientMemory", LastHeartbeatTime: created, LastTransitionTime: created},
				{Type: v1.NodeReady, Status: v1.ConditionTrue, Reason: "KubeletReady", Message: "kubelet is posting ready status", LastHeartbeatTime: created, LastTransitionTime: created},
			},
			Addresses: []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "10.0.12.7"}, {Type: v1.NodeHostName, Address: name}},
			NodeInfo: v1.NodeSystemInfo{KubeletVersion: "v1.36.3", ContainerRuntimeVersion: "containerd://2.0.4", OSImage: "Amazon Linux 2023",
				KernelVersion: "6.1.115", OperatingSystem: "linux", Architecture: "amd64"},
			Images: []v1.ContainerImage{{Names: []string{"registry.example/llama@sha256:aa11", "registry.example/llama:7b"}, SizeBytes: 18203945112}},
		},
	}
}

func cpuNode() v1.Node {
	return v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "cpu-1", UID: "33333333-2222-4333-8444-000000000003", ResourceVersion: "501",
			Labels: map[string]string{"kubernetes.io/hostname": "cpu-1", "topology.kubernetes.io/zone": "us-east-1c",
				"node.kubernetes.io/instance-type": "m6i.4xlarge", "karpenter.sh/capacity-type": "on-demand"}},
		Spec: v1.NodeSpec{Unschedulable: true, Taints: []v1.Taint{{Key: "node.kubernetes.io/unschedulable", Effect: v1.TaintEffectNoSchedule, TimeAdded: &created}}},
		Status: v1.NodeStatus{
			Capacity:    rl("cpu", "16", "memory", "64393396Ki", "pods", "234"),
			Allocatable: rl("cpu", "15890m", "memory", "61472948Ki", "pods", "234"),
		},
	}
}

func nodes() []v1.Node {
	return []v1.Node{
		gpuNode("gpu-a", "us-east-1a", "NVIDIA-A100-SXM4-80GB", "81920", "8", "on-demand", false),
		gpuNode("gpu-b", "us-east-1b", "NVIDIA-H100-80GB-HBM3", "81559", "8", "spot", true),
		cpuNode(),
	}
}

// Strings chosen to exercise Go's escaping: HTML characters, quotes, control characters, line
// and paragraph separators, non-ASCII, and invalid UTF-8 (which Go replaces with U+FFFD). The
// C++ tests build the same byte strings.
var reasonTricky = "need <4> GPUs & \"fast\" \\ net\n\ttab\b\f\x01\x1f\x7f \u2028\u2029 é 日本 \xff\xc3( end"

func filterResults() {
	names := []string{"gpu-a"}
	write("filter_result_names.golden.json", extenderv1.ExtenderFilterResult{
		NodeNames: &names,
		FailedNodes: extenderv1.FailedNodesMap{"gpu-b": "only 1 free nvidia.com/gpu, need 4", "Gpu-Z": "zone",
			"gpu-a-1": reasonTricky, "gpu-a.x": "x"},
		FailedAndUnresolvableNodes: extenderv1.FailedNodesMap{"cpu-1": "node(s) had no nvidia.com/gpu"},
		Error:                      "",
	})
	empty := []string{}
	write("filter_result_empty.golden.json", extenderv1.ExtenderFilterResult{
		NodeNames: &empty, FailedNodes: extenderv1.FailedNodesMap{}, FailedAndUnresolvableNodes: extenderv1.FailedNodesMap{}})
	write("filter_result_error.golden.json", extenderv1.ExtenderFilterResult{Error: "decode: Pod: missing"})
	ns := nodes()
	write("filter_result_nodes.golden.json", extenderv1.ExtenderFilterResult{
		Nodes:                      &v1.NodeList{Items: []v1.Node{ns[0], ns[2]}},
		FailedNodes:                extenderv1.FailedNodesMap{"gpu-b": "spot not tolerated"},
		FailedAndUnresolvableNodes: extenderv1.FailedNodesMap{},
	})
	write("filter_result_nodes_empty.golden.json", extenderv1.ExtenderFilterResult{
		Nodes: &v1.NodeList{Items: []v1.Node{}}, FailedNodes: extenderv1.FailedNodesMap{},
		FailedAndUnresolvableNodes: extenderv1.FailedNodesMap{"gpu-a": "a", "gpu-b": "b", "cpu-1": "c"}})
	write("host_priority_list.golden.json", extenderv1.HostPriorityList{{Host: "gpu-b", Score: 10}, {Host: "gpu-a", Score: 3}, {Host: "cpu-1", Score: 0}})
	write("host_priority_list_empty.golden.json", extenderv1.HostPriorityList{})
	write("binding_result_ok.golden.json", extenderv1.ExtenderBindingResult{})
	write("binding_result_error.golden.json", extenderv1.ExtenderBindingResult{Error: "pod ml/train-llama-0 is already assigned to node \"gpu-a\""})
	write("preemption_result.golden.json", extenderv1.ExtenderPreemptionResult{NodeNameToMetaVictims: map[string]*extenderv1.MetaVictims{
		"gpu-b": {Pods: []*extenderv1.MetaPod{{UID: "dddddddd-0000-4000-8000-000000000003"}}, NumPDBViolations: 0},
		"gpu-a": {Pods: []*extenderv1.MetaPod{{UID: "b0b0b0b0-0000-4000-8000-000000000002"}, {UID: "c1d2e3f4-0000-4000-8000-000000000001"}}, NumPDBViolations: 1},
	}})
	write("preemption_result_empty.golden.json", extenderv1.ExtenderPreemptionResult{NodeNameToMetaVictims: map[string]*extenderv1.MetaVictims{}})
}

func requestFixtures() {
	nodeNames := []string{"gpu-a", "gpu-b", "cpu-1", "node-\u00e9", "n<1>"}
	write("extender_args_names.json", extenderv1.ExtenderArgs{Pod: trainPod(), NodeNames: &nodeNames})
	write("extender_args_nodes.json", extenderv1.ExtenderArgs{Pod: trainPod(), Nodes: &v1.NodeList{Items: nodes()}})
	cpuNames := []string{"cpu-1"}
	write("extender_args_cpu_pod.json", extenderv1.ExtenderArgs{Pod: cpuPod(), NodeNames: &cpuNames})
	write("binding_args.json", extenderv1.ExtenderBindingArgs{PodName: "train-llama-0", PodNamespace: "ml",
		PodUID: "6f1c2a9e-4b7d-4e11-9a3c-0d2b8e5f7a10", Node: "gpu-a"})
	write("preemption_args_meta.json", extenderv1.ExtenderPreemptionArgs{Pod: trainPod(), NodeNameToMetaVictims: map[string]*extenderv1.MetaVictims{
		"gpu-a": {Pods: []*extenderv1.MetaPod{{UID: string(boundPod().UID)}}, NumPDBViolations: 0},
		"gpu-b": {Pods: []*extenderv1.MetaPod{{UID: string(terminatingPod().UID)}, {UID: string(cpuPod().UID)}}, NumPDBViolations: 2},
	}})
	write("preemption_args_full.json", extenderv1.ExtenderPreemptionArgs{Pod: trainPod(), NodeNameToVictims: map[string]*extenderv1.Victims{
		"gpu-a": {Pods: []*v1.Pod{boundPod()}, NumPDBViolations: 1},
		"gpu-b": {Pods: []*v1.Pod{terminatingPod(), cpuPod()}, NumPDBViolations: 0},
	}})
}

// Files in the shape `kubectl get ... -o json` writes them, and a watch stream.
func listFixtures() {
	typed := func(o runtime.Object, kind string) {
		o.GetObjectKind().SetGroupVersionKind(v1.SchemeGroupVersion.WithKind(kind))
	}
	pods := []v1.Pod{*trainPod(), *cpuPod(), *boundPod(), *terminatingPod(), *podLevelPod(), *fractionPod()}
	for i := range pods {
		typed(&pods[i], "Pod")
	}
	podList := v1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "50000"}, Items: pods}
	typed(&podList, "PodList")
	b, err := json.MarshalIndent(podList, "", "    ") // kubectl indents with four spaces
	must(err)
	writeRaw("pods.json", append(b, '\n'))

	ns := nodes()
	for i := range ns {
		typed(&ns[i], "Node")
	}
	nodeList := v1.NodeList{ListMeta: metav1.ListMeta{ResourceVersion: "50001", Continue: "eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ"}, Items: ns}
	typed(&nodeList, "NodeList")
	b, err = json.MarshalIndent(nodeList, "", "    ")
	must(err)
	writeRaw("nodes.json", append(b, '\n'))

	// Expected effective requests: apiserver container defaulting (limits copied into missing
	// requests, as SetDefaults_Pod does), then kube-scheduler's PodRequests.
	type expect struct {
		Name     string           `json:"name"`
		Requests map[string]int64 `json:"requests"`
	}
	var out []expect
	for _, p := range pods {
		p := p.DeepCopy()
		defaultLimits := func(cs []v1.Container) {
			for i := range cs {
				if cs[i].Resources.Limits == nil {
					continue
				}
				if cs[i].Resources.Requests == nil {
					cs[i].Resources.Requests = v1.ResourceList{}
				}
				for k, v := range cs[i].Resources.Limits {
					if _, ok := cs[i].Resources.Requests[k]; !ok {
						cs[i].Resources.Requests[k] = v.DeepCopy()
					}
				}
			}
		}
		defaultLimits(p.Spec.Containers)
		defaultLimits(p.Spec.InitContainers)
		reqs := resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{})
		e := expect{Name: p.Name, Requests: map[string]int64{}}
		for k, v := range reqs {
			if k == v1.ResourceCPU {
				e.Requests[string(k)] = v.MilliValue()
			} else {
				e.Requests[string(k)] = v.Value()
			}
		}
		out = append(out, e)
	}
	b, err = json.MarshalIndent(out, "", "  ")
	must(err)
	writeRaw("pods_requests.expected.json", append(b, '\n'))

	// Watch stream: one JSON document per line, as the apiserver writes it.
	var w bytes.Buffer
	event := func(typ string, obj any) {
		raw, err := json.Marshal(obj)
		must(err)
		line, err := json.Marshal(metav1.WatchEvent{Type: typ, Object: runtime.RawExtension{Raw: raw}})
		must(err)
		w.Write(line)
		w.WriteByte('\n')
	}
	p0 := pods[0]
	event("ADDED", &p0)
	p1 := pods[2]
	event("MODIFIED", &p1)
	p3 := pods[3]
	event("DELETED", &p3)
	event("BOOKMARK", &v1.Pod{TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"}, ObjectMeta: metav1.ObjectMeta{ResourceVersion: "12746"}})
	event("BOOKMARK", &v1.Pod{TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"}, ObjectMeta: metav1.ObjectMeta{ResourceVersion: "12800",
		Annotations: map[string]string{"k8s.io/initial-events-end": "true"}}})
	event("ERROR", &metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure,
		Message: "too old resource version: 1000 (2000)", Reason: metav1.StatusReasonExpired, Code: 410})
	writeRaw("watch_pods.jsonl", w.Bytes())

	w.Reset()
	n0 := ns[1]
	event("ADDED", &n0)
	n2 := ns[2]
	event("DELETED", &n2)
	writeRaw("watch_nodes.jsonl", w.Bytes())
}

// quantities records what apimachinery's ParseQuantity, Value and MilliValue make of each
// string, plus the exact rounded-up results computed with big arithmetic (Go's own Value and
// MilliValue wrap silently when the result does not fit an int64).
func quantities() {
	inputs := []string{
		"0", "1", "8", "0.5", ".5", "5.", "1500m", "100m", "1e3", "1E3", "1e-3", "1E+3", "1e+2", "100e-2", "1.5e1",
		"100Mi", "1.5Gi", "1Ki", "3Ki", "1.2345Mi", "2.5Ti", "1Ei", "7Ei", "8Ei", "16Ei", "0.001Ki",
		"1k", "1M", "1G", "1T", "1P", "1E", "2.5k", "1n", "500u", "1u", "0.1m", "0.0001", "0.0000000001", "1e-9", "1e-10",
		"-1", "+2", "-0.5", "-1.5m", "-0", "+", "-", ".", "007", "00.50",
		"9223372036854775807", "9223372036854775808", "9223372036854775807m", "9223372036854775808m",
		"9223372036854775.807", "9223372036854775.808", "9223372036854776", "1e18", "1e19", "9e18", "10e18",
		"123456789012345678901234567890", "0.00000000000000000000000000001", "1e100", "1e-100",
		"1e400", "1e-400", "1e99999999999999999999",
		"", " 1", "1 ", "abc", "1.5.5", "1E", "1e", "1e+", "1Ki2", "1KI", "1ki", "1K", "1e2.5", "12E", "0x10",
		"1_000", "1ee2", "1Gi ", "1mm", "m", "Ki", "1.G", "--1", "+-1", "1e-", "1e--2", "\u221e",
		"3000m", "1.5", "3", "1000000000000000000000m",
	}
	type row struct {
		In    string `json:"in"`
		Ok    bool   `json:"ok"`
		Value string `json:"value,omitempty"` // exact ceil (away from zero), or "overflow"
		Milli string `json:"milli,omitempty"`
		GoVal int64  `json:"goValue"`
		GoMil int64  `json:"goMilli"`
	}
	exact := func(d *inf.Dec, scale int) string {
		// d * 10^scale rounded up away from zero; value = u * 10^-sc.
		u := d.UnscaledBig()
		sc := int64(d.Scale()) - int64(scale)
		if u.Sign() == 0 {
			return "0"
		}
		if sc <= 0 {
			if -sc > 40 {
				return "overflow"
			}
			r := new(big.Int).Mul(u, new(big.Int).Exp(big.NewInt(10), big.NewInt(-sc), nil))
			if !r.IsInt64() {
				return "overflow"
			}
			return r.String()
		}
		abs := new(big.Int).Abs(u)
		if sc > int64(len(abs.String()))+1 {
			return fmt.Sprint(u.Sign()) // 0 < |value| < 1
		}
		div := new(big.Int).Exp(big.NewInt(10), big.NewInt(sc), nil)
		qu, rem := new(big.Int).QuoRem(abs, div, new(big.Int))
		if rem.Sign() != 0 {
			qu.Add(qu, big.NewInt(1))
		}
		if u.Sign() < 0 {
			qu.Neg(qu)
		}
		if !qu.IsInt64() {
			return "overflow"
		}
		return qu.String()
	}
	var rows []row
	for _, s := range inputs {
		qq, err := resource.ParseQuantity(s)
		r := row{In: s, Ok: err == nil}
		if err == nil {
			d := qq.AsDec()
			r.Value = exact(d, 0)
			r.Milli = exact(d, 3)
			if sc := d.Scale(); sc > -100 && sc < 100 { // Go's own readers are slow on huge scales
				r.GoVal = qq.Value()
				r.GoMil = qq.MilliValue()
			}
		}
		rows = append(rows, r)
	}
	// One row per line keeps the table readable in review.
	var b bytes.Buffer
	b.WriteString("[\n")
	for i, r := range rows {
		line, err := json.Marshal(r)
		must(err)
		b.Write(line)
		if i+1 < len(rows) {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("]\n")
	writeRaw("quantities.json", b.Bytes())
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: goldens OUTPUT_DIR")
		os.Exit(2)
	}
	outDir = os.Args[1]
	must(os.MkdirAll(outDir, 0o755))
	requestFixtures()
	filterResults()
	listFixtures()
	quantities()
	var names []string
	entries, _ := os.ReadDir(outDir)
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	fmt.Println("wrote", len(names), "files to", outDir)
}
