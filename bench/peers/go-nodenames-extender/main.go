// go-nodenames-extender is the seed extender's logic for nodeCacheCapable: true, where
// kube-scheduler sends only NodeNames. It loads the nodes once at start from a
// `kubectl get nodes -o json` file (the same file fleetsched serve --nodes reads), decoded with
// encoding/json, and keeps a name → (has GPU, per-GPU memory) map:
//
//   - filter keeps named nodes with allocatable nvidia.com/gpu > 0; the rest get
//     "Node does not have GPU" (unknown names: "node not found");
//   - prioritize scores by gpu.nvidia.com/memory, scaled so the largest in the request is 10.
//
// Routes: POST {prefix}/filter and {prefix}/prioritize, like fleetsched serve.
package main

import (
	"encoding/json"
	"flag"
	"log"
	"net/http"
	"os"
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

type nodeInfo struct {
	hasGPU    bool
	gpuMemory int64
}

type extender struct {
	nodes map[string]nodeInfo // read-only after start
}

func reply(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(v); err != nil {
		log.Printf("write reply: %v", err)
	}
}

func loadNodes(path string) (map[string]nodeInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var list v1.NodeList
	if err := json.NewDecoder(f).Decode(&list); err != nil {
		return nil, err
	}
	nodes := make(map[string]nodeInfo, len(list.Items))
	zero := resource.Quantity{}
	for i := range list.Items {
		n := &list.Items[i]
		info := nodeInfo{}
		if q, ok := n.Status.Allocatable[gpuResource]; ok && q.Cmp(zero) > 0 {
			info.hasGPU = true
		}
		if m, err := strconv.ParseInt(n.Labels[gpuMemoryLabel], 10, 64); err == nil {
			info.gpuMemory = m
		}
		nodes[n.Name] = info
	}
	return nodes, nil
}

func (e *extender) filter(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	var args extenderv1.ExtenderArgs
	if err := json.NewDecoder(r.Body).Decode(&args); err != nil {
		reply(w, &extenderv1.ExtenderFilterResult{Error: err.Error()})
		return
	}
	if args.NodeNames == nil {
		reply(w, &extenderv1.ExtenderFilterResult{Error: "this extender needs nodeCacheCapable: true (NodeNames)"})
		return
	}
	keep := make([]string, 0, len(*args.NodeNames))
	result := &extenderv1.ExtenderFilterResult{FailedNodes: extenderv1.FailedNodesMap{}}
	for _, name := range *args.NodeNames {
		info, ok := e.nodes[name]
		switch {
		case !ok:
			result.FailedNodes[name] = "node not found"
		case !info.hasGPU:
			result.FailedNodes[name] = "Node does not have GPU"
		default:
			keep = append(keep, name)
		}
	}
	result.NodeNames = &keep
	reply(w, result)
}

func (e *extender) prioritize(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	var args extenderv1.ExtenderArgs
	if err := json.NewDecoder(r.Body).Decode(&args); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	out := extenderv1.HostPriorityList{}
	if args.NodeNames == nil {
		reply(w, &out)
		return
	}
	var maxMemory int64
	for _, name := range *args.NodeNames {
		if m := e.nodes[name].gpuMemory; m > maxMemory {
			maxMemory = m
		}
	}
	for _, name := range *args.NodeNames {
		var score int64
		if maxMemory > 0 {
			score = e.nodes[name].gpuMemory * extenderv1.MaxExtenderPriority / maxMemory
		}
		out = append(out, extenderv1.HostPriority{Host: name, Score: score})
	}
	reply(w, &out)
}

func main() {
	listen := flag.String("listen", "127.0.0.1:8890", "address to listen on")
	prefix := flag.String("url-prefix", "", "URL prefix of the verbs (routes are PREFIX/filter, PREFIX/prioritize)")
	nodesFile := flag.String("nodes", "", "nodes list file (kubectl get nodes -o json)")
	flag.Parse()
	if *nodesFile == "" {
		log.Fatal("--nodes is required")
	}
	nodes, err := loadNodes(*nodesFile)
	if err != nil {
		log.Fatalf("load %s: %v", *nodesFile, err)
	}
	e := &extender{nodes: nodes}
	p := strings.TrimRight(*prefix, "/")
	router := httprouter.New()
	router.POST(p+"/filter", e.filter)
	router.POST(p+"/prioritize", e.prioritize)
	router.GET("/healthz", func(w http.ResponseWriter, _ *http.Request, _ httprouter.Params) { _, _ = w.Write([]byte("ok")) })
	log.Printf("go-nodenames-extender: %d nodes, listening on %s", len(nodes), *listen)
	log.Fatal(http.ListenAndServe(*listen, router))
}
