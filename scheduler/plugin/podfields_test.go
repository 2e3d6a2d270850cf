package plugin

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	fwk "k8s.io/kube-scheduler/framework"
)

// The parts of a pod podFields names but does not sign: they name the pod, and change no decision.
var unsigned = []string{"metadata.name", "metadata.uid", "metadata.resourceVersion"}

// fullPod is workloadPod bound, with every part podFields names set, and pod affinity next to
// the node affinity the engine reads.
func fullPod() *v1.Pod {
	p := workloadPod("w", 2, "node-1")
	p.ResourceVersion = "4711"
	p.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate}}
	yes := true
	p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: "llm", UID: "job-uid", Controller: &yes, BlockOwnerDeletion: &yes}}
	always := v1.ContainerRestartPolicyAlways
	sidecar := *p.Spec.Containers[1].DeepCopy()
	sidecar.Name, sidecar.RestartPolicy = "sidecar", &always
	sidecar.Resources.Requests = v1.ResourceList{v1.ResourceCPU: resource.MustParse("250m")}
	p.Spec.InitContainers = []v1.Container{sidecar}
	p.Spec.SchedulerName = "default-scheduler"
	prio := int32(1000)
	p.Spec.Priority = &prio
	p.Spec.PriorityClassName = "high"
	p.Spec.NodeSelector = map[string]string{"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"}
	p.Spec.Affinity = &v1.Affinity{
		NodeAffinity: &v1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
				MatchExpressions: []v1.NodeSelectorRequirement{{Key: "topology.kubernetes.io/zone", Operator: v1.NodeSelectorOpIn, Values: []string{"zone-a", "zone-b"}}},
			}}},
			PreferredDuringSchedulingIgnoredDuringExecution: []v1.PreferredSchedulingTerm{{Weight: 10, Preference: v1.NodeSelectorTerm{
				MatchExpressions: []v1.NodeSelectorRequirement{{Key: "capacity", Operator: v1.NodeSelectorOpNotIn, Values: []string{"spot"}}},
			}}},
		},
		PodAffinity: &v1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{{Weight: 1,
			PodAffinityTerm: v1.PodAffinityTerm{TopologyKey: "kubernetes.io/hostname"}}}},
	}
	seconds := int64(300)
	p.Spec.Tolerations = []v1.Toleration{
		{Key: "nvidia.com/gpu", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule},
		{Key: "node.kubernetes.io/not-ready", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute, TolerationSeconds: &seconds},
	}
	p.Spec.Overhead = v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m")}
	p.Spec.Resources = &v1.ResourceRequirements{Limits: v1.ResourceList{v1.ResourceMemory: resource.MustParse("64Gi")}}
	p.Status.NominatedNodeName = "node-1"
	p.Status.QOSClass = v1.PodQOSBurstable
	return p
}

// Both ways against the engine's decoder (through the C ABI): it reads every part podFields
// names, and no part of a pod it does not name. The decoder fails on a part it reads whose
// value has the wrong type, and skips a part it does not read: a part it reads fails with a
// number or with a string there (it reads no part as either), a part it does not read takes both.
func TestPodFieldsAreWhatTheEngineDecodes(t *testing.T) {
	f := newFixture(t, "", gpuNode("node-1", 8, nil))
	upsert := func(path string, v any) error {
		m := jsonOf(t, fullPod())
		if path != "" && putJSON(m, path, v) == 0 {
			t.Fatalf("fullPod has no place for %s", path)
		}
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return f.p.engine.UpsertPod(b)
	}
	if err := upsert("", nil); err != nil {
		t.Fatalf("the full pod: %v", err)
	}
	for _, fd := range podFields {
		if upsert(fd.path, 7) == nil && upsert(fd.path, "x") == nil {
			t.Errorf("the engine does not read %s (it takes a number and a string there): podFields should not name it", fd.path)
		}
	}
	unread := unreadPaths(t)
	for _, path := range unread {
		for _, v := range []any{7, "x"} {
			if err := upsert(path, v); err != nil {
				t.Errorf("the engine reads %s, which podFields does not name: %v", path, err)
			}
		}
	}
	if len(unread) < 50 {
		t.Fatalf("only %d parts of a pod next to podFields: %v", len(unread), unread)
	}
}

// podJSON sends a part podFields names whole, and nothing else of the pod; the pod it encoded
// before leaves nothing behind (podJSON reuses its pods).
func TestPodJSONIsThePodFields(t *testing.T) {
	pod := fullPod()
	first, _ := podJSON(pod)
	other := fullPod()
	other.Spec.InitContainers = append(other.Spec.InitContainers, other.Spec.InitContainers...)
	other.Spec.Containers = append(other.Spec.Containers, other.Spec.Containers...)
	for i := range other.Spec.Containers {
		other.Spec.Containers[i].Resources.Requests = v1.ResourceList{"example.com/other": resource.MustParse("1")}
	}
	if _, err := podJSON(other); err != nil {
		t.Fatal(err)
	}
	if again, _ := podJSON(pod); !bytes.Equal(again, first) {
		t.Fatalf("podJSON after another pod:\n%s\nbefore:\n%s", again, first)
	}
	before := jsonOf(t, pod)
	got := podJSONOf(t, pod)
	if !reflect.DeepEqual(jsonOf(t, pod), before) {
		t.Fatal("podJSON changed the pod it encoded")
	}
	want := map[string]any{}
	for _, fd := range podFields {
		copyJSON(want, before, fd.path)
	}
	prune(got)
	prune(want)
	if !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Fatalf("podJSON sends other than podFields:\n got %s\nwant %s", g, w)
	}
}

// A pod that differs from another in one part podFields names differs in its JSON for the
// engine, and (unless the part only names the pod) in its signature: in that part's fragment,
// and no other.
func TestEveryPodFieldIsSentAndSigned(t *testing.T) {
	base := fullPod()
	baseJSON, baseSig := podJSONOf(t, base), fragmentsOf(t, base)
	keys := map[string]string{}
	for _, fd := range podFields {
		if (fd.key == "") != (fd.sign == nil) {
			t.Errorf("%s: key %q and sign %v: both or neither", fd.path, fd.key, fd.sign != nil)
		}
		if other, ok := keys[fd.key]; ok && fd.key != "" {
			t.Errorf("%s and %s are signed under one key, %s", other, fd.path, fd.key)
		}
		keys[fd.key] = fd.path
		isUnsigned := false
		for _, u := range unsigned {
			isUnsigned = isUnsigned || u == fd.path
		}
		if (fd.sign == nil) != isUnsigned {
			t.Errorf("%s: signed %v; only %v go unsigned", fd.path, fd.sign != nil, unsigned)
		}
		signed := false
		for _, pod := range variants(t, base, fd.path) {
			if reflect.DeepEqual(podJSONOf(t, pod), baseJSON) {
				t.Errorf("a pod that differs in %s has the same JSON for the engine", fd.path)
			}
			for key, v := range fragmentsOf(t, pod) {
				if v == baseSig[key] {
					continue
				}
				if key != fd.key {
					t.Errorf("a pod that differs in %s differs in fragment %s", fd.path, key)
				}
				signed = true
			}
		}
		if fd.sign != nil && !signed {
			t.Errorf("a pod that differs in %s has the same signature", fd.path)
		}
		if fd.sign == nil && signed {
			t.Errorf("a pod that differs in %s, which podFields does not sign, has another signature", fd.path)
		}
	}
}

// A pod that differs from another only in a part the engine does not read (a container's image,
// environment or probes, volumes, the status's conditions, pod affinity, ...) has the same JSON
// for the engine and the same signature.
func TestUnreadPodFieldsAreNeitherSentNorSigned(t *testing.T) {
	base := fullPod()
	baseJSON, baseSig := podJSONOf(t, base), fragmentsOf(t, base)
	for _, path := range unreadPaths(t) {
		for _, pod := range variants(t, base, path) {
			if got := podJSONOf(t, pod); !reflect.DeepEqual(got, baseJSON) {
				t.Errorf("a pod that differs in %s, which the engine does not read, has other JSON for it", path)
			}
			if got := fragmentsOf(t, pod); !reflect.DeepEqual(got, baseSig) {
				t.Errorf("a pod that differs in %s, which the engine does not read, has another signature", path)
			}
		}
	}
}

// Pods the engine decides apart on some node have signatures apart: kube-scheduler would
// otherwise reuse one's decision for the other.
func TestPodsTheEngineDecidesApartAreSignedApart(t *testing.T) {
	h100 := gpuNode("h100", 8, nil)
	h100.Labels["nvidia.com/gpu.product"] = "NVIDIA-H100-80GB-HBM3"
	f := newFixture(t, "", gpuNode("a100", 8, nil), h100)
	gpu := func(mod func(*v1.Pod)) *v1.Pod {
		p := gpuPod("p", 1, "", nil)
		mod(p)
		return p
	}
	onProduct := func(product string) func(*v1.Pod) {
		return func(p *v1.Pod) {
			p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
				NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{{
					Key: "nvidia.com/gpu.product", Operator: v1.NodeSelectorOpIn, Values: []string{product}}}}}}}}
		}
	}
	// 4 GPUs and an init container of 6: 6 when it runs first, 10 as a sidecar (8 on a node).
	withInit := func(sidecar bool) func(*v1.Pod) {
		return func(p *v1.Pod) {
			p.Spec.Containers[0].Resources.Limits["nvidia.com/gpu"] = resource.MustParse("4")
			init := v1.Container{Name: "init", Resources: v1.ResourceRequirements{Limits: v1.ResourceList{"nvidia.com/gpu": resource.MustParse("6")}}}
			if sidecar {
				always := v1.ContainerRestartPolicyAlways
				init.RestartPolicy = &always
			}
			p.Spec.InitContainers = []v1.Container{init}
		}
	}
	for _, c := range []struct {
		name string
		a, b *v1.Pod
	}{
		{"nodeSelector", gpu(func(p *v1.Pod) {
			p.Spec.NodeSelector = map[string]string{"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"}
		}),
			gpu(func(p *v1.Pod) {
				p.Spec.NodeSelector = map[string]string{"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}
			})},
		{"nodeAffinity", gpu(onProduct("NVIDIA-A100-SXM4-80GB")), gpu(onProduct("NVIDIA-H100-80GB-HBM3"))},
		{"sidecar", gpu(withInit(false)), gpu(withInit(true))},
		{"annotation", gpu(func(*v1.Pod) {}), gpu(func(p *v1.Pod) {
			p.Annotations = map[string]string{"fleetsched.io/gpu-models": "NVIDIA-H100-80GB-HBM3"}
		})},
	} {
		if va, vb := passed(f, c.a), passed(f, c.b); va == vb {
			t.Fatalf("%s: the engine passes %s for both pods; the case shows nothing", c.name, va)
		}
		if sa, sb := signature(t, f, c.a), signature(t, f, c.b); sa == sb {
			t.Errorf("%s: the engine decides the pods apart, and their signatures are the same: %s", c.name, sa)
		}
	}
}

// passed is the nodes the engine passes the pod on.
func passed(f *fixture, pod *v1.Pod) string {
	_, _, v := f.cycle(pod)
	var out []string
	for name, st := range v {
		if st.IsSuccess() {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

// signature is the pod's signature as kube-scheduler builds it from the plugin's fragments
// (frameworkImpl.SignPod: a map by key, as JSON).
func signature(t *testing.T, f *fixture, pod *v1.Pod) string {
	t.Helper()
	fragments, st := f.p.SignPod(context.Background(), pod)
	if !st.IsSuccess() {
		t.Fatalf("pod not signed: %v", st)
	}
	sig := map[string]any{fwk.SchedulerNameSignerName: pod.Spec.SchedulerName}
	for _, fr := range fragments {
		sig[fr.Key] = fr.Value
	}
	b, err := json.Marshal(sig)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// fragmentsOf is signPod's fragments by key, each value as JSON (as the framework compares them).
func fragmentsOf(t *testing.T, pod *v1.Pod) map[string]string {
	t.Helper()
	fragments, err := signPod(pod)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, fr := range fragments {
		b, err := json.Marshal(fr.Value)
		if err != nil {
			t.Fatal(err)
		}
		out[fr.Key] = string(b)
	}
	return out
}

func podJSONOf(t *testing.T, pod *v1.Pod) map[string]any {
	t.Helper()
	b, err := podJSON(pod)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func jsonOf(t *testing.T, pod *v1.Pod) map[string]any {
	t.Helper()
	b, err := json.Marshal(pod)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// variants is base with the part at path set every which way that changes the pod: filled
// (fill), and zero.
func variants(t *testing.T, base *v1.Pod, path string) []*v1.Pod {
	t.Helper()
	baseJSON, _ := json.Marshal(base)
	var out []*v1.Pod
	for _, set := range []func(reflect.Value){
		func(v reflect.Value) { fill(v, 0) },
		func(v reflect.Value) { v.Set(reflect.Zero(v.Type())) },
	} {
		pod := base.DeepCopy()
		if atPath(reflect.ValueOf(pod).Elem(), path, set) == 0 {
			t.Fatalf("fullPod has no %s", path)
		}
		if b, _ := json.Marshal(pod); !bytes.Equal(b, baseJSON) {
			out = append(out, pod)
		}
	}
	if len(out) == 0 {
		t.Fatalf("no variant of fullPod differs in %s", path)
	}
	return out
}

// ---- the pod's JSON paths, from its Go type -----------------------------------------------------

type jsonChild struct {
	name  string       // the JSON name
	list  bool         // a list of objects: a path on through it names the list "name[]"
	index []int        // the Go field
	typ   reflect.Type // the field's type, or the list's objects'
}

func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// jsonChildren is the JSON fields of struct type t, inline structs flattened (as encoding/json
// writes them).
func jsonChildren(t reflect.Type) []jsonChild {
	var out []jsonChild
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		ft := deref(f.Type)
		if f.Anonymous && name == "" && ft.Kind() == reflect.Struct {
			for _, c := range jsonChildren(ft) {
				c.index = append([]int{i}, c.index...)
				out = append(out, c)
			}
			continue
		}
		if name == "" {
			name = f.Name
		}
		list := ft.Kind() == reflect.Slice && deref(ft.Elem()).Kind() == reflect.Struct
		if list {
			ft = deref(ft.Elem())
		}
		out = append(out, jsonChild{name: name, list: list, index: []int{i}, typ: ft})
	}
	return out
}

// unreadPaths is every part of a pod next to the parts podFields names: the fields of every
// object on the way to one that are not on the way to one themselves. A decoder that reads
// nothing of these reads nothing outside podFields.
func unreadPaths(t *testing.T) []string {
	t.Helper()
	named := map[string]bool{}
	onTheWay := func(p string) bool {
		for _, fd := range podFields {
			if strings.HasPrefix(fd.path, p+".") {
				return true
			}
		}
		return false
	}
	var out []string
	var walk func(prefix string, typ reflect.Type)
	walk = func(prefix string, typ reflect.Type) {
		for _, c := range jsonChildren(typ) {
			p := c.name
			if prefix != "" {
				p = prefix + "." + c.name
			}
			way := p
			if c.list {
				way += "[]"
			}
			isField := false
			for _, fd := range podFields {
				isField = isField || fd.path == p
			}
			switch {
			case isField:
				named[p] = true
			case onTheWay(way):
				walk(way, c.typ)
			default:
				out = append(out, p)
			}
		}
	}
	walk("", reflect.TypeOf(v1.Pod{}))
	for _, fd := range podFields {
		if !named[fd.path] {
			t.Fatalf("podFields names %s, which v1.Pod has not", fd.path)
		}
	}
	return out
}

// atPath calls fn with every value at path in v (a struct), making the objects on the way, and
// returns how many there were.
func atPath(v reflect.Value, path string, fn func(reflect.Value)) int {
	seg, rest, more := strings.Cut(path, ".")
	for _, c := range jsonChildren(v.Type()) {
		if c.name != strings.TrimSuffix(seg, "[]") {
			continue
		}
		f := v.FieldByIndex(c.index)
		if !more {
			fn(f)
			return 1
		}
		if c.list {
			n := 0
			for i := 0; i < f.Len(); i++ {
				e := f.Index(i)
				if e.Kind() == reflect.Pointer {
					e = e.Elem()
				}
				n += atPath(e, rest, fn)
			}
			return n
		}
		if f.Kind() == reflect.Pointer {
			if f.IsNil() {
				f.Set(reflect.New(f.Type().Elem()))
			}
			f = f.Elem()
		}
		return atPath(f, rest, fn)
	}
	return 0
}

var (
	quantityType  = reflect.TypeOf(resource.Quantity{})
	timeType      = reflect.TypeOf(metav1.Time{})
	microTimeType = reflect.TypeOf(metav1.MicroTime{})
	fieldsType    = reflect.TypeOf(metav1.FieldsV1{})
	intOrString   = reflect.TypeOf(intstr.IntOrString{})
)

// fill sets v, and everything in it, to values no pod of these tests has: one element a list,
// one key a map.
func fill(v reflect.Value, depth int) {
	if depth > 24 {
		return
	}
	switch v.Type() {
	case quantityType:
		v.Set(reflect.ValueOf(resource.MustParse("3")))
		return
	case timeType:
		v.Set(reflect.ValueOf(metav1.Unix(7, 0)))
		return
	case microTimeType:
		v.Set(reflect.ValueOf(metav1.NewMicroTime(time.Unix(7, 0))))
		return
	case fieldsType:
		v.Set(reflect.ValueOf(metav1.FieldsV1{Raw: []byte(`{"f:x":{}}`)}))
		return
	case intOrString:
		v.Set(reflect.ValueOf(intstr.FromInt32(7)))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString("fill")
	case reflect.Bool:
		v.SetBool(!v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(7)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(7)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(7)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fill(p.Elem(), depth+1)
		v.Set(p)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fill(s.Index(0), depth+1)
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k, depth+1)
		fill(e, depth+1)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), depth+1)
			}
		}
	}
}

// ---- decoded JSON ---------------------------------------------------------------------------

// putJSON sets the value at path ("a.b[].c": c in every element of the list a.b) in decoded
// JSON, where the objects on the way are there; it returns how many values it set.
func putJSON(m map[string]any, path string, v any) int {
	key, rest, nested := strings.Cut(path, ".")
	key = strings.TrimSuffix(key, "[]")
	if !nested {
		m[key] = v
		return 1
	}
	children := []any{m[key]}
	if list, ok := m[key].([]any); ok {
		children = list
	}
	n := 0
	for _, c := range children {
		if cm, ok := c.(map[string]any); ok {
			n += putJSON(cm, rest, v)
		}
	}
	return n
}

// copyJSON copies the value at path from src into dst, making the objects and lists on the way
// (a list as long as src's).
func copyJSON(dst, src map[string]any, path string) {
	key, rest, nested := strings.Cut(path, ".")
	key = strings.TrimSuffix(key, "[]")
	sv, ok := src[key]
	if !ok {
		return
	}
	if !nested {
		dst[key] = sv
		return
	}
	if list, ok := sv.([]any); ok {
		dl, _ := dst[key].([]any)
		if len(dl) != len(list) {
			dl = make([]any, len(list))
			for i := range dl {
				dl[i] = map[string]any{}
			}
			dst[key] = dl
		}
		for i, e := range list {
			if em, ok := e.(map[string]any); ok {
				copyJSON(dl[i].(map[string]any), em, rest)
			}
		}
		return
	}
	sm, ok := sv.(map[string]any)
	if !ok {
		return
	}
	dm, ok := dst[key].(map[string]any)
	if !ok {
		dm = map[string]any{}
		dst[key] = dm
	}
	copyJSON(dm, sm, rest)
}

// prune drops the empty values from decoded JSON (encoding/json writes some fields of an
// empty struct: a container's name, its resources), and reports whether m is empty then.
func prune(m map[string]any) bool {
	for k, v := range m {
		switch x := v.(type) {
		case nil:
			delete(m, k)
		case string:
			if x == "" {
				delete(m, k)
			}
		case map[string]any:
			if prune(x) {
				delete(m, k)
			}
		case []any:
			for _, e := range x {
				if em, ok := e.(map[string]any); ok {
					prune(em)
				}
			}
		}
	}
	return len(m) == 0
}
