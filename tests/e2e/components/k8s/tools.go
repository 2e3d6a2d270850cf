//go:build tools

// Package tools keeps the component main packages in the module graph so that
// `go mod tidy` records every dependency they need in go.sum.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
