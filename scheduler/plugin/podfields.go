package plugin

import (
	"encoding/json"
	"fmt"
	"sync"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
)

// podField is one part of a pod the engine decodes: podJSON sends it, SignPod signs it.
type podField struct {
	// path is where the engine's decoder reads it in the pod's JSON ("a.b[].c": c in every
	// element of the list a.b); the decoder reads everything under it.
	path string
	// copy copies the part from src into dst, the pod podJSON encodes (sharing src's maps and
	// lists, which it leaves as they are).
	copy func(dst, src *v1.Pod)
	// key names the part's signature fragment and sign computes its value; both are empty for
	// the parts that only name the pod (they change no decision, and would make every pod's
	// signature its own). A key of kube-scheduler's (fwk.*SignerName) comes with the value its
	// own plugins give it: the framework keeps one value per key.
	key  string
	sign func(*v1.Pod) (any, error)
}

// podFields is every part of a pod the engine decodes (codec/decoder_objects.cpp:
// Decoder::Impl::pod and what it calls), one entry a JSON path. podJSON sends these parts and
// nothing else; SignPod signs every one of them that can change the engine's decision on a node.
// A part the engine starts reading is added here, once: TestPodFieldsAreWhatTheEngineDecodes
// fails until it is.
var podFields = []podField{
	{path: "metadata.name", copy: func(d, s *v1.Pod) { d.Name = s.Name }},
	{path: "metadata.namespace", copy: func(d, s *v1.Pod) { d.Namespace = s.Namespace },
		// Part of the workload key (plugins::workloadKey), with the owner.
		key: "fleetsched.io/v1.Pod.Namespace", sign: value(func(p *v1.Pod) any { return p.Namespace })},
	{path: "metadata.uid", copy: func(d, s *v1.Pod) { d.UID = s.UID }},
	{path: "metadata.resourceVersion", copy: func(d, s *v1.Pod) { d.ResourceVersion = s.ResourceVersion }},
	{path: "metadata.labels", copy: func(d, s *v1.Pod) { d.Labels = s.Labels },
		key: fwk.LabelsSignerName, sign: value(func(p *v1.Pod) any { return p.Labels })},
	{path: "metadata.annotations", copy: func(d, s *v1.Pod) { d.Annotations = s.Annotations },
		key: "fleetsched.io/v1.Pod.Annotations", sign: value(func(p *v1.Pod) any { return p.Annotations })},
	{path: "metadata.ownerReferences", copy: func(d, s *v1.Pod) { d.OwnerReferences = s.OwnerReferences },
		key: "fleetsched.io/v1.Pod.OwnerReferences", sign: value(func(p *v1.Pod) any { return p.OwnerReferences })},
	{path: "metadata.deletionTimestamp", copy: func(d, s *v1.Pod) { d.DeletionTimestamp = s.DeletionTimestamp },
		// The engine reads whether it is set (terminating), not when.
		key: "fleetsched.io/v1.Pod.DeletionTimestamp.IsSet()", sign: value(func(p *v1.Pod) any { return p.DeletionTimestamp != nil })},

	// Each container's resources and restartPolicy (an init container with restartPolicy Always
	// is a sidecar: its requests add to the pod's instead of taking the max), in order.
	{path: "spec.initContainers[].resources",
		copy: func(d, s *v1.Pod) {
			cs := sized(&d.Spec.InitContainers, s.Spec.InitContainers)
			for i := range cs {
				cs[i].Resources = s.Spec.InitContainers[i].Resources
			}
		},
		key: "fleetsched.io/v1.Pod.Spec.InitContainers.Resources", sign: value(func(p *v1.Pod) any { return containerResources(p.Spec.InitContainers) })},
	{path: "spec.initContainers[].restartPolicy",
		copy: func(d, s *v1.Pod) {
			cs := sized(&d.Spec.InitContainers, s.Spec.InitContainers)
			for i := range cs {
				cs[i].RestartPolicy = s.Spec.InitContainers[i].RestartPolicy
			}
		},
		key: "fleetsched.io/v1.Pod.Spec.InitContainers.RestartPolicy", sign: value(func(p *v1.Pod) any { return restartPolicies(p.Spec.InitContainers) })},
	{path: "spec.containers[].resources",
		copy: func(d, s *v1.Pod) {
			cs := sized(&d.Spec.Containers, s.Spec.Containers)
			for i := range cs {
				cs[i].Resources = s.Spec.Containers[i].Resources
			}
		},
		key: "fleetsched.io/v1.Pod.Spec.Containers.Resources", sign: value(func(p *v1.Pod) any { return containerResources(p.Spec.Containers) })},
	{path: "spec.containers[].restartPolicy",
		copy: func(d, s *v1.Pod) {
			cs := sized(&d.Spec.Containers, s.Spec.Containers)
			for i := range cs {
				cs[i].RestartPolicy = s.Spec.Containers[i].RestartPolicy
			}
		},
		key: "fleetsched.io/v1.Pod.Spec.Containers.RestartPolicy", sign: value(func(p *v1.Pod) any { return restartPolicies(p.Spec.Containers) })},
	{path: "spec.overhead", copy: func(d, s *v1.Pod) { d.Spec.Overhead = s.Spec.Overhead },
		key: "fleetsched.io/v1.Pod.Spec.Overhead", sign: value(func(p *v1.Pod) any { return p.Spec.Overhead })},
	{path: "spec.resources", copy: func(d, s *v1.Pod) { d.Spec.Resources = s.Spec.Resources },
		key: "fleetsched.io/v1.Pod.Spec.Resources", sign: value(func(p *v1.Pod) any { return p.Spec.Resources })},

	// Unset for every pod kube-scheduler schedules, as it is pending and not deleted: signed all
	// the same, as every part of a pod that is more than its name.
	{path: "spec.nodeName", copy: func(d, s *v1.Pod) { d.Spec.NodeName = s.Spec.NodeName },
		key: fwk.NodeNameSignerName, sign: value(func(p *v1.Pod) any { return p.Spec.NodeName })},
	{path: "spec.schedulerName", copy: func(d, s *v1.Pod) { d.Spec.SchedulerName = s.Spec.SchedulerName },
		// The engine's profile (and workload labels) by name.
		key: fwk.SchedulerNameSignerName, sign: value(func(p *v1.Pod) any { return p.Spec.SchedulerName })},
	{path: "spec.priority", copy: func(d, s *v1.Pod) { d.Spec.Priority = s.Spec.Priority },
		key: "fleetsched.io/v1.Pod.Spec.Priority", sign: value(func(p *v1.Pod) any { return p.Spec.Priority })},
	{path: "spec.nodeSelector", copy: func(d, s *v1.Pod) { d.Spec.NodeSelector = s.Spec.NodeSelector },
		// The GPU plugin reads the allowed GPU models off it.
		key: fwk.NodeSelectorSignerName, sign: value(func(p *v1.Pod) any { return p.Spec.NodeSelector })},
	{path: "spec.affinity.nodeAffinity",
		copy: func(d, s *v1.Pod) {
			if s.Spec.Affinity != nil && s.Spec.Affinity.NodeAffinity != nil {
				d.Spec.Affinity = &v1.Affinity{NodeAffinity: s.Spec.Affinity.NodeAffinity}
			}
		},
		key: fwk.NodeAffinitySignerName, sign: fwk.NodeAffinitySigner},
	{path: "spec.tolerations", copy: func(d, s *v1.Pod) { d.Spec.Tolerations = s.Spec.Tolerations },
		key: fwk.TolerationsSignerName, sign: value(fwk.TolerationsSigner)},

	{path: "status.phase", copy: func(d, s *v1.Pod) { d.Status.Phase = s.Status.Phase },
		key: "fleetsched.io/v1.Pod.Status.Phase", sign: value(func(p *v1.Pod) any { return p.Status.Phase })},
	{path: "status.nominatedNodeName", copy: func(d, s *v1.Pod) { d.Status.NominatedNodeName = s.Status.NominatedNodeName },
		// The engine trusts a preemptor's nominated node when its verdict is "too few free".
		key: "fleetsched.io/v1.Pod.Status.NominatedNodeName", sign: value(func(p *v1.Pod) any { return p.Status.NominatedNodeName })},
}

// value is a sign that cannot fail.
func value(f func(*v1.Pod) any) func(*v1.Pod) (any, error) {
	return func(p *v1.Pod) (any, error) { return f(p), nil }
}

// sized makes *dst, a list of the pod podJSON encodes, as long as src and returns it: the first
// part of a container to be copied makes the list (of zero containers), each part fills its field in.
func sized(dst *[]v1.Container, src []v1.Container) []v1.Container {
	switch {
	case src == nil:
		*dst = nil
	case len(src) == 0:
		*dst = []v1.Container{}
	case len(*dst) == len(src):
	case cap(*dst) >= len(src):
		*dst = (*dst)[:len(src)]
		clear(*dst)
	default:
		*dst = make([]v1.Container, len(src))
	}
	return *dst
}

func containerResources(cs []v1.Container) []v1.ResourceRequirements {
	out := make([]v1.ResourceRequirements, len(cs))
	for i := range cs {
		out[i] = cs[i].Resources
	}
	return out
}

func restartPolicies(cs []v1.Container) []*v1.ContainerRestartPolicy {
	out := make([]*v1.ContainerRestartPolicy, len(cs))
	for i := range cs {
		out[i] = cs[i].RestartPolicy
	}
	return out
}

// podJSON is the pod as the engine gets it: the parts it decodes (podFields) and nothing else.
// Every pod is encoded here in PreFilter, serially in the scheduling cycle, and again on every
// update of a bound pod, and most of a workload pod's bytes are parts the engine never reads
// (managed fields, volumes, the containers' images, commands, environment, mounts and probes,
// the status's conditions and container statuses).
func podJSON(pod *v1.Pod) ([]byte, error) {
	slim := slimPods.Get().(*v1.Pod)
	for i := range podFields {
		podFields[i].copy(slim, pod)
	}
	b, err := json.Marshal(slim)
	// Back into the pool holding nothing of the pod, with its lists of containers (cleared)
	// for the next one.
	clear(slim.Spec.InitContainers)
	clear(slim.Spec.Containers)
	init, containers := slim.Spec.InitContainers[:0], slim.Spec.Containers[:0]
	*slim = v1.Pod{}
	slim.Spec.InitContainers, slim.Spec.Containers = init, containers
	slimPods.Put(slim)
	return b, err
}

// slimPods are podJSON's pods, with their containers: a v1.Pod is 1.2 KB, a container 0.4 KB.
var slimPods = sync.Pool{New: func() any { return new(v1.Pod) }}

// signPod is the pod's signature fragments: every signed part of podFields.
func signPod(pod *v1.Pod) ([]fwk.SignFragment, error) {
	out := make([]fwk.SignFragment, 0, len(podFields))
	for i := range podFields {
		f := &podFields[i]
		if f.sign == nil {
			continue
		}
		v, err := f.sign(pod)
		if err != nil {
			return nil, fmt.Errorf("%s: signing %s: %w", Name, f.path, err)
		}
		out = append(out, fwk.SignFragment{Key: f.key, Value: v})
	}
	return out, nil
}
