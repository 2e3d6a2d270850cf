package plugin

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

func gpuNode(name string, gpus int, labels map[string]string) *v1.Node {
	l := map[string]string{"topology.kubernetes.io/zone": "zone-a"}
	for k, v := range labels {
		l[k] = v
	}
	alloc := v1.ResourceList{
		v1.ResourceCPU: resource.MustParse("32"), v1.ResourceMemory: resource.MustParse("128Gi"),
		v1.ResourcePods: resource.MustParse("110"),
	}
	if gpus > 0 {
		alloc["nvidia.com/gpu"] = *resource.NewQuantity(int64(gpus), resource.DecimalSI)
		l["nvidia.com/gpu.product"] = "NVIDIA-A100-SXM4-80GB"
	}
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l}, Status: v1.NodeStatus{Allocatable: alloc}}
}

func gpuPod(name string, gpus int, node string, annotations map[string]string) *v1.Pod {
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ml", UID: types.UID("uid-" + name), Annotations: annotations},
		Spec: v1.PodSpec{NodeName: node, Containers: []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{
			Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("1")},
		}}}},
	}
	if gpus > 0 {
		p.Spec.Containers[0].Resources.Limits = v1.ResourceList{"nvidia.com/gpu": *resource.NewQuantity(int64(gpus), resource.DecimalSI)}
	}
	if node != "" {
		p.Status.Phase = v1.PodRunning
	}
	return p
}

// workloadPod is gpuPod as a Job or Deployment makes it: three containers with commands,
// environment, mounts and probes, and volumes; once bound (node != ""), with the conditions and
// container statuses kubelet reports: 6.5 KB of JSON bound, 5.3 KB pending.
func workloadPod(name string, gpus int, node string) *v1.Pod {
	p := gpuPod(name, gpus, node, map[string]string{"team": "ml"})
	p.Labels = map[string]string{"app": "trainer", "job-name": "llm", "batch.kubernetes.io/controller-uid": "c0ffee"}
	c := p.Spec.Containers[0]
	p.Spec.Containers = nil
	for i := 0; i < 3; i++ {
		c := *c.DeepCopy()
		c.Name, c.Image = fmt.Sprintf("c%d", i), "example/trainer:1.2.3"
		if i > 0 {
			c.Resources.Limits = nil // the GPUs are the first container's
		}
		c.Command, c.Args = []string{"python", "-m", "train"}, []string{"--epochs", "10", "--lr", "0.001"}
		for e := 0; e < 20; e++ {
			c.Env = append(c.Env, v1.EnvVar{Name: fmt.Sprintf("TRAINER_SETTING_%02d", e), Value: fmt.Sprintf("value-%02d", e)})
		}
		for m := 0; m < 6; m++ {
			c.VolumeMounts = append(c.VolumeMounts, v1.VolumeMount{Name: fmt.Sprintf("data-%d", m), MountPath: fmt.Sprintf("/mnt/data/%d", m)})
		}
		c.ReadinessProbe = &v1.Probe{ProbeHandler: v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Path: "/healthz"}}, PeriodSeconds: 10}
		c.LivenessProbe = c.ReadinessProbe.DeepCopy()
		p.Spec.Containers = append(p.Spec.Containers, c)
		if node != "" {
			p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, v1.ContainerStatus{Name: c.Name, Image: c.Image,
				ImageID: "example/trainer@sha256:" + strings.Repeat("0123456789abcdef", 4), Ready: true,
				State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: metav1.Unix(1, 0)}}})
		}
	}
	for m := 0; m < 6; m++ {
		p.Spec.Volumes = append(p.Spec.Volumes, v1.Volume{Name: fmt.Sprintf("data-%d", m),
			VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: "settings"}}}})
	}
	if node != "" {
		for _, t := range []v1.PodConditionType{v1.PodScheduled, v1.PodInitialized, v1.ContainersReady, v1.PodReady} {
			p.Status.Conditions = append(p.Status.Conditions, v1.PodCondition{Type: t, Status: v1.ConditionTrue, LastTransitionTime: metav1.Unix(1, 0)})
		}
	}
	return p
}

type fixture struct {
	t     testing.TB
	p     *Plugin
	nodes map[string]*framework.NodeInfo
}

func newFixture(t testing.TB, config string, nodes ...*v1.Node) *fixture {
	t.Helper()
	var obj runtime.Object
	if config != "" {
		obj = &runtime.Unknown{Raw: []byte(config)}
	}
	pl, err := New(context.Background(), obj, nil)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, p: pl.(*Plugin), nodes: map[string]*framework.NodeInfo{}}
	t.Cleanup(f.p.engine.Close)
	for _, n := range nodes {
		f.p.upsertNode(klogDiscard(), n)
		ni := framework.NewNodeInfo()
		ni.SetNode(n)
		f.nodes[n.Name] = ni
	}
	return f
}

// infos is the fixture's nodes as kube-scheduler hands them to PreFilter: its snapshot's list.
func (f *fixture) infos() []fwk.NodeInfo {
	out := make([]fwk.NodeInfo, 0, len(f.nodes))
	for _, ni := range f.nodes {
		out = append(out, ni)
	}
	return out
}

func (f *fixture) bind(p *v1.Pod) {
	f.p.upsertPod(klogDiscard(), p)
	f.nodes[p.Spec.NodeName].AddPod(p)
}

func mustPodInfo(t *testing.T, p *v1.Pod) *framework.PodInfo {
	pi, err := framework.NewPodInfo(p)
	if err != nil {
		t.Fatal(err)
	}
	return pi
}

// cycle runs PreFilter and Filter over every node: the nodes that passed, and the reasons.
func (f *fixture) cycle(pod *v1.Pod) (fwk.CycleState, *fwk.PreFilterResult, map[string]*fwk.Status) {
	f.t.Helper()
	state := framework.NewCycleState()
	res, st := f.p.PreFilter(context.Background(), state, pod, f.infos())
	if !st.IsSuccess() {
		return state, res, map[string]*fwk.Status{"*": st}
	}
	out := map[string]*fwk.Status{}
	for name, ni := range f.nodes {
		out[name] = f.p.Filter(context.Background(), state, pod, ni)
	}
	return state, res, out
}

func TestFilterAndScoreComeFromTheEngine(t *testing.T) {
	f := newFixture(t, "", gpuNode("a100-half", 8, nil), gpuNode("a100-empty", 8, nil), gpuNode("cpu", 0, nil))
	f.bind(gpuPod("old", 4, "a100-half", map[string]string{"fleetsched.io/gpu-index": "0-1-2-3"}))
	pod := gpuPod("new", 4, "", nil)
	state, res, verdicts := f.cycle(pod)
	if !verdicts["a100-half"].IsSuccess() || !verdicts["a100-empty"].IsSuccess() {
		t.Fatalf("GPU nodes rejected: %v", verdicts)
	}
	if st := verdicts["cpu"]; st.IsSuccess() || !strings.Contains(st.Message(), "nvidia.com/gpu") {
		t.Fatalf("cpu node: %v", st)
	}
	if res == nil || res.NodeNames.Len() != 2 || !res.NodeNames.Has("a100-half") {
		t.Fatalf("PreFilterResult %v: want the two GPU nodes", res)
	}
	feasible := []fwk.NodeInfo{f.nodes["a100-half"], f.nodes["a100-empty"]}
	if st := f.p.PreScore(context.Background(), state, pod, feasible); !st.IsSuccess() {
		t.Fatal(st)
	}
	half, _ := f.p.Score(context.Background(), state, pod, f.nodes["a100-half"])
	empty, _ := f.p.Score(context.Background(), state, pod, f.nodes["a100-empty"])
	if half != 100 || empty >= half {
		t.Fatalf("scores half %d empty %d: binpacking should prefer the half-used node", half, empty)
	}
}

// The PreFilterResult leaves out only the nodes the pod can never fit: kube-scheduler marks those
// unresolvable and DefaultPreemption looks for no victims there, so a node that is full for now
// stays in.
func TestPreFilterResultKeepsNodesPreemptionCanFree(t *testing.T) {
	f := newFixture(t, "", gpuNode("a100-free", 8, nil), gpuNode("a100-full", 2, nil), gpuNode("cpu", 0, nil))
	f.bind(gpuPod("low", 2, "a100-full", map[string]string{"fleetsched.io/gpu-index": "0-1"}))
	_, res, verdicts := f.cycle(gpuPod("urgent", 2, "", nil))
	if verdicts["a100-full"].Code() != fwk.Unschedulable || verdicts["cpu"].Code() != fwk.UnschedulableAndUnresolvable {
		t.Fatalf("verdicts %v: want a100-full Unschedulable, cpu UnschedulableAndUnresolvable", verdicts)
	}
	if res == nil || !res.NodeNames.Equal(sets.New("a100-free", "a100-full")) {
		t.Fatalf("PreFilterResult %v: want a100-free and a100-full (preemption may free it), not cpu", res)
	}
}

// Filter and Score find a node's verdict by kube-scheduler's NodeInfo, learned once per name set
// from PreFilter's node list; a NodeInfo it was not given (preemption's copies, a node the
// engine has not heard of) is looked up by name.
func TestNodeInfosAreIndexedOncePerNameSet(t *testing.T) {
	f := newFixture(t, "", gpuNode("a100", 8, nil), gpuNode("cpu", 0, nil))
	pod := gpuPod("new", 1, "", nil)
	state, _, v := f.cycle(pod)
	if !v["a100"].IsSuccess() || v["cpu"].IsSuccess() {
		t.Fatalf("verdicts %v", v)
	}
	ix := f.p.names
	m := ix.byInfo.Load()
	if m == nil || len(*m) != 2 {
		t.Fatalf("learned %v, want both nodes", m)
	}
	for name, ni := range f.nodes {
		if id, ok := (*m)[ni]; !ok || id != ix.ids[name] {
			t.Fatalf("%s: id %d by NodeInfo, %d by name", name, id, ix.ids[name])
		}
	}
	// A copy of a node (what preemption filters) is found by its name.
	if st := f.p.Filter(context.Background(), state, pod, f.nodes["cpu"].Snapshot()); st.IsSuccess() || !strings.Contains(st.Message(), "nvidia.com/gpu") {
		t.Fatalf("copy of the cpu node: %v", st)
	}
	if st := f.p.Filter(context.Background(), state, pod, f.nodes["a100"].Snapshot()); !st.IsSuccess() {
		t.Fatalf("copy of the a100 node: %v", st)
	}
	// A node kube-scheduler has and the engine has not heard of yet.
	unknown := framework.NewNodeInfo()
	unknown.SetNode(gpuNode("new-node", 8, nil))
	if st := f.p.Filter(context.Background(), state, pod, unknown); st.IsSuccess() || !strings.Contains(st.Message(), "not in fleetsched's cache") {
		t.Fatalf("unknown node: %v", st)
	}
	// A node added: a new name set, learned again from the next PreFilter.
	h100 := gpuNode("h100", 8, nil)
	f.p.upsertNode(klogDiscard(), h100)
	f.nodes["h100"] = framework.NewNodeInfo()
	f.nodes["h100"].SetNode(h100)
	if _, _, v := f.cycle(pod); !v["h100"].IsSuccess() || !v["a100"].IsSuccess() || v["cpu"].IsSuccess() {
		t.Fatalf("after adding h100: %v", v)
	}
	if f.p.names == ix {
		t.Fatal("the name set did not change when a node was added")
	}
	if m := f.p.names.byInfo.Load(); m == nil || len(*m) != 3 {
		t.Fatalf("learned %v after the add, want three nodes", m)
	}
}

// Scores are ranked over the nodes kube-scheduler found feasible, as an extender's prioritize
// ranks them: when another plugin rejected a node this plugin passed, that node must not set
// the scale (PreScore reads the nodes off its verdicts only when they are all of them).
func TestScoresRankTheFeasibleNodesOnly(t *testing.T) {
	f := newFixture(t, "", gpuNode("a100-half", 8, nil), gpuNode("a100-two", 8, nil), gpuNode("a100-empty", 8, nil))
	f.bind(gpuPod("four", 4, "a100-half", map[string]string{"fleetsched.io/gpu-index": "0-1-2-3"}))
	f.bind(gpuPod("two", 2, "a100-two", map[string]string{"fleetsched.io/gpu-index": "0-1"}))
	pod := gpuPod("new", 1, "", nil)
	score := func(feasible ...string) map[string]int64 {
		state, _, _ := f.cycle(pod)
		infos := []fwk.NodeInfo{}
		for _, n := range feasible {
			infos = append(infos, f.nodes[n])
		}
		if st := f.p.PreScore(context.Background(), state, pod, infos); !st.IsSuccess() {
			t.Fatal(st)
		}
		out := map[string]int64{}
		for _, n := range feasible {
			out[n], _ = f.p.Score(context.Background(), state, pod, f.nodes[n])
		}
		return out
	}
	if all := score("a100-half", "a100-two", "a100-empty"); all["a100-half"] != 100 || all["a100-two"] >= 100 {
		t.Fatalf("every node feasible: %v; want a100-half first", all)
	}
	if some := score("a100-two", "a100-empty"); some["a100-two"] != 100 || some["a100-empty"] >= 100 {
		t.Fatalf("a100-half rejected by another plugin: %v; want a100-two first, at 100", some)
	}
}

func TestReserveHoldsGpusAndUnreserveForgets(t *testing.T) {
	f := newFixture(t, "", gpuNode("a100", 4, nil))
	p1, p2 := gpuPod("p1", 4, "", nil), gpuPod("p2", 1, "", nil)
	state, _, _ := f.cycle(p1)
	if st := f.p.Reserve(context.Background(), state, p1, "a100"); !st.IsSuccess() {
		t.Fatal(st)
	}
	s, _ := read(state)
	if s.binding["fleetsched.io/gpu-index"] != "0-1-2-3" {
		t.Fatalf("binding annotations %q", s.binding)
	}
	// kube-scheduler assumed p1 on the node before Reserve: its NodeInfo holds it.
	assumed := p1.DeepCopy()
	assumed.Spec.NodeName = "a100"
	f.nodes["a100"].AddPod(assumed)
	// The next pod sees the reservation before any informer event.
	if _, _, v := f.cycle(p2); v["a100"].IsSuccess() {
		t.Fatal("a reserved node still fits another GPU pod")
	}
	f.p.Unreserve(context.Background(), state, p1, "a100")
	if err := f.nodes["a100"].RemovePod(klogDiscard(), assumed); err != nil { // kube-scheduler's forget
		t.Fatal(err)
	}
	if _, _, v := f.cycle(p2); !v["a100"].IsSuccess() {
		t.Fatalf("after Unreserve: %v", v["a100"])
	}
	if got := f.p.engine.Stats().ReservationsLive; got != 0 {
		t.Fatalf("%d reservations left", got)
	}
}

// kube-scheduler's NodeInfo may lose a pod before the engine does (its own informer handler ran
// first, or an asynchronous preemption is deleting victims): the verdict must follow the NodeInfo,
// or kube-scheduler preempts again for GPUs that are already free.
func TestFilterFollowsPodsTheNodeInfoNoLongerHolds(t *testing.T) {
	f := newFixture(t, "", gpuNode("a100", 2, nil))
	gone := gpuPod("gone", 2, "a100", map[string]string{"fleetsched.io/gpu-index": "0-1"})
	f.bind(gone)
	pod := gpuPod("next", 2, "", nil)
	if _, _, v := f.cycle(pod); v["a100"].IsSuccess() {
		t.Fatal("a full node fits")
	}
	if err := f.nodes["a100"].RemovePod(klogDiscard(), gone); err != nil {
		t.Fatal(err)
	}
	_, _, v := f.cycle(pod)
	if !v["a100"].IsSuccess() {
		t.Fatalf("the NodeInfo no longer holds the pod, the engine still charges it: %v", v["a100"])
	}
	// Once the engine hears of the deletion, the verdict itself passes.
	f.p.deletePod(gone)
	if _, _, v := f.cycle(pod); !v["a100"].IsSuccess() {
		t.Fatalf("after the deletion: %v", v["a100"])
	}
}

// The engine may hear of a deletion between PreFilter's snapshot and Filter, with the NodeInfo and
// the engine agreeing again by then: the snapshot's failing verdict is stale.
func TestFilterFollowsADeletionAfterTheSnapshot(t *testing.T) {
	f := newFixture(t, "", gpuNode("a100", 2, nil))
	gone := gpuPod("gone", 2, "a100", map[string]string{"fleetsched.io/gpu-index": "0-1"})
	f.bind(gone)
	pod := gpuPod("next", 2, "", nil)
	state := framework.NewCycleState()
	if _, st := f.p.PreFilter(context.Background(), state, pod, nil); !st.IsSuccess() {
		t.Fatal(st)
	}
	f.p.deletePod(gone)
	if err := f.nodes["a100"].RemovePod(klogDiscard(), gone); err != nil {
		t.Fatal(err)
	}
	if st := f.p.Filter(context.Background(), state, pod, f.nodes["a100"]); !st.IsSuccess() {
		t.Fatalf("the snapshot's verdict, stale: %v", st)
	}
	// PreScore may not read the feasible nodes off the verdicts now.
	if st := f.p.PreScore(context.Background(), state, pod, []fwk.NodeInfo{f.nodes["a100"]}); !st.IsSuccess() {
		t.Fatal(st)
	}
	if sc, st := f.p.Score(context.Background(), state, pod, f.nodes["a100"]); !st.IsSuccess() {
		t.Fatal(sc, st)
	}
}

// A pod reserved and deleted before it was bound leaves no charge in the ledger (its DeleteFunc
// carries no node name).
func TestLedgerForgetsAReservedPodDeletedUnbound(t *testing.T) {
	f := newFixture(t, "", gpuNode("a100", 2, nil))
	pod := gpuPod("p", 1, "", nil)
	state, _, _ := f.cycle(pod)
	if st := f.p.Reserve(context.Background(), state, pod, "a100"); !st.IsSuccess() {
		t.Fatal(st)
	}
	f.p.deletePod(pod) // never bound: Spec.NodeName is empty
	if _, ok := f.p.ledger.pods[string(pod.UID)]; ok || len(f.p.ledger.nodes["a100"]) != 0 {
		t.Fatalf("ledger still charges the pod: %v", f.p.ledger.nodes["a100"])
	}
}

func TestPreemptionWhatIfFollowsRemovedPods(t *testing.T) {
	f := newFixture(t, "", gpuNode("a100", 2, nil))
	victim := gpuPod("victim", 2, "a100", map[string]string{"fleetsched.io/gpu-index": "0-1"})
	f.bind(victim)
	pod := gpuPod("urgent", 2, "", nil)
	state, _, v := f.cycle(pod)
	if v["a100"].IsSuccess() {
		t.Fatal("a full node fits")
	}
	// DefaultPreemption: clone the state, remove the victim from a copy of the node, Filter.
	sim := state.Clone()
	ni := f.nodes["a100"].SnapshotConcrete()
	pi := mustPodInfo(t, victim)
	if err := ni.RemovePod(klogDiscard(), victim); err != nil {
		t.Fatal(err)
	}
	if st := f.p.RemovePod(context.Background(), sim, pod, pi, ni); !st.IsSuccess() {
		t.Fatal(st)
	}
	if st := f.p.Filter(context.Background(), sim, pod, ni); !st.IsSuccess() {
		t.Fatalf("with the victim removed: %v", st)
	}
	// The original state is untouched; reprieving the victim makes it full again.
	if st := f.p.Filter(context.Background(), state, pod, f.nodes["a100"]); st.IsSuccess() {
		t.Fatal("the clone's removal leaked into the original state")
	}
	ni.AddPod(victim) // DefaultPreemption's reprieve: back on the node, then AddPod
	if st := f.p.AddPod(context.Background(), sim, pod, pi, ni); !st.IsSuccess() {
		t.Fatal(st)
	}
	if st := f.p.Filter(context.Background(), sim, pod, ni); st.IsSuccess() {
		t.Fatal("the reprieved victim's GPUs count as free")
	}
}

func TestArgsAreValidatedWithServesMessages(t *testing.T) {
	_, err := New(context.Background(), &runtime.Unknown{Raw: []byte(`{"apiVersion":"fleetsched.io/v1alpha1","kind":"FleetschedConfiguration","profiles":[{"name":"default","plugins":[{"name":"Nope"}]}]}`)}, nil)
	if err == nil || !strings.Contains(err.Error(), "Nope") {
		t.Fatalf("err = %v", err)
	}
	f := newFixture(t, `{"apiVersion":"fleetsched.io/v1alpha1","kind":"FleetschedConfiguration","profiles":[{"name":"default","plugins":[{"name":"GPU","weight":1}],"pluginConfig":[{"name":"GPU","args":{"resourceNames":["amd.com/gpu"]}}]}]}`)
	amd := gpuNode("mi300", 0, nil)
	amd.Status.Allocatable["amd.com/gpu"] = resource.MustParse("8")
	f.p.upsertNode(klogDiscard(), amd)
	ni := framework.NewNodeInfo()
	ni.SetNode(amd)
	f.nodes["mi300"] = ni
	p := gpuPod("p", 0, "", nil)
	p.Spec.Containers[0].Resources.Limits = v1.ResourceList{"amd.com/gpu": resource.MustParse("2")}
	if _, _, v := f.cycle(p); !v["mi300"].IsSuccess() {
		t.Fatalf("amd.com/gpu from the args did not reach the engine: %v", v["mi300"])
	}
}

// Malformed objects are refused one by one; the scheduler goes on with every other pod.
func TestMalformedObjectsNeverStopScheduling(t *testing.T) {
	f := newFixture(t, "", gpuNode("a100", 4, nil))
	for _, bad := range []string{`{"metadata":{"name":5}}`, `{`, `{"metadata":{"name":"x"},"status":{"allocatable":{"cpu":"lots"}}}`} {
		if err := f.p.engine.UpsertNode([]byte(bad)); err == nil {
			t.Errorf("node %s accepted", bad)
		}
		if err := f.p.engine.UpsertPod([]byte(bad)); err == nil {
			t.Errorf("pod %s accepted", bad)
		}
	}
	// A pod with an invalid fleetsched annotation is rejected everywhere, with the reason.
	bad := gpuPod("bad", 1, "", map[string]string{"fleetsched.io/gpu-milli": "lots"})
	if _, _, v := f.cycle(bad); v["*"].IsSuccess() || v["*"].Code() != fwk.UnschedulableAndUnresolvable {
		t.Fatalf("invalid annotation: %v", v)
	}
	// Huge and odd quantities decode or are refused, never crash.
	odd := gpuNode("odd", 0, nil)
	odd.Status.Allocatable["nvidia.com/gpu"] = resource.MustParse("9e18")
	f.p.upsertNode(klogDiscard(), odd)
	for i := 0; i < 3; i++ {
		if _, _, v := f.cycle(gpuPod(fmt.Sprint("ok-", i), 1, "", nil)); !v["a100"].IsSuccess() {
			t.Fatalf("pod %d after malformed input: %v", i, v["a100"])
		}
	}
	if _, err := json.Marshal(odd); err != nil {
		t.Fatal(err)
	}
}

func TestZoneSpreadPodsAreNotSigned(t *testing.T) {
	f := newFixture(t, "", gpuNode("a100", 4, nil))
	plain := gpuPod("plain", 1, "", nil)
	if _, st := f.p.SignPod(context.Background(), plain); !st.IsSuccess() {
		t.Fatalf("plain pod: %v", st)
	}
	spread := gpuPod("spread", 1, "", nil)
	spread.Labels = map[string]string{"fleetsched.io/workload": "w1"}
	if _, st := f.p.SignPod(context.Background(), spread); st.IsSuccess() {
		t.Fatal("a zone-spread pod was signed: kube-scheduler would reuse a stale ranking")
	}
}

// BenchmarkCycle is one pod's scheduling cycle as kube-scheduler runs this plugin: PreFilter,
// Filter on every node, PreScore and Score on the feasible ones (no Reserve, so the fleet stays
// as it is), on the scale run's fleets (8-GPU nodes, every tenth CPU-only, three zones), for a
// CPU pod (the extender never sees those: managedResources) and a 2-GPU pod. serial-ns/op is
// the part kube-scheduler runs on one goroutine (PreFilter, PreScore); it runs Filter and Score
// on 16 at a time.
//
//	cd scheduler && go test ./plugin -run '^$' -bench Cycle -benchmem
func BenchmarkCycle(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{1000, 5000} {
		nodes := make([]*v1.Node, n)
		for i := range nodes {
			gpus := 8
			if i%10 == 9 {
				gpus = 0
			}
			zone := map[string]string{"topology.kubernetes.io/zone": fmt.Sprintf("zone-%c", 'a'+i%3)}
			nodes[i] = gpuNode(fmt.Sprintf("node-%05d", i), gpus, zone)
		}
		f := newFixture(b, "", nodes...)
		infos := make([]fwk.NodeInfo, 0, n)
		for _, node := range nodes {
			infos = append(infos, f.nodes[node.Name])
		}
		feasible := make([]fwk.NodeInfo, 0, n)
		for _, pc := range []struct {
			name     string
			gpus     int
			workload bool
		}{{"cpu-pod", 0, false}, {"gpu-pod", 2, false}, {"gpu-workload-pod", 2, true}} {
			pod := gpuPod(pc.name, pc.gpus, "", nil)
			if pc.workload {
				pod = workloadPod(pc.name, pc.gpus, "")
			}
			b.Run(fmt.Sprintf("%s/nodes=%d", pc.name, n), func(b *testing.B) {
				b.ReportAllocs()
				var serial time.Duration
				for i := 0; i < b.N; i++ {
					state := framework.NewCycleState()
					t := time.Now()
					if _, st := f.p.PreFilter(ctx, state, pod, infos); !st.IsSuccess() {
						b.Fatal(st)
					}
					serial += time.Since(t)
					feasible = feasible[:0]
					for _, ni := range infos {
						if f.p.Filter(ctx, state, pod, ni) == nil {
							feasible = append(feasible, ni)
						}
					}
					t = time.Now()
					if st := f.p.PreScore(ctx, state, pod, feasible); !st.IsSuccess() {
						b.Fatal(st)
					}
					serial += time.Since(t)
					for _, ni := range feasible {
						if _, st := f.p.Score(ctx, state, pod, ni); !st.IsSuccess() {
							b.Fatal(st)
						}
					}
				}
				b.ReportMetric(float64(serial.Nanoseconds())/float64(b.N), "serial-ns/op")
			})
		}
	}
}

// BenchmarkFeed is what feeding the engine from kube-scheduler's informers costs per event: a
// bound pod (pod informer: add or update) and a node as the scale run makes them (8 GPUs, EKS
// and GPU feature-discovery labels; the status images and conditions are not sent).
//
//	cd scheduler && go test ./plugin -run '^$' -bench Feed -benchmem
func BenchmarkFeed(b *testing.B) {
	{
		bound, _ := json.Marshal(workloadPod("w", 2, "n"))
		pending, _ := json.Marshal(workloadPod("w", 2, ""))
		b.Logf("workloadPod: %d bytes bound, %d pending", len(bound), len(pending))
	}
	labels := map[string]string{"topology.kubernetes.io/region": "us-west-2", "node.kubernetes.io/instance-type": "p4d.24xlarge",
		"eks.amazonaws.com/capacityType": "ON_DEMAND", "nvidia.com/gpu.count": "8", "nvidia.com/gpu.memory": "81920",
		"kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"}
	node := gpuNode("ip-10-0-12-34.us-west-2.compute.internal", 8, labels)
	for i := 0; i < 64; i++ {
		node.Status.Images = append(node.Status.Images, v1.ContainerImage{Names: []string{fmt.Sprintf("registry.example/team/image-%02d@sha256:%064d", i, i)}, SizeBytes: 1 << 30})
	}
	f := newFixture(b, "", node)
	b.Run("node", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			f.p.upsertNode(klogDiscard(), node)
		}
	})
	b.Run("running-workload-pod", func(b *testing.B) {
		b.ReportAllocs()
		pods := make([]*v1.Pod, 1024)
		for i := range pods {
			pods[i] = workloadPod(fmt.Sprintf("w-%04d", i), 0, node.Name)
		}
		for i := 0; i < b.N; i++ {
			f.p.upsertPod(klogDiscard(), pods[i%len(pods)])
		}
	})
	b.Run("bound-pod", func(b *testing.B) {
		b.ReportAllocs()
		pods := make([]*v1.Pod, 1024)
		for i := range pods {
			pods[i] = gpuPod(fmt.Sprintf("p-%04d", i), 0, node.Name, nil)
		}
		for i := 0; i < b.N; i++ {
			f.p.upsertPod(klogDiscard(), pods[i%len(pods)])
		}
	})
}
