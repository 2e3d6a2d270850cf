//go:build schedulerperf

package perf

// The extender configuration: kube-scheduler (the harness's, in this process) calls
// `fleetsched serve` over HTTP, as deploy/kubernetes/sidecar.yaml runs it. fleetsched is a
// separate process that keeps its own cache of nodes and pods (NodeNames mode), so it has to
// watch the API server that the harness starts in this process, on a port and with credentials
// that exist only once the test case runs.
//
// The bridge is an out-of-tree registry entry, FleetschedServe. A scheduler config that wants
// fleetsched enables it in its profile next to the extender stanza
// (scheduler-config-extender.yaml). Its factory runs inside scheduler.New, before the harness
// starts the scheduler or creates any object, and receives the framework handle, which offers
// the two things needed:
//
//   - KubeConfig(): the harness's rest.Config for its kube-apiserver (the loopback client:
//     https, a bearer token, the loopback CA and its server name), written out as a
//     kubeconfig for `fleetsched serve --kubeconfig`;
//   - Extenders(): the extenders kube-scheduler was configured with; the one extender's
//     urlPrefix (http://127.0.0.1:PORT[/PREFIX]) is where fleetsched listens, so the
//     scheduler config is the single place that names the port.
//
// The factory starts fleetsched (FLEETSCHED_BIN, default the meson build's binary) and waits
// for its /readyz, which answers 200 once the initial lists of nodes and pods are in its
// cache. The plugin itself implements no extension point: the framework never calls it, so
// the profile schedules exactly as kube-scheduler's default one does.
//
// Nodes are created after that, and fleetsched learns of them from its watch, which runs at
// idle CPU priority by default and can lag while the test process fills the machine. Two
// checks keep the numbers honest: after the createNodes op (the harness's node-update hook)
// the benchmark waits until fleetsched's cache holds every node, before the first pod exists;
// and at the end of the workload fleetsched must never have been asked about a node it did
// not know (fleetsched_unknown_nodes_total 0). At the end, fleetsched's /metrics is saved as
// fleetsched-metrics.txt beside the data items (-data-items-dir) and the process is stopped.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	v1 "k8s.io/api/core/v1"
	apiruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler"
	scheduler_perf "k8s.io/kubernetes/test/integration/scheduler_perf"
	"k8s.io/kubernetes/test/utils/ktesting"
)

// serveName is the registry entry that starts fleetsched for the extender stanza.
const serveName = "FleetschedServe"

// How long fleetsched may take to answer /readyz after it starts, and to hold every node the
// harness created.
const (
	readyTimeout = time.Minute
	syncTimeout  = 2 * time.Minute
)

// serveOnly is the registry entry's plugin: a name and no extension point.
type serveOnly struct{}

func (serveOnly) Name() string { return serveName }

// fleetschedProcess is one `fleetsched serve` started for a test case.
type fleetschedProcess struct {
	base   string // http://HOST:PORT: its /readyz and /metrics
	dir    string // kubeconfig (and its log when there is no data-items dir)
	logTo  string
	cmd    *exec.Cmd
	exited chan struct{} // closed once the process has exited
	err    error         // Wait's result, set before exited closes
	once   sync.Once
}

var (
	servedMu sync.Mutex
	served   *fleetschedProcess // the current test case's fleetsched; nil for stock and plugin cases
)

func current() *fleetschedProcess {
	servedMu.Lock()
	defer servedMu.Unlock()
	return served
}

// newServe is FleetschedServe's factory: it starts fleetsched for the profile's extender and
// stops it when the scheduler's context ends (or earlier, at the test case's cleanup).
func newServe(ctx context.Context, _ apiruntime.Object, h fwk.Handle) (fwk.Plugin, error) {
	var urls []string
	var binder bool
	for _, e := range h.Extenders() {
		urls = append(urls, e.Name()) // an HTTP extender's name is its urlPrefix
		binder = e.IsBinder()
	}
	if len(urls) != 1 {
		return nil, fmt.Errorf("%s needs exactly one extender in the scheduler config, found %d", serveName, len(urls))
	}
	u, err := url.Parse(urls[0])
	if err != nil || u.Scheme != "http" || u.Port() == "" {
		return nil, fmt.Errorf("%s: extender urlPrefix %q is not http://HOST:PORT[/PREFIX]", serveName, urls[0])
	}
	cfg := h.KubeConfig()
	if cfg == nil {
		return nil, fmt.Errorf("%s: the framework handle has no kubeconfig", serveName)
	}
	dir, err := os.MkdirTemp("", "fleetsched-serve-")
	if err != nil {
		return nil, err
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := writeKubeconfig(cfg, kubeconfig); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("%s: %w", serveName, err)
	}

	bin := os.Getenv("FLEETSCHED_BIN")
	if bin == "" {
		// The package folder is the working directory (the config's template paths need it).
		bin = filepath.Join("..", "..", "build", "cmd", "fleetsched", "fleetsched")
	}
	args := []string{"serve", "--kubeconfig", kubeconfig, "--listen", u.Host,
		// the benchmark stops it once every pod is bound: nothing in flight to wait for
		"--shutdown-grace", "1"}
	if prefix := strings.TrimSuffix(u.Path, "/"); prefix != "" {
		args = append(args, "--url-prefix", prefix)
	}
	if binder {
		args = append(args, "--bind")
	}
	logTo := filepath.Join(dir, "fleetsched.log")
	if d := dataItemsDir(); d != "" {
		logTo = filepath.Join(d, "fleetsched.log")
	}
	logFile, err := os.Create(logTo)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Not outlive the test binary when it is killed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	p := &fleetschedProcess{base: "http://" + u.Host, dir: dir, logTo: logTo, cmd: cmd, exited: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		// Pdeathsig fires when the thread that forked exits, not the process: this goroutine
		// keeps that thread to itself until fleetsched has exited.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		p.err = cmd.Wait()
		logFile.Close()
		close(p.exited)
	}()
	if err := <-started; err != nil {
		logFile.Close()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("%s: starting %s (set FLEETSCHED_BIN): %w", serveName, bin, err)
	}
	if err := p.waitReady(ctx); err != nil {
		p.stop()
		return nil, fmt.Errorf("%s: %w", serveName, err)
	}
	servedMu.Lock()
	served = p
	servedMu.Unlock()
	go func() {
		<-ctx.Done()
		p.stop()
	}()
	return serveOnly{}, nil
}

// writeKubeconfig writes what fleetsched's kubeconfig loader reads (apiclient/kube_config.cpp:
// server, CA, tls-server-name, insecure-skip-tls-verify, token or token file, client
// certificate and key) for the harness's rest.Config, and refuses what it cannot express.
func writeKubeconfig(cfg *rest.Config, path string) error {
	if cfg.ExecProvider != nil || cfg.AuthProvider != nil || cfg.Username != "" || cfg.Password != "" ||
		cfg.Impersonate.UserName != "" {
		return errors.New("the harness's rest.Config authenticates in a way the written kubeconfig does not carry")
	}
	host := cfg.Host
	if !strings.Contains(host, "://") {
		host = "https://" + host
	}
	c := clientcmdapi.NewConfig()
	c.Clusters["harness"] = &clientcmdapi.Cluster{
		Server:                   host + cfg.APIPath,
		CertificateAuthority:     cfg.CAFile,
		CertificateAuthorityData: cfg.CAData,
		TLSServerName:            cfg.ServerName,
		InsecureSkipTLSVerify:    cfg.Insecure,
	}
	c.AuthInfos["harness"] = &clientcmdapi.AuthInfo{
		Token:                 cfg.BearerToken,
		TokenFile:             cfg.BearerTokenFile,
		ClientCertificate:     cfg.CertFile,
		ClientCertificateData: cfg.CertData,
		ClientKey:             cfg.KeyFile,
		ClientKeyData:         cfg.KeyData,
	}
	c.Contexts["harness"] = &clientcmdapi.Context{Cluster: "harness", AuthInfo: "harness"}
	c.CurrentContext = "harness"
	return clientcmd.WriteToFile(*c, path)
}

var httpClient = &http.Client{Timeout: 5 * time.Second}

func (p *fleetschedProcess) get(path string) ([]byte, int, error) {
	resp, err := httpClient.Get(p.base + path)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return body, resp.StatusCode, err
}

func (p *fleetschedProcess) exitedErr() error {
	select {
	case <-p.exited:
		return fmt.Errorf("fleetsched exited (%v) before it was ready; its log, %s:\n%s", p.err, p.logTo, tail(p.logTo))
	default:
		return nil
	}
}

// waitReady waits for /readyz 200: its listener is up and its initial lists are in the cache.
func (p *fleetschedProcess) waitReady(ctx context.Context) error {
	deadline := time.Now().Add(readyTimeout)
	for {
		if err := p.exitedErr(); err != nil {
			return err
		}
		if _, code, err := p.get("/readyz"); err == nil && code == http.StatusOK {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("fleetsched's %s/readyz not 200 after %v; its log, %s:\n%s", p.base, readyTimeout, p.logTo, tail(p.logTo))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// metric sums the samples of one metric in fleetsched's /metrics (labels ignored).
func (p *fleetschedProcess) metric(name string) (float64, []byte, error) {
	body, code, err := p.get("/metrics")
	if err != nil {
		return 0, nil, err
	}
	if code != http.StatusOK {
		return 0, nil, fmt.Errorf("fleetsched /metrics: HTTP %d", code)
	}
	var sum float64
	found := false
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name) {
			continue
		}
		rest := line[len(name):]
		if rest == "" || (rest[0] != ' ' && rest[0] != '{') {
			continue // a longer name with this one as its prefix
		}
		fields := strings.Fields(rest[strings.LastIndexByte(rest, '}')+1:])
		if len(fields) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			return 0, nil, fmt.Errorf("fleetsched /metrics: %q: %w", line, err)
		}
		sum += v
		found = true
	}
	if !found {
		return 0, nil, fmt.Errorf("fleetsched /metrics has no %s", name)
	}
	return sum, body, nil
}

// stop sends SIGTERM (SIGKILL after 10 s) and removes the kubeconfig; once.
func (p *fleetschedProcess) stop() {
	p.once.Do(func() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(10 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
		os.RemoveAll(p.dir)
		servedMu.Lock()
		if served == p {
			served = nil
		}
		servedMu.Unlock()
	})
}

// waitForNodes is the harness's node-update hook (after each createNodes op): with fleetsched
// running, it waits until fleetsched's cache holds every node the API server has, before any
// pod of the workload is created.
func waitForNodes(tCtx ktesting.TContext, _ *scheduler.Scheduler, _ *scheduler_perf.Workload, nodes *v1.NodeList) error {
	p := current()
	if p == nil {
		return nil
	}
	want := float64(len(nodes.Items))
	start := time.Now()
	for {
		got, _, err := p.metric("fleetsched_cache_nodes")
		if err != nil {
			return err
		}
		if got == want {
			tCtx.Logf("fleetsched holds all %d nodes %v after they were created", len(nodes.Items), time.Since(start).Round(time.Millisecond))
			return nil
		}
		if time.Since(start) > syncTimeout {
			return fmt.Errorf("fleetsched holds %v nodes, the API server %v, after %v", got, want, syncTimeout)
		}
		select {
		case <-tCtx.Done():
			return tCtx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// checkServe runs before each workload: with fleetsched running it registers the end-of-workload
// check (no unknown node asked about), keeps its /metrics and stops it. Cleanups run last in,
// first out, so this runs before the harness cancels the scheduler and stops the API server.
func checkServe(tCtx ktesting.TContext) error {
	p := current()
	if p == nil {
		return nil
	}
	if err := p.exitedErr(); err != nil {
		return err
	}
	tCtx.Cleanup(func() {
		defer p.stop()
		unknown, body, err := p.metric("fleetsched_unknown_nodes_total")
		if err != nil {
			tCtx.Errorf("%s: %v", serveName, err)
			return
		}
		if d := dataItemsDir(); d != "" {
			if err := os.WriteFile(filepath.Join(d, "fleetsched-metrics.txt"), body, 0o644); err != nil {
				tCtx.Errorf("%s: %v", serveName, err)
			}
		}
		if unknown != 0 {
			tCtx.Errorf("%s: kube-scheduler asked fleetsched about %v node names its cache did not hold", serveName, unknown)
		}
	})
	return nil
}

// dataItemsDir is scheduler_perf's -data-items-dir ("" when unset).
func dataItemsDir() string {
	if f := flag.Lookup("data-items-dir"); f != nil {
		return f.Value.String()
	}
	return ""
}

// tail is the last lines of a log file, for an error message.
func tail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	return strings.Join(lines, "\n")
}
