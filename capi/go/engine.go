// Package capi is the Go side of fleetsched's C ABI (../fleetsched.h): the engine's decisions,
// called in-process. It copies what it passes and copies what it gets back, so nothing crosses
// the boundary by reference and Go's pointer rules hold; every C function catches C++ exceptions,
// so a failure is an error here and never a crash of the calling process.
//
// Link: the C++ archive (libfleetsched_capi.a from meson's build dir, capi/) plus the system
// libraries below; the caller supplies the archive's directory through CGO_LDFLAGS=-L<dir>
// (scripts/build-scheduler.sh does).
package capi

/*
#cgo CFLAGS: -I${SRCDIR}/..
#cgo LDFLAGS: -lfleetsched_capi -lsimdjson -lyaml-cpp -lstdc++ -lm -lpthread
#include <stdlib.h>
#include "fleetsched.h"
*/
import "C"

import (
	"errors"
	"runtime"
	"strings"
	"unsafe"
)

// Code is a scheduling framework status code (fwk.Code's numbering).
type Code int32

const (
	Success                      Code = C.FS_SUCCESS
	Error                        Code = C.FS_ERROR
	Unschedulable                Code = C.FS_UNSCHEDULABLE
	UnschedulableAndUnresolvable Code = C.FS_UNSCHEDULABLE_AND_UNRESOLVABLE
)

// Verdict bytes of PreFilter: Pass, Hole (no node has that id), or a failure number for Reason.
const (
	Pass byte = 0
	Hole byte = 255
)

const errCap = 1024

// Engine is one fleetsched engine: a configuration and the node/pod cache fed through it.
type Engine struct {
	p *C.fs_engine
}

func bytesPtr(b []byte) *C.char {
	if len(b) == 0 {
		return nil
	}
	return (*C.char)(unsafe.Pointer(unsafe.SliceData(b)))
}

func strPtr(s string) *C.char {
	if len(s) == 0 {
		return nil
	}
	return (*C.char)(unsafe.Pointer(unsafe.StringData(s)))
}

func errText(buf []byte) string {
	if i := strings.IndexByte(string(buf), 0); i >= 0 {
		return string(buf[:i])
	}
	return string(buf)
}

// New validates config (a FleetschedConfiguration as YAML or JSON; empty: the default profile)
// with the messages `fleetsched serve --config` gives, and returns an engine with an empty cache.
func New(config []byte) (*Engine, error) {
	errBuf := make([]byte, errCap)
	p := C.fs_engine_new(bytesPtr(config), C.size_t(len(config)), (*C.char)(unsafe.Pointer(&errBuf[0])), errCap)
	runtime.KeepAlive(config)
	if p == nil {
		return nil, errors.New(errText(errBuf))
	}
	return &Engine{p: p}, nil
}

// Close frees the engine; it must not be used afterwards.
func (e *Engine) Close() {
	if e.p != nil {
		C.fs_engine_free(e.p)
		e.p = nil
	}
}

// UpsertNode adds or replaces a node (a v1.Node as JSON).
func (e *Engine) UpsertNode(node []byte) error {
	errBuf := make([]byte, errCap)
	rc := C.fs_node_upsert(e.p, bytesPtr(node), C.size_t(len(node)), (*C.char)(unsafe.Pointer(&errBuf[0])), errCap)
	runtime.KeepAlive(node)
	if rc != 0 {
		return errors.New(errText(errBuf))
	}
	return nil
}

// DeleteNode removes the node called name (no-op when unknown).
func (e *Engine) DeleteNode(name string) {
	C.fs_node_delete(e.p, strPtr(name), C.size_t(len(name)))
	runtime.KeepAlive(name)
}

// UpsertPod adds or replaces a pod (a v1.Pod as JSON); pods bound to a node are charged there.
func (e *Engine) UpsertPod(pod []byte) error {
	errBuf := make([]byte, errCap)
	rc := C.fs_pod_upsert(e.p, bytesPtr(pod), C.size_t(len(pod)), (*C.char)(unsafe.Pointer(&errBuf[0])), errCap)
	runtime.KeepAlive(pod)
	if rc != 0 {
		return errors.New(errText(errBuf))
	}
	return nil
}

// DeletePod removes the pod with this UID and what it held.
func (e *Engine) DeletePod(uid string) {
	C.fs_pod_delete(e.p, strPtr(uid), C.size_t(len(uid)))
	runtime.KeepAlive(uid)
}

// Cycle is what PreFilter decided for one pod.
type Cycle struct {
	Token    uint64   // for Score and FilterNode
	Code     Code     // Success, or the pod fits no node: Reason(0) says why
	NameSet  uint64   // the id -> name map Verdict uses (NodeNames)
	Verdict  []byte   // per node id: Pass, Hole or a failure number
	Pods     []uint16 // per node id: the pods the snapshot charges there (bound and reserved)
	Feasible int      // nodes that passed
}

// PreFilter starts the pod's scheduling cycle and decides every node once.
func (e *Engine) PreFilter(pod []byte) (Cycle, error) {
	errBuf := make([]byte, errCap)
	var verdict []byte
	var pods []uint16
	for {
		var r C.fs_prefilter_result
		rc := C.fs_prefilter(e.p, bytesPtr(pod), C.size_t(len(pod)), (*C.uint8_t)(unsafe.SliceData(verdict)),
			(*C.uint16_t)(unsafe.SliceData(pods)), C.size_t(len(verdict)), &r, (*C.char)(unsafe.Pointer(&errBuf[0])), errCap)
		runtime.KeepAlive(pod)
		runtime.KeepAlive(verdict)
		runtime.KeepAlive(pods)
		if rc != 0 {
			return Cycle{}, errors.New(errText(errBuf))
		}
		c := Cycle{Token: uint64(r.cycle), Code: Code(r.code), NameSet: uint64(r.name_set), Feasible: int(r.feasible)}
		if c.Code != Success {
			return c, nil
		}
		if int(r.id_limit) <= len(verdict) {
			c.Verdict, c.Pods = verdict[:r.id_limit], pods[:r.id_limit]
			return c, nil
		}
		n := int(r.id_limit) + int(r.id_limit)/4 + 64
		verdict, pods = make([]byte, n), make([]uint16, n)
	}
}

// Reason is failure k of the last PreFilter (0: the failure that rejects every node).
func (e *Engine) Reason(k byte) (Code, string) {
	buf := make([]byte, errCap)
	var n C.size_t
	code := C.fs_reason(e.p, C.uint32_t(k), (*C.char)(unsafe.Pointer(&buf[0])), errCap, &n)
	return Code(code), string(buf[:n])
}

// NodeNames returns the id -> name map of the current cycle's snapshot ("" for holes) and its
// name set.
func (e *Engine) NodeNames() (uint64, []string) {
	buf := make([]byte, 64<<10)
	for {
		var set C.uint64_t
		var count C.uint32_t
		var n C.size_t
		need := C.fs_node_names(e.p, (*C.char)(unsafe.Pointer(&buf[0])), C.size_t(len(buf)), &set, &count, &n)
		if need != 0 {
			buf = make([]byte, int(need)*2)
			continue
		}
		names := make([]string, 0, int(count))
		for _, name := range strings.Split(string(buf[:n]), "\x00") {
			if len(names) < int(count) {
				names = append(names, name)
			}
		}
		return uint64(set), names
	}
}

// Score writes the 0..100 score of each node id into out (len(out) == len(ids)).
func (e *Engine) Score(token uint64, pod []byte, ids []uint32, out []int64) error {
	if len(ids) == 0 {
		return nil
	}
	errBuf := make([]byte, errCap)
	rc := C.fs_score(e.p, C.uint64_t(token), bytesPtr(pod), C.size_t(len(pod)), (*C.uint32_t)(unsafe.SliceData(ids)),
		C.size_t(len(ids)), (*C.int64_t)(unsafe.SliceData(out)), (*C.char)(unsafe.Pointer(&errBuf[0])), errCap)
	runtime.KeepAlive(pod)
	runtime.KeepAlive(ids)
	runtime.KeepAlive(out)
	if rc != 0 {
		return errors.New(errText(errBuf))
	}
	return nil
}

// FilterNode decides node, as the engine holds it now, for the cycle's pod as if the pods with
// UIDs `removed` had left it and the pods `added` (JSON) were bound to it.
func (e *Engine) FilterNode(token uint64, pod []byte, node string, removed []string, added [][]byte) (Code, string) {
	var rm, add []byte
	for _, uid := range removed {
		rm = append(append(rm, uid...), 0)
	}
	for _, p := range added {
		add = append(append(add, p...), 0)
	}
	errBuf := make([]byte, errCap)
	code := C.fs_filter_node(e.p, C.uint64_t(token), bytesPtr(pod), C.size_t(len(pod)), strPtr(node), C.size_t(len(node)),
		bytesPtr(rm), C.size_t(len(rm)), bytesPtr(add), C.size_t(len(add)), (*C.char)(unsafe.Pointer(&errBuf[0])), errCap)
	runtime.KeepAlive(pod)
	runtime.KeepAlive(node)
	runtime.KeepAlive(rm)
	runtime.KeepAlive(add)
	return Code(code), errText(errBuf)
}

// Reserve picks the pod's GPUs on node and charges them; annotations is what the pod's Binding
// must carry, exactly as the extender's bind posts it (empty: the device plugin chooses, and the
// default binder may bind).
func (e *Engine) Reserve(pod []byte, node string) (annotations map[string]string, code Code, reason string) {
	buf := make([]byte, C.FS_BINDING_ANNOTATIONS_MAX)
	var n C.size_t
	errBuf := make([]byte, errCap)
	rc := C.fs_reserve(e.p, bytesPtr(pod), C.size_t(len(pod)), strPtr(node), C.size_t(len(node)),
		(*C.char)(unsafe.Pointer(&buf[0])), C.size_t(len(buf)), &n, (*C.char)(unsafe.Pointer(&errBuf[0])), errCap)
	runtime.KeepAlive(pod)
	runtime.KeepAlive(node)
	if fields := strings.Split(string(buf[:n]), "\x00"); n > 0 {
		annotations = make(map[string]string, len(fields)/2)
		for i := 0; i+1 < len(fields); i += 2 {
			annotations[fields[i]] = fields[i+1]
		}
	}
	return annotations, Code(rc), errText(errBuf)
}

// Unreserve releases what Reserve charged for the pod.
func (e *Engine) Unreserve(uid string) {
	C.fs_unreserve(e.p, strPtr(uid), C.size_t(len(uid)))
	runtime.KeepAlive(uid)
}

// Stats is what the cache holds.
type Stats struct {
	Nodes, BoundPods, ReservationsLive, GpuOvercommits uint64
	GpusTotal, GpusFree                                uint64 // summed over the nodes
}

func (e *Engine) Stats() Stats {
	var s C.fs_stats
	C.fs_engine_stats(e.p, &s)
	return Stats{uint64(s.nodes), uint64(s.bound_pods), uint64(s.reservations_live), uint64(s.gpu_overcommits),
		uint64(s.gpus_total), uint64(s.gpus_free)}
}

// Signable tells whether the pod's decision on a node depends on that node alone (see
// fs_signable): kube-scheduler may then reuse it for the next pod with the same signature.
func (e *Engine) Signable(pod []byte) bool {
	ok := C.fs_signable(e.p, bytesPtr(pod), C.size_t(len(pod)))
	runtime.KeepAlive(pod)
	return ok == 1
}
