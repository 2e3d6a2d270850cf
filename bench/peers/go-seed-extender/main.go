// go-seed-extender is the performance baseline fleetsched is measured against: the seed
// project's Go scheduler extender (nodeCacheCapable: false, so kube-scheduler sends full Node
// objects) ported to k8s.io/kube-scheduler/extender/v1. It decodes with encoding/json and
// answers with json.NewEncoder, as such extenders do; the logic is deliberately the seed's:
//
//   - filter keeps nodes whose allocatable nvidia.com/gpu is > 0 and rejects the rest with
//     "Node does not have GPU";
//   - prioritize scores each node by its per-GPU memory label gpu.nvidia.com/memory, scaled so
//     the largest memory in the request scores 10.
//
// Routes: POST {prefix}/filter and {prefix}/prioritize, like fleetsched serve.
package main

import (
	"encoding/json"
	"flag"
	"log"
	"net/http"
	"strconv"
	"strings"

	"github.com/julienschmidt/httprouter"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"
)

const (
	gpuResource    = v1.ResourceName("nvidia.com/gpu")
	gpuMemoryLabel = "gpu.nvidia.com/memory"
)

func reply(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(v); err != nil {
		log.Printf("write reply: %v", err)
	}
}

func hasGPU(node *v1.Node) bool {
	q, ok := node.Status.Allocatable[gpuResource]
	if !ok {
		return false
	}
	zero := resource.Quantity{}
	return q.Cmp(zero) > 0
}

func gpuMemory(node *v1.Node) int64 {
	m, err := strconv.ParseInt(node.Labels[gpuMemoryLabel], 10, 64)
	if err != nil {
		return 0
	}
	return m
}

func filter(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	var args extenderv1.ExtenderArgs
	if err := json.NewDecoder(r.Body).Decode(&args); err != nil {
		reply(w, &extenderv1.ExtenderFilterResult{Error: err.Error()})
		return
	}
	if args.Nodes == nil {
		reply(w, &extenderv1.ExtenderFilterResult{Error: "this extender needs nodeCacheCapable: false (full Nodes)"})
		return
	}
	result := &extenderv1.ExtenderFilterResult{
		Nodes:       &v1.NodeList{},
		FailedNodes: extenderv1.FailedNodesMap{},
	}
	for i := range args.Nodes.Items {
		node := &args.Nodes.Items[i]
		if hasGPU(node) {
			result.Nodes.Items = append(result.Nodes.Items, *node)
		} else {
			result.FailedNodes[node.Name] = "Node does not have GPU"
		}
	}
	reply(w, result)
}

func prioritize(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	var args extenderv1.ExtenderArgs
	if err := json.NewDecoder(r.Body).Decode(&args); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	out := extenderv1.HostPriorityList{}
	if args.Nodes == nil {
		reply(w, &out)
		return
	}
	var maxMemory int64
	for i := range args.Nodes.Items {
		if m := gpuMemory(&args.Nodes.Items[i]); m > maxMemory {
			maxMemory = m
		}
	}
	for i := range args.Nodes.Items {
		node := &args.Nodes.Items[i]
		var score int64
		if maxMemory > 0 {
			score = gpuMemory(node) * extenderv1.MaxExtenderPriority / maxMemory
		}
		out = append(out, extenderv1.HostPriority{Host: node.Name, Score: score})
	}
	reply(w, &out)
}

func main() {
	listen := flag.String("listen", "127.0.0.1:8889", "address to listen on")
	prefix := flag.String("url-prefix", "", "URL prefix of the verbs (routes are PREFIX/filter, PREFIX/prioritize)")
	flag.Parse()
	p := strings.TrimRight(*prefix, "/")
	router := httprouter.New()
	router.POST(p+"/filter", filter)
	router.POST(p+"/prioritize", prioritize)
	router.GET("/healthz", func(w http.ResponseWriter, _ *http.Request, _ httprouter.Params) { _, _ = w.Write([]byte("ok")) })
	log.Printf("go-seed-extender listening on %s", *listen)
	log.Fatal(http.ListenAndServe(*listen, router))
}
