// noop-extender: the do-nothing scheduler extender bench_throughput_bench measures the product
// against (issue 24), written the way extenders usually are: Go, net/http and encoding/json, a
// goroutine per connection, the request decoded whole into typed structs.
//
//   - /filter answers every node it was given (nodeCacheCapable: NodeNames in, NodeNames out);
//   - /prioritize answers a score of 0 per node;
//   - /bind POSTs the Binding to kube-apiserver and answers when the API server has (one HTTP/2
//     connection with a bearer token, as client-go talks to it), within the request's context;
//   - /metrics: requests by verb and code, and the time to answer each verb as a histogram with
//     the buckets of capacity-extender's capacity_extender_request_duration_seconds
//     (extender/metrics.h), so both read the same way;
//   - /healthz;
//   - with --watch-pods json|protobuf, also a watch of every pod in that encoding, its events
//     discarded: what a watching extender asks of kube-apiserver, without decoding it (the
//     benchmark measures the API server's side of a JSON against a protobuf watch).
//
// No cache, no watches, no quotas: the floor an extender with these verbs cannot go below. Only
// the standard library, so that Debian's golang builds it offline (bench.sh, GOPROXY=off).
//
// The Pod is decoded into the fields a quota extender reads (metadata, the containers'
// requests, priority, node selection); a client-go extender decoding the whole v1.Pod allocates
// more, so this baseline is if anything cheaper than the usual one.
//
// Usage: noop-extender --api-server URL --ca FILE --token-file FILE [--listen 127.0.0.1:0]
//
//	[--port-file FILE] [--watch-pods json|protobuf]
package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The extender/v1 types (k8s.io/kube-scheduler/extender/v1): no JSON tags, Go field names.
type extenderArgs struct {
	Pod       *pod
	Nodes     json.RawMessage
	NodeNames *[]string
}

type extenderFilterResult struct {
	Nodes                      *json.RawMessage
	NodeNames                  *[]string
	FailedNodes                map[string]string
	FailedAndUnresolvableNodes map[string]string
	Error                      string
}

type hostPriority struct {
	Host  string
	Score int64
}

type extenderBindingArgs struct {
	PodName      string
	PodNamespace string
	PodUID       string
	Node         string
}

type extenderBindingResult struct {
	Error string
}

// The parts of a v1.Pod a quota extender reads.
type pod struct {
	Metadata struct {
		Name            string            `json:"name"`
		Namespace       string            `json:"namespace"`
		UID             string            `json:"uid"`
		ResourceVersion string            `json:"resourceVersion"`
		Labels          map[string]string `json:"labels"`
		Annotations     map[string]string `json:"annotations"`
		OwnerReferences []struct {
			Kind string `json:"kind"`
			Name string `json:"name"`
			UID  string `json:"uid"`
		} `json:"ownerReferences"`
		CreationTimestamp time.Time `json:"creationTimestamp"`
	} `json:"metadata"`
	Spec struct {
		NodeName          string            `json:"nodeName"`
		SchedulerName     string            `json:"schedulerName"`
		PriorityClassName string            `json:"priorityClassName"`
		Priority          *int32            `json:"priority"`
		NodeSelector      map[string]string `json:"nodeSelector"`
		Containers        []container       `json:"containers"`
		InitContainers    []container       `json:"initContainers"`
		Overhead          map[string]string `json:"overhead"`
		Tolerations       []struct {
			Key      string `json:"key"`
			Operator string `json:"operator"`
			Value    string `json:"value"`
			Effect   string `json:"effect"`
		} `json:"tolerations"`
	} `json:"spec"`
	Status struct {
		Phase             string `json:"phase"`
		NominatedNodeName string `json:"nominatedNodeName"`
	} `json:"status"`
}

type container struct {
	Name      string `json:"name"`
	Image     string `json:"image"`
	Resources struct {
		Requests map[string]string `json:"requests"`
		Limits   map[string]string `json:"limits"`
	} `json:"resources"`
}

// ---- metrics --------------------------------------------------------------------------------

// capacity-extender's latency buckets (extender/metrics.h, Metrics::kBuckets), in seconds.
var buckets = []float64{0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.05, 0.25,
	1.0, 5.0}

type histogram struct {
	counts []uint64 // per bucket, not cumulative
	count  uint64
	sum    float64
}

type metrics struct {
	mu        sync.Mutex
	requests  map[string]uint64 // "verb code"
	durations map[string]*histogram
}

func newMetrics() *metrics {
	return &metrics{requests: map[string]uint64{}, durations: map[string]*histogram{}}
}

func (m *metrics) observe(verb string, code int, seconds float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.requests[fmt.Sprintf("%s %d", verb, code)]++
	h := m.durations[verb]
	if h == nil {
		h = &histogram{counts: make([]uint64, len(buckets))}
		m.durations[verb] = h
	}
	for i, le := range buckets {
		if seconds <= le {
			h.counts[i]++
			break
		}
	}
	h.count++
	h.sum += seconds
}

func (m *metrics) render(w io.Writer) {
	m.mu.Lock()
	defer m.mu.Unlock()
	keys := make([]string, 0, len(m.requests))
	for k := range m.requests {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fmt.Fprintln(w, "# TYPE noop_extender_requests_total counter")
	for _, k := range keys {
		parts := strings.SplitN(k, " ", 2)
		fmt.Fprintf(w, "noop_extender_requests_total{verb=%q,code=%q} %d\n", parts[0], parts[1],
			m.requests[k])
	}
	verbs := make([]string, 0, len(m.durations))
	for v := range m.durations {
		verbs = append(verbs, v)
	}
	sort.Strings(verbs)
	fmt.Fprintln(w, "# TYPE noop_extender_request_duration_seconds histogram")
	for _, v := range verbs {
		h := m.durations[v]
		var cumulative uint64
		for i, le := range buckets {
			cumulative += h.counts[i]
			fmt.Fprintf(w, "noop_extender_request_duration_seconds_bucket{verb=%q,le=\"%g\"} %d\n",
				v, le, cumulative)
		}
		fmt.Fprintf(w, "noop_extender_request_duration_seconds_bucket{verb=%q,le=\"+Inf\"} %d\n",
			v, h.count)
		fmt.Fprintf(w, "noop_extender_request_duration_seconds_sum{verb=%q} %g\n", v, h.sum)
		fmt.Fprintf(w, "noop_extender_request_duration_seconds_count{verb=%q} %d\n", v, h.count)
	}
}

// ---- the extender ---------------------------------------------------------------------------

type extender struct {
	apiServer string
	token     string
	client    *http.Client
	metrics   *metrics
}

func writeJSON(w http.ResponseWriter, v interface{}) int {
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(v); err != nil {
		log.Printf("encoding the answer: %v", err)
	}
	return http.StatusOK
}

// timed wraps a verb: only POST, the answer's time observed under the verb's name.
func (e *extender) timed(verb string, handle func(http.ResponseWriter, *http.Request) int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		code := http.StatusMethodNotAllowed
		if r.Method == http.MethodPost {
			code = handle(w, r)
		} else {
			http.Error(w, "POST only", code)
		}
		e.metrics.observe(verb, code, time.Since(start).Seconds())
	}
}

func (e *extender) filter(w http.ResponseWriter, r *http.Request) int {
	var args extenderArgs
	if err := json.NewDecoder(r.Body).Decode(&args); err != nil || args.Pod == nil {
		http.Error(w, fmt.Sprintf("bad ExtenderArgs: %v", err), http.StatusBadRequest)
		return http.StatusBadRequest
	}
	names := []string{}
	if args.NodeNames != nil {
		names = *args.NodeNames
	}
	return writeJSON(w, extenderFilterResult{NodeNames: &names, FailedNodes: map[string]string{},
		FailedAndUnresolvableNodes: map[string]string{}})
}

func (e *extender) prioritize(w http.ResponseWriter, r *http.Request) int {
	var args extenderArgs
	if err := json.NewDecoder(r.Body).Decode(&args); err != nil || args.Pod == nil {
		http.Error(w, fmt.Sprintf("bad ExtenderArgs: %v", err), http.StatusBadRequest)
		return http.StatusBadRequest
	}
	scores := []hostPriority{}
	if args.NodeNames != nil {
		for _, n := range *args.NodeNames {
			scores = append(scores, hostPriority{Host: n})
		}
	}
	return writeJSON(w, scores)
}

func (e *extender) bind(w http.ResponseWriter, r *http.Request) int {
	var args extenderBindingArgs
	if err := json.NewDecoder(r.Body).Decode(&args); err != nil || args.PodName == "" {
		http.Error(w, fmt.Sprintf("bad ExtenderBindingArgs: %v", err), http.StatusBadRequest)
		return http.StatusBadRequest
	}
	if err := e.postBinding(r.Context(), args); err != nil {
		return writeJSON(w, extenderBindingResult{Error: err.Error()})
	}
	return writeJSON(w, extenderBindingResult{})
}

type objectMeta struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	UID       string `json:"uid,omitempty"`
}

type binding struct {
	APIVersion string     `json:"apiVersion"`
	Kind       string     `json:"kind"`
	Metadata   objectMeta `json:"metadata"`
	Target     struct {
		Kind string `json:"kind"`
		Name string `json:"name"`
	} `json:"target"`
}

func (e *extender) postBinding(ctx context.Context, args extenderBindingArgs) error {
	b := binding{APIVersion: "v1", Kind: "Binding",
		Metadata: objectMeta{Name: args.PodName, Namespace: args.PodNamespace, UID: args.PodUID}}
	b.Target.Kind = "Node"
	b.Target.Name = args.Node
	body, err := json.Marshal(b)
	if err != nil {
		return err
	}
	url := fmt.Sprintf("%s/api/v1/namespaces/%s/pods/%s/binding", e.apiServer, args.PodNamespace,
		args.PodName)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Authorization", "Bearer "+e.token)
	resp, err := e.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		return fmt.Errorf("binding %s/%s to %s: %d %s", args.PodNamespace, args.PodName, args.Node,
			resp.StatusCode, strings.TrimSpace(string(answer)))
	}
	return nil
}

// The media types of a pod watch: what the API server encodes each event in.
var watchMediaTypes = map[string]string{
	"json":     "application/json",
	"protobuf": "application/vnd.kubernetes.protobuf",
}

// watchPods lists the pods (for the resourceVersion), then watches them from there in `format`
// and discards every byte, again after any break; it logs once when the first watch is open.
func (e *extender) watchPods(format string) {
	announced := false
	for {
		rv, err := e.podListVersion()
		if err == nil {
			err = e.streamPodWatch(format, rv, func() {
				if !announced {
					announced = true
					log.Printf("pod watch: initial events received (%s, from resourceVersion %s)",
						format, rv)
				}
			})
		}
		if err != nil {
			log.Printf("pod watch: %v (again in 1 s)", err)
		}
		time.Sleep(time.Second)
	}
}

func (e *extender) apiGet(path, accept string) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodGet, e.apiServer+path, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", accept)
	req.Header.Set("Authorization", "Bearer "+e.token)
	return e.client.Do(req)
}

func (e *extender) podListVersion() (string, error) {
	resp, err := e.apiGet("/api/v1/pods?resourceVersion=0", "application/json")
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("list pods: %d", resp.StatusCode)
	}
	var list struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		return "", err
	}
	return list.Metadata.ResourceVersion, nil
}

func (e *extender) streamPodWatch(format, rv string, opened func()) error {
	accept := watchMediaTypes[format]
	resp, err := e.apiGet("/api/v1/pods?watch=1&allowWatchBookmarks=true&resourceVersion="+rv,
		accept)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("watch pods: %d", resp.StatusCode)
	}
	if got := resp.Header.Get("Content-Type"); !strings.HasPrefix(got, accept) {
		return fmt.Errorf("watch pods: asked for %s, got %s", accept, got)
	}
	opened()
	_, err = io.Copy(io.Discard, resp.Body)
	return err
}

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address of the extender verbs")
	portFile := flag.String("port-file", "", "write the listening port here once listening")
	apiServer := flag.String("api-server", "", "kube-apiserver URL, https://127.0.0.1:PORT")
	caFile := flag.String("ca", "", "PEM CA of kube-apiserver's serving certificate")
	tokenFile := flag.String("token-file", "", "file holding the bearer token for the Binding POSTs")
	watchFormat := flag.String("watch-pods", "", "also watch every pod: json or protobuf")
	flag.Parse()
	if _, ok := watchMediaTypes[*watchFormat]; *watchFormat != "" && !ok {
		log.Fatalf("--watch-pods: json or protobuf, not %q", *watchFormat)
	}
	if *apiServer == "" || *caFile == "" || *tokenFile == "" {
		log.Fatal("--api-server, --ca and --token-file are required")
	}
	caPEM, err := os.ReadFile(*caFile)
	if err != nil {
		log.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		log.Fatalf("no certificate in %s", *caFile)
	}
	token, err := os.ReadFile(*tokenFile)
	if err != nil {
		log.Fatal(err)
	}
	transport := &http.Transport{
		TLSClientConfig:     &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
		ForceAttemptHTTP2:   true, // as client-go: one HTTP/2 connection carries every request
		MaxIdleConnsPerHost: 25,
		IdleConnTimeout:     90 * time.Second,
	}
	e := &extender{apiServer: strings.TrimRight(*apiServer, "/"),
		token: strings.TrimSpace(string(token)), client: &http.Client{Transport: transport},
		metrics: newMetrics()}

	mux := http.NewServeMux()
	mux.HandleFunc("/filter", e.timed("filter", e.filter))
	mux.HandleFunc("/prioritize", e.timed("prioritize", e.prioritize))
	mux.HandleFunc("/bind", e.timed("bind", e.bind))
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		e.metrics.render(w)
	})
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	})

	if *watchFormat != "" {
		go e.watchPods(*watchFormat)
	}
	listener, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	port := listener.Addr().(*net.TCPAddr).Port
	if *portFile != "" {
		// Whole or not at all: a reader polling the file never sees a partial port.
		tmp := *portFile + ".tmp"
		if err := os.WriteFile(tmp, []byte(fmt.Sprintf("%d\n", port)), 0o644); err != nil {
			log.Fatal(err)
		}
		if err := os.Rename(tmp, *portFile); err != nil {
			log.Fatal(err)
		}
	}
	log.Printf("noop-extender listening on %s", listener.Addr())
	server := &http.Server{Handler: mux}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-stop
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		server.Shutdown(ctx)
	}()
	if err := server.Serve(listener); err != nil && err != http.ErrServerClosed {
		log.Fatal(err)
	}
}
