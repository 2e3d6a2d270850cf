//go:build tools

// Package tools keeps the etcd main package in the module graph so that
// `go mod tidy` records its dependencies in go.sum.
package tools

import _ "go.etcd.io/etcd/server/v3"
