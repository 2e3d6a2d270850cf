// Package plugin is fleetsched as a scheduling-framework plugin: kube-scheduler calls it in
// process and every decision comes from fleetsched's C++ engine through the C ABI (package capi),
// the same code `fleetsched serve` answers the extender protocol with.
//
// Extension points:
//
//	PreFilter   the engine decides every node for the pod once, against one snapshot; when a
//	            pod fits only a few nodes the PreFilterResult names them, with the nodes
//	            preemption could make room on
//	Filter      looks the node's verdict up; preemption's what-if (below), and a failing
//	            verdict whose snapshot charged more pods than the NodeInfo holds (see
//	            ledger), ask the engine about the node as the NodeInfo holds it
//	AddPod /    record, per node, the pods preemption removes or nominated pods it adds;
//	RemovePod   Filter then asks the engine about that node with those changes applied
//	PreScore /  the engine scores the feasible nodes once; Score looks them up (0..100: the
//	Score       profile's weighted total, ranked exactly as the extender's prioritize ranks it)
//	Reserve /   the engine picks the pod's GPUs and charges them at once (the next pod sees
//	Unreserve   them); Unreserve releases the charge, so assume/forget leaves nothing behind
//	Bind        GPU pods with per-GPU assignment are bound with a Binding that carries
//	            fleetsched.io/gpu-index (one API call, as the extender's binder does); every
//	            other pod is left to DefaultBinder (Skip)
//	EventsToRegister  pods rejected here retry when nodes are added or change allocatable,
//	            labels or taints, and when an assigned pod goes away
//	SignPod     pods whose decision depends only on the node get a signature, of the parts of
//	            the pod the engine reads (podFields, which podJSON sends); pods the Zone plugin
//	            spreads by workload do not (their scores change with every placement)
//
// State: the engine's cache is fed from kube-scheduler's own shared informers (the handle's
// factory), so kube-apiserver sees one watch of pods and one of nodes per scheduler process.
package plugin

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"fleetsched/capi"
)

// Name is the plugin's name in KubeSchedulerConfiguration.
const Name = "Fleetsched"

const (
	stateKey fwk.StateKey = Name
	// A PreFilterResult names the nodes the pod may ever fit (below) when there are at most this
	// many: kube-scheduler then runs the other Filter plugins on those alone. 100 is
	// kube-scheduler's own floor on the nodes it looks for (minFeasibleNodesToFind), below which
	// it would visit every node anyway.
	fewNodes = 100
)

// Plugin is one engine behind the framework's extension points.
type Plugin struct {
	handle fwk.Handle
	engine *capi.Engine
	synced []cache.ResourceEventHandlerRegistration

	mu    sync.RWMutex
	names *nameIndex // the id -> name map of the engine's last snapshot

	ledger ledger
}

// ledger mirrors which pods the engine charges on each node (bound pods from the informer, its
// own reservations): when kube-scheduler's NodeInfo, the authority on a node's pods, holds fewer
// pods than the cycle's snapshot charged there, Filter decides again on the node as the NodeInfo
// holds it. The two views part because kube-scheduler's event handler and the plugin's hang off
// one informer, each with its own goroutine, and an asynchronous preemption retries the
// preemptor as soon as its last victim is gone from the informer's store. Seen in the e2e
// preemption scenarios (4 of 7 plugin runs) before the ledger: the preemptor's next cycle had
// the victims gone from its NodeInfo while the engine's snapshot still charged one ("1 of 4
// nvidia.com/gpu free, pod needs 2"), so kube-scheduler preempted a third pod, or, with a grace
// period, never retried the preemptor.
type ledger struct {
	mu    sync.Mutex
	nodes map[string]map[string]struct{} // node -> pod uids
	pods  map[string]string              // uid -> node
}

// charge records that the engine charges pod uid on node (after the engine took it).
func (l *ledger) charge(node, uid string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.nodes == nil {
		l.nodes, l.pods = map[string]map[string]struct{}{}, map[string]string{}
	}
	if was, ok := l.pods[uid]; ok && was != node {
		delete(l.nodes[was], uid)
	}
	if l.nodes[node] == nil {
		l.nodes[node] = map[string]struct{}{}
	}
	l.nodes[node][uid] = struct{}{}
	l.pods[uid] = node
}

// uncharge records that the engine no longer charges pod uid.
func (l *ledger) uncharge(uid string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if node, ok := l.pods[uid]; ok {
		delete(l.nodes[node], uid)
		delete(l.pods, uid)
	}
}

// forget drops a deleted node (the engine forgets its pods' charges with the node).
func (l *ledger) forget(node string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for uid := range l.nodes[node] {
		delete(l.pods, uid)
	}
	delete(l.nodes, node)
}

// notIn returns the pods the engine charges on node that the NodeInfo does not hold.
func (l *ledger) notIn(node string, ni fwk.NodeInfo) []string {
	pods := ni.GetPods()
	theirs := make(map[string]struct{}, len(pods))
	for _, pi := range pods {
		theirs[string(pi.GetPod().UID)] = struct{}{}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var gone []string
	for uid := range l.nodes[node] {
		if _, ok := theirs[uid]; !ok {
			gone = append(gone, uid)
		}
	}
	return gone
}

type nameIndex struct {
	set  uint64
	byID []string
	ids  map[string]uint32
	// The same ids by kube-scheduler's NodeInfo, learned from the first PreFilter's node list
	// under this name set and read-only after. kube-scheduler's snapshot keeps one NodeInfo per
	// node name for the node's life (UpdateSnapshot copies a changed node into it), and within a
	// name set a name has one id, so a NodeInfo found here has the right id; any other NodeInfo
	// (preemption's copies, a node kube-scheduler has and the engine has not heard of) is
	// looked up by name. Filter and Score look a node up once per node per pod, on 16
	// goroutines: by name that was 0.91 s of a 20.85 s CPU profile of fleetsched-scheduler in
	// the scale run (1,000 nodes, 2-vCPU VM; ~250 ns a lookup, hashing and comparing names that
	// are not in cache), 4.4 % of kube-scheduler's CPU; by NodeInfo 0.38 s of 20.94 s (1.8 %).
	byInfo atomic.Pointer[map[*framework.NodeInfo]uint32]
}

// id is the engine's id of kube-scheduler's node n under this name set.
func (ix *nameIndex) id(n fwk.NodeInfo) (uint32, bool) {
	if m := ix.byInfo.Load(); m != nil {
		if ni, ok := n.(*framework.NodeInfo); ok {
			if id, ok := (*m)[ni]; ok {
				return id, true
			}
		}
	}
	node := n.Node()
	if node == nil {
		return 0, false
	}
	id, ok := ix.ids[node.Name]
	return id, ok
}

// learn indexes kube-scheduler's NodeInfos once per name set (see byInfo).
func (ix *nameIndex) learn(nodes []fwk.NodeInfo) {
	if len(nodes) == 0 || ix.byInfo.Load() != nil {
		return
	}
	m := make(map[*framework.NodeInfo]uint32, len(nodes))
	for _, n := range nodes {
		ni, ok := n.(*framework.NodeInfo)
		if !ok || ni.Node() == nil {
			continue
		}
		if id, ok := ix.ids[ni.Node().Name]; ok {
			m[ni] = id
		}
	}
	ix.byInfo.CompareAndSwap(nil, &m)
}

var (
	_ fwk.PreFilterPlugin     = (*Plugin)(nil)
	_ fwk.FilterPlugin        = (*Plugin)(nil)
	_ fwk.PreFilterExtensions = (*Plugin)(nil)
	_ fwk.PreScorePlugin      = (*Plugin)(nil)
	_ fwk.ScorePlugin         = (*Plugin)(nil)
	_ fwk.ReservePlugin       = (*Plugin)(nil)
	_ fwk.BindPlugin          = (*Plugin)(nil)
	_ fwk.EnqueueExtensions   = (*Plugin)(nil)
	_ fwk.SignPlugin          = (*Plugin)(nil)
)

// Args reads the plugin's args: a FleetschedConfiguration (what `fleetsched serve --config`
// reads), or nothing for the default profile.
func Args(obj runtime.Object) ([]byte, error) {
	switch a := obj.(type) {
	case nil:
		return nil, nil
	case *runtime.Unknown:
		return a.Raw, nil
	default:
		return nil, fmt.Errorf("%s: args of type %T; want a FleetschedConfiguration", Name, obj)
	}
}

// New is the plugin factory for app.WithPlugin.
func New(ctx context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	config, err := Args(obj)
	if err != nil {
		return nil, err
	}
	engine, err := capi.New(config)
	if err != nil {
		return nil, fmt.Errorf("%s args: %w", Name, err)
	}
	p := &Plugin{handle: h, engine: engine, names: &nameIndex{}}
	track(engine)
	if h != nil && h.SharedInformerFactory() != nil {
		if err := p.follow(ctx, h); err != nil {
			engine.Close()
			return nil, err
		}
	}
	return p, nil
}

// NewWithEngine is New for tests: an engine fed by the caller.
func NewWithEngine(engine *capi.Engine, h fwk.Handle) *Plugin {
	return &Plugin{handle: h, engine: engine, names: &nameIndex{}}
}

func (p *Plugin) Name() string { return Name }

// Engine is the plugin's engine (tests feed it directly).
func (p *Plugin) Engine() *capi.Engine { return p.engine }

// follow feeds the engine from the scheduler's own informers: no second watch.
func (p *Plugin) follow(ctx context.Context, h fwk.Handle) error {
	logger := klog.FromContext(ctx)
	nodes := h.SharedInformerFactory().Core().V1().Nodes().Informer()
	pods := h.SharedInformerFactory().Core().V1().Pods().Informer()
	nodeReg, err := nodes.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { p.upsertNode(logger, obj) },
		UpdateFunc: func(_, obj any) { p.upsertNode(logger, obj) },
		DeleteFunc: func(obj any) {
			if n, ok := unwrap(obj).(*v1.Node); ok {
				p.engine.DeleteNode(n.Name)
				p.ledger.forget(n.Name)
			}
		},
	})
	if err != nil {
		return err
	}
	podReg, err := pods.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { p.upsertPod(logger, obj) },
		UpdateFunc: func(_, obj any) { p.upsertPod(logger, obj) },
		DeleteFunc: func(obj any) {
			if pod, ok := unwrap(obj).(*v1.Pod); ok {
				p.deletePod(pod)
			}
		},
	})
	if err != nil {
		return err
	}
	p.synced = []cache.ResourceEventHandlerRegistration{nodeReg, podReg}
	return nil
}

func unwrap(obj any) any {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		return d.Obj
	}
	return obj
}

func (p *Plugin) upsertNode(logger klog.Logger, obj any) {
	n, ok := obj.(*v1.Node)
	if !ok {
		return
	}
	// What the engine reads of a node is metadata, spec and allocatable: leave out the status
	// parts that make most of its bytes (images, conditions, addresses).
	slim := v1.Node{ObjectMeta: n.ObjectMeta, Spec: n.Spec, Status: v1.NodeStatus{Allocatable: n.Status.Allocatable, Capacity: n.Status.Capacity}}
	slim.ManagedFields = nil
	b, err := json.Marshal(&slim)
	if err == nil {
		err = p.engine.UpsertNode(b)
	}
	if err != nil {
		logger.Error(err, "fleetsched: node not taken", "node", n.Name)
	}
}

func (p *Plugin) upsertPod(logger klog.Logger, obj any) {
	pod, ok := obj.(*v1.Pod)
	// Pods not bound yet hold nothing; the engine charges bound pods (and its own reservations).
	if !ok || pod.Spec.NodeName == "" {
		return
	}
	b, err := podJSON(pod)
	if err == nil {
		err = p.engine.UpsertPod(b)
	}
	if err != nil {
		logger.Error(err, "fleetsched: pod not taken", "pod", klog.KObj(pod))
		return
	}
	p.ledger.charge(pod.Spec.NodeName, string(pod.UID))
}

func (p *Plugin) deletePod(pod *v1.Pod) {
	p.engine.DeletePod(string(pod.UID))
	p.ledger.uncharge(string(pod.UID))
}

func (p *Plugin) hasSynced() bool {
	for _, r := range p.synced {
		if !r.HasSynced() {
			return false
		}
	}
	return true
}

// index returns the id -> name map for name set `set`, refreshed from the engine when it moved on.
func (p *Plugin) index(set uint64) *nameIndex {
	p.mu.RLock()
	ix := p.names
	p.mu.RUnlock()
	if ix.set == set && ix.ids != nil {
		return ix
	}
	got, byID := p.engine.NodeNames()
	ix = &nameIndex{set: got, byID: byID, ids: make(map[string]uint32, len(byID))}
	for id, name := range byID {
		if name != "" {
			ix.ids[name] = uint32(id)
		}
	}
	p.mu.Lock()
	p.names = ix
	p.mu.Unlock()
	return ix
}

// cycleState is one pod's scheduling cycle.
type cycleState struct {
	pod      []byte
	cycle    capi.Cycle
	names    *nameIndex
	failures []*fwk.Status     // by failure number
	scores   []int64           // by node id (PreScore)
	binding  map[string]string // Reserve's choice: the Binding's annotations, posted as given
	// Filter passed a node its verdict failed (see ledger): the feasible nodes are not the
	// verdicts'.
	overridden *atomic.Bool
	// Preemption's and nominated pods' what-if, per node: the pods taken off (Filter finds them
	// missing from the NodeInfo as well) and put on.
	removed map[string][]string
	added   map[string][]*v1.Pod
}

func (s *cycleState) Clone() fwk.StateData {
	c := *s
	if s.removed != nil {
		c.removed = make(map[string][]string, len(s.removed))
		for k, v := range s.removed {
			c.removed[k] = append([]string(nil), v...)
		}
	}
	if s.added != nil {
		c.added = make(map[string][]*v1.Pod, len(s.added))
		for k, v := range s.added {
			c.added[k] = append([]*v1.Pod(nil), v...)
		}
	}
	return &c
}

func read(state fwk.CycleState) (*cycleState, *fwk.Status) {
	d, err := state.Read(stateKey)
	if err != nil {
		return nil, fwk.AsStatus(fmt.Errorf("%s: no PreFilter state: %w", Name, err))
	}
	s, ok := d.(*cycleState)
	if !ok {
		return nil, fwk.AsStatus(fmt.Errorf("%s: state of type %T", Name, d))
	}
	return s, nil
}

func status(code capi.Code, reason string) *fwk.Status {
	switch code {
	case capi.Success:
		return nil
	case capi.Unschedulable:
		return fwk.NewStatus(fwk.Unschedulable, reason)
	case capi.UnschedulableAndUnresolvable:
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, reason)
	default:
		return fwk.NewStatus(fwk.Error, reason)
	}
}

func (p *Plugin) PreFilter(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	if !p.hasSynced() {
		return nil, fwk.NewStatus(fwk.Unschedulable, "fleetsched has not read every node and pod yet")
	}
	b, err := podJSON(pod)
	if err != nil {
		return nil, fwk.AsStatus(err)
	}
	c, err := p.engine.PreFilter(b)
	if err != nil {
		// The engine could not read the pod: an error for this pod only.
		return nil, fwk.AsStatus(fmt.Errorf("%s: %w", Name, err))
	}
	if c.Code != capi.Success {
		code, reason := p.engine.Reason(0)
		return nil, status(code, reason)
	}
	s := &cycleState{pod: b, cycle: c, names: p.index(c.NameSet), overridden: &atomic.Bool{}}
	s.names.learn(nodes)
	// Every failure's Status once, so Filter (16 goroutines) allocates nothing.
	maxFailure := byte(0)
	for _, v := range c.Verdict {
		if v != capi.Hole && v > maxFailure {
			maxFailure = v
		}
	}
	s.failures = make([]*fwk.Status, int(maxFailure)+1)
	for k := 1; k <= int(maxFailure); k++ {
		s.failures[k] = status(p.engine.Reason(byte(k)))
	}
	state.Write(stateKey, s)
	if c.Feasible > 0 && c.Feasible <= fewNodes {
		if few := s.mayFit(); few != nil {
			return &fwk.PreFilterResult{NodeNames: few}, nil
		}
	}
	return nil, nil
}

// mayFit is the nodes that pass, and those that fail only for now (Unschedulable: too few free
// GPUs), or nil when there are more than fewNodes of them. kube-scheduler marks every node a
// PreFilterResult leaves out UnschedulableAndUnresolvable, and DefaultPreemption looks for
// victims on none of those: a node full of preemptible GPU pods must stay in.
func (s *cycleState) mayFit() sets.Set[string] {
	few := sets.New[string]()
	for id, v := range s.cycle.Verdict {
		if v == capi.Pass || (v != capi.Hole && int(v) < len(s.failures) && s.failures[v].Code() == fwk.Unschedulable) {
			if few.Len() == fewNodes {
				return nil
			}
			few.Insert(s.names.byID[id])
		}
	}
	return few
}

func (p *Plugin) PreFilterExtensions() fwk.PreFilterExtensions { return p }

// notCached is Filter's answer for a node the cycle's verdicts do not cover.
func notCached(n fwk.NodeInfo) *fwk.Status {
	return fwk.NewStatus(fwk.Unschedulable, "node "+n.Node().Name+" is not in fleetsched's cache yet")
}

func (p *Plugin) Filter(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeInfo fwk.NodeInfo) *fwk.Status {
	s, st := read(state)
	if st != nil {
		return st
	}
	whatIf := false
	if len(s.removed)+len(s.added) > 0 {
		name := nodeInfo.Node().Name
		whatIf = len(s.removed[name]) > 0 || len(s.added[name]) > 0
	}
	if !whatIf {
		id, ok := s.names.id(nodeInfo)
		if !ok || int(id) >= len(s.cycle.Verdict) {
			return notCached(nodeInfo)
		}
		v := s.cycle.Verdict[id]
		if v == capi.Pass {
			return nil
		}
		// A failing verdict stands unless the snapshot charged more pods than the NodeInfo
		// holds (see ledger): one comparison per failing node.
		if int(s.cycle.Pods[id]) <= len(nodeInfo.GetPods()) {
			if int(v) < len(s.failures) && s.failures[v] != nil {
				return s.failures[v]
			}
			return notCached(nodeInfo)
		}
	}
	name := nodeInfo.Node().Name
	// Decide on the node as the NodeInfo holds it, against the engine's current state: without
	// the pods the engine charges that the NodeInfo lacks (preemption's victims among them), with
	// the pods preemption's what-if put on it.
	added := make([][]byte, 0, len(s.added[name]))
	for _, a := range s.added[name] {
		b, err := podJSON(a)
		if err != nil {
			return fwk.AsStatus(err)
		}
		added = append(added, b)
	}
	st = status(p.engine.FilterNode(s.cycle.Token, s.pod, name, p.ledger.notIn(name, nodeInfo), added))
	if !whatIf && st.IsSuccess() {
		s.overridden.Store(true)
	}
	return st
}

// whatIf is AddPod's and RemovePod's start: the cycle, the node's name, the pod, and the
// per-node maps made ready.
func whatIf(state fwk.CycleState, podInfo fwk.PodInfo, nodeInfo fwk.NodeInfo) (*cycleState, string, *v1.Pod, *fwk.Status) {
	s, st := read(state)
	if st != nil {
		return nil, "", nil, st
	}
	if s.removed == nil {
		s.removed, s.added = map[string][]string{}, map[string][]*v1.Pod{}
	}
	return s, nodeInfo.Node().Name, podInfo.GetPod(), nil
}

func (p *Plugin) AddPod(ctx context.Context, state fwk.CycleState, _ *v1.Pod, podInfo fwk.PodInfo, nodeInfo fwk.NodeInfo) *fwk.Status {
	s, name, pod, st := whatIf(state, podInfo, nodeInfo)
	if st != nil {
		return st
	}
	// A victim given back (preemption reprieves pods one by one) is simply not removed.
	for i, uid := range s.removed[name] {
		if uid == string(pod.UID) {
			s.removed[name] = append(s.removed[name][:i:i], s.removed[name][i+1:]...)
			return nil
		}
	}
	s.added[name] = append(s.added[name], pod)
	return nil
}

func (p *Plugin) RemovePod(ctx context.Context, state fwk.CycleState, _ *v1.Pod, podInfo fwk.PodInfo, nodeInfo fwk.NodeInfo) *fwk.Status {
	s, name, pod, st := whatIf(state, podInfo, nodeInfo)
	if st != nil {
		return st
	}
	for i, a := range s.added[name] {
		if a.UID == pod.UID {
			s.added[name] = append(s.added[name][:i:i], s.added[name][i+1:]...)
			return nil
		}
	}
	s.removed[name] = append(s.removed[name], string(pod.UID))
	return nil
}

func (p *Plugin) PreScore(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) *fwk.Status {
	s, st := read(state)
	if st != nil {
		return st
	}
	ids := make([]uint32, 0, len(nodes))
	if len(nodes) == int(s.cycle.Feasible) && len(s.removed)+len(s.added) == 0 && !s.overridden.Load() {
		// Every node this plugin passed passed the others too (the feasible nodes are a subset
		// of ours, and as many): they are the nodes whose verdict is Pass. Reading them off the
		// verdicts spares a name lookup per node, serially, in every pod's cycle: at 5,000
		// nodes BenchmarkCycle's serial part went from 0.30 to 0.18 ms for a CPU pod.
		for id, v := range s.cycle.Verdict {
			if v == capi.Pass {
				ids = append(ids, uint32(id))
			}
		}
	} else {
		for _, n := range nodes {
			if id, ok := s.names.id(n); ok {
				ids = append(ids, id)
			}
		}
	}
	out := make([]int64, len(ids))
	if err := p.engine.Score(s.cycle.Token, s.pod, ids, out); err != nil {
		return fwk.AsStatus(fmt.Errorf("%s: %w", Name, err))
	}
	s.scores = make([]int64, len(s.names.byID))
	for i, id := range ids {
		if int(id) < len(s.scores) {
			s.scores[id] = out[i]
		}
	}
	return nil
}

func (p *Plugin) Score(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeInfo fwk.NodeInfo) (int64, *fwk.Status) {
	s, st := read(state)
	if st != nil {
		return 0, st
	}
	if id, ok := s.names.id(nodeInfo); ok && int(id) < len(s.scores) {
		return s.scores[id], nil
	}
	return 0, nil
}

// ScoreExtensions: scores are already on 0..100.
func (p *Plugin) ScoreExtensions() fwk.ScoreExtensions { return nil }

func (p *Plugin) Reserve(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeName string) *fwk.Status {
	s, st := read(state)
	if st != nil {
		return st
	}
	annotations, code, reason := p.engine.Reserve(s.pod, nodeName)
	if code != capi.Success {
		return status(code, reason)
	}
	p.ledger.charge(nodeName, string(pod.UID))
	s.binding = annotations
	return nil
}

func (p *Plugin) Unreserve(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeName string) {
	p.engine.Unreserve(string(pod.UID))
	p.ledger.uncharge(string(pod.UID))
}

func (p *Plugin) Bind(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeName string) *fwk.Status {
	s, st := read(state)
	if st != nil || len(s.binding) == 0 {
		return fwk.NewStatus(fwk.Skip)
	}
	binding := &v1.Binding{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID,
			// The engine's, as the extender's bind posts them (cache::bindingAnnotations).
			Annotations: s.binding,
		},
		Target: v1.ObjectReference{Kind: "Node", Name: nodeName},
	}
	if err := p.handle.ClientSet().CoreV1().Pods(pod.Namespace).Bind(ctx, binding, metav1.CreateOptions{}); err != nil {
		return fwk.AsStatus(err)
	}
	return nil
}

func (p *Plugin) EventsToRegister(context.Context) ([]fwk.ClusterEventWithHint, error) {
	return []fwk.ClusterEventWithHint{
		{Event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add | fwk.UpdateNodeAllocatable | fwk.UpdateNodeLabel | fwk.UpdateNodeTaint}},
		{Event: fwk.ClusterEvent{Resource: fwk.Pod, ActionType: fwk.Delete}},
	}, nil
}

func (p *Plugin) SignPod(ctx context.Context, pod *v1.Pod) ([]fwk.SignFragment, *fwk.Status) {
	b, err := podJSON(pod)
	if err != nil {
		return nil, fwk.AsStatus(err)
	}
	if !p.engine.Signable(b) {
		return nil, fwk.NewStatus(fwk.Unschedulable, "fleetsched spreads this pod's workload across zones")
	}
	fragments, err := signPod(pod)
	if err != nil {
		return nil, fwk.AsStatus(err)
	}
	return fragments, nil
}
