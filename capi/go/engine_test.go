package capi

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

func node(name string, gpus string) []byte {
	return []byte(`{"metadata":{"name":"` + name + `","labels":{"nvidia.com/gpu.product":"Tesla-T4"}},` +
		`"status":{"allocatable":{"cpu":"8","memory":"32Gi","pods":"110","nvidia.com/gpu":"` + gpus + `"}}}`)
}

func pod(uid string, gpus string) []byte {
	return []byte(`{"metadata":{"name":"` + uid + `","namespace":"ml","uid":"` + uid + `"},"spec":{"containers":[` +
		`{"name":"c","resources":{"limits":{"nvidia.com/gpu":"` + gpus + `"}}}]}}`)
}

func TestEngineDecidesThroughTheABI(t *testing.T) {
	e, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for i, n := range []string{"a", "b", "c"} {
		if err := e.UpsertNode(node(n, []string{"1", "2", "4"}[i])); err != nil {
			t.Fatal(err)
		}
	}
	c, err := e.PreFilter(pod("p", "2"))
	if err != nil || c.Code != Success {
		t.Fatalf("prefilter: %v %v", c.Code, err)
	}
	set, names := e.NodeNames()
	if set != c.NameSet || len(names) != len(c.Verdict) {
		t.Fatalf("names %v (set %d) for %d verdicts (set %d)", names, set, len(c.Verdict), c.NameSet)
	}
	passed := map[string]bool{}
	for id, v := range c.Verdict {
		if v == Pass {
			passed[names[id]] = true
		} else if v != Hole {
			code, reason := e.Reason(v)
			if code == Success || reason == "" {
				t.Errorf("node %s: failure %d has code %d reason %q", names[id], v, code, reason)
			}
		}
	}
	if len(passed) != 2 || passed["a"] || c.Feasible != 2 {
		t.Fatalf("passed %v, feasible %d", passed, c.Feasible)
	}
	before := time.Now().UnixNano()
	annotations, code, reason := e.Reserve(pod("p", "2"), "b")
	after := time.Now().UnixNano()
	if code != Success || len(annotations) != 2 || annotations["fleetsched.io/gpu-index"] != "0-1" {
		t.Fatalf("reserve: %q %d %s", annotations, code, reason)
	}
	// Wall-clock nanoseconds, as the extender's bind writes them.
	if at, err := strconv.ParseInt(annotations["fleetsched.io/assume-time"], 10, 64); err != nil || at < before || at > after {
		t.Fatalf("assume-time %q not between %d and %d", annotations["fleetsched.io/assume-time"], before, after)
	}
	if _, code, reason = e.Reserve(pod("q", "1"), "b"); code != Unschedulable || !strings.Contains(reason, "b") {
		t.Fatalf("reserve on a full node: %d %q", code, reason)
	}
	// Each node's charged pods, as the snapshot holds them: the reservation on b.
	c, err = e.PreFilter(pod("r", "1"))
	if err != nil || len(c.Pods) != len(names) {
		t.Fatalf("prefilter: %d pod counts for %d nodes, %v", len(c.Pods), len(names), err)
	}
	for id, name := range names {
		if want := map[bool]uint16{true: 1}[name == "b"]; c.Pods[id] != want {
			t.Errorf("node %s: %d pods charged, want %d", name, c.Pods[id], want)
		}
	}
	e.Unreserve("p")
	if s := e.Stats(); s.Nodes != 3 || s.ReservationsLive != 0 {
		t.Fatalf("stats %+v", s)
	}
}

func TestEngineRefusesWhatItCannotRead(t *testing.T) {
	if _, err := New([]byte("profiles: [")); err == nil {
		t.Fatal("a broken configuration was accepted")
	}
	e, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for _, bad := range []string{"", "{", `{"metadata":{"name":7}}`, "\x00\xff"} {
		if e.UpsertNode([]byte(bad)) == nil || e.UpsertPod([]byte(bad)) == nil {
			t.Errorf("%q accepted", bad)
		}
		if _, err := e.PreFilter([]byte(bad)); err == nil {
			t.Errorf("prefilter of %q accepted", bad)
		}
	}
	if err := e.UpsertNode(node("a", "1")); err != nil {
		t.Fatal(err)
	}
	if c, err := e.PreFilter(pod("p", "1")); err != nil || c.Feasible != 1 {
		t.Fatalf("after bad input: %+v %v", c, err)
	}
}
