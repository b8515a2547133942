// Package kubefake is a small in-memory Kubernetes API server for tests of
// shared/kube: core/v1 Events (create, get, patch) and pods (patch), over
// TLS, with every request recorded and failures injectable. It applies the
// checks the real API server makes that matter to inferscale's client
// (name conflicts, event namespace matching its object, patch content
// types) and nothing more.
package kubefake

import (
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Request is one call the fake received.
type Request struct {
	Method, Path, ContentType string
	Body                      []byte
}

// API is the fake server.
type API struct {
	srv *httptest.Server

	mu       sync.Mutex
	objects  map[string]map[string]any // "events/ns/name" or "pods/ns/name"
	requests []Request
	failures []failure
	version  int
}

type failure struct {
	method string
	code   int
	left   int
}

// New starts the fake; it stops when the test ends.
func New(t testing.TB) *API {
	a := &API{objects: map[string]map[string]any{}}
	a.srv = httptest.NewTLSServer(http.HandlerFunc(a.serve))
	t.Cleanup(a.srv.Close)
	return a
}

// URL is the server's https://host:port.
func (a *API) URL() string { return a.srv.URL }

// CertPool trusts the server's certificate.
func (a *API) CertPool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(a.srv.Certificate())
	return p
}

// FailNext makes the next n requests with method answer code.
func (a *API) FailNext(method string, code, n int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.failures = append(a.failures, failure{method: method, code: code, left: n})
}

// AddPod stores a pod with the given annotations.
func (a *API) AddPod(ns, name string, annotations map[string]string) {
	ann := map[string]any{}
	for k, v := range annotations {
		ann[k] = v
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.objects["pods/"+ns+"/"+name] = map[string]any{"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": name, "namespace": ns, "annotations": ann}}
}

// Object returns a copy of a stored object (kind "events" or "pods").
func (a *API) Object(kind, ns, name string) (map[string]any, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	o, ok := a.objects[kind+"/"+ns+"/"+name]
	if !ok {
		return nil, false
	}
	b, _ := json.Marshal(o)
	var c map[string]any
	_ = json.Unmarshal(b, &c)
	return c, true
}

// Count returns how many objects of kind are stored.
func (a *API) Count(kind string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for k := range a.objects {
		if strings.HasPrefix(k, kind+"/") {
			n++
		}
	}
	return n
}

// Delete removes an object (an Event's TTL expiring).
func (a *API) Delete(kind, ns, name string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.objects, kind+"/"+ns+"/"+name)
}

// Requests returns the calls so far and forgets them.
func (a *API) Requests() []Request {
	a.mu.Lock()
	defer a.mu.Unlock()
	r := a.requests
	a.requests = nil
	return r
}

func (a *API) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	a.mu.Lock()
	defer a.mu.Unlock()
	a.requests = append(a.requests, Request{Method: r.Method, Path: r.URL.RequestURI(), ContentType: r.Header.Get("Content-Type"), Body: body})
	for i := range a.failures {
		if f := &a.failures[i]; f.left > 0 && f.method == r.Method {
			f.left--
			status(w, f.code, "injected failure")
			return
		}
	}
	// /api/v1/namespaces/{ns}/{kind}[/{name}]
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/api/v1/namespaces/"), "/")
	if !strings.HasPrefix(r.URL.Path, "/api/v1/namespaces/") || len(parts) < 2 || len(parts) > 3 || (parts[1] != "events" && parts[1] != "pods") {
		status(w, http.StatusNotFound, "no such resource "+r.URL.Path)
		return
	}
	ns, kind, name := parts[0], parts[1], ""
	if len(parts) == 3 {
		name = parts[2]
	}
	switch {
	case r.Method == http.MethodPost && kind == "events" && name == "":
		a.create(w, ns, body, r.Header.Get("Content-Type"))
	case r.Method == http.MethodGet && name != "":
		a.get(w, kind, ns, name)
	case r.Method == http.MethodPatch && name != "":
		a.patch(w, kind, ns, name, body, r.Header.Get("Content-Type"))
	default:
		status(w, http.StatusMethodNotAllowed, r.Method+" "+r.URL.Path+" is not served by the fake")
	}
}

func (a *API) create(w http.ResponseWriter, ns string, body []byte, ct string) {
	if ct != "application/json" {
		status(w, http.StatusUnsupportedMediaType, "content type "+ct)
		return
	}
	var o map[string]any
	if err := json.Unmarshal(body, &o); err != nil {
		status(w, http.StatusBadRequest, err.Error())
		return
	}
	meta, _ := o["metadata"].(map[string]any)
	inv, _ := o["involvedObject"].(map[string]any)
	name, _ := meta["name"].(string)
	if name == "" || meta["namespace"] != ns || inv["namespace"] != ns {
		status(w, http.StatusUnprocessableEntity, "event name missing, or namespace does not match involvedObject.namespace")
		return
	}
	key := "events/" + ns + "/" + name
	if _, ok := a.objects[key]; ok {
		status(w, http.StatusConflict, fmt.Sprintf("events %q already exists", name))
		return
	}
	a.version++
	meta["resourceVersion"] = strconv.Itoa(a.version)
	a.objects[key] = o
	w.WriteHeader(http.StatusCreated)
	_ = json.NewEncoder(w).Encode(o)
}

func (a *API) get(w http.ResponseWriter, kind, ns, name string) {
	o, ok := a.objects[kind+"/"+ns+"/"+name]
	if !ok {
		status(w, http.StatusNotFound, fmt.Sprintf("%s %q not found", kind, name))
		return
	}
	_ = json.NewEncoder(w).Encode(o)
}

func (a *API) patch(w http.ResponseWriter, kind, ns, name string, body []byte, ct string) {
	if ct != "application/merge-patch+json" && ct != "application/strategic-merge-patch+json" {
		status(w, http.StatusUnsupportedMediaType, "patch content type "+ct)
		return
	}
	o, ok := a.objects[kind+"/"+ns+"/"+name]
	if !ok {
		status(w, http.StatusNotFound, fmt.Sprintf("%s %q not found", kind, name))
		return
	}
	var p any
	if err := json.Unmarshal(body, &p); err != nil {
		status(w, http.StatusBadRequest, err.Error())
		return
	}
	merged, _ := MergePatch(o, p).(map[string]any)
	a.version++
	if meta, ok := merged["metadata"].(map[string]any); ok {
		meta["resourceVersion"] = strconv.Itoa(a.version)
	}
	a.objects[kind+"/"+ns+"/"+name] = merged
	_ = json.NewEncoder(w).Encode(merged)
}

// MergePatch applies an RFC 7386 JSON merge patch (for maps, which is all
// a strategic merge patch of these objects touches).
func MergePatch(target, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	t, ok := target.(map[string]any)
	if !ok {
		t = map[string]any{}
	}
	for k, v := range p {
		if v == nil {
			delete(t, k)
			continue
		}
		t[k] = MergePatch(t[k], v)
	}
	return t
}

func status(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": msg, "code": code})
}
