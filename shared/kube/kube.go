// Package kube is a deliberately small in-cluster Kubernetes API client for
// the few calls inferscale makes (listing a target's pods and patching their
// annotations, reading and writing its state ConfigMap, recording Events on
// its scale target). It uses the pod's service-account token and
// CA like rest.InClusterConfig, but without client-go's start-up cost:
// metric and evaluate start as fresh processes on every CPA tick.
package kube

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// DefaultServiceAccountDir is where Kubernetes mounts the pod's token and CA.
const DefaultServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// Each API answer is read up to what its call needs, so that a huge or
// hostile answer costs an error, not the CPA pod's memory (256 Mi):
//   - MaxResponseBytes: an Event, a pod PATCH's answer (one object);
//   - MaxConfigMapResponseBytes: a ConfigMap (1 MiB of data at most, JSON
//     escaping can double it, and its metadata);
//   - MaxPodListResponseBytes: a target's pod list (hundreds of pods of
//     tens of KiB each).
const (
	MaxResponseBytes          = 1 << 20
	MaxConfigMapResponseBytes = 3 << 20
	MaxPodListResponseBytes   = 24 << 20
)

// ErrNotInCluster is returned when the in-cluster environment is absent.
var ErrNotInCluster = errors.New("not running in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set")

// Client talks to the API server.
type Client struct {
	base      string // https://host:port
	tokenFile string
	http      *http.Client
	// Namespace is the pod's own namespace from the service account (may be empty).
	Namespace string
}

// InCluster builds a Client from KUBERNETES_SERVICE_HOST/PORT and the
// service-account files in saDir (DefaultServiceAccountDir when empty).
func InCluster(getenv func(string) string, saDir string, timeout time.Duration) (*Client, error) {
	host, port := getenv("KUBERNETES_SERVICE_HOST"), getenv("KUBERNETES_SERVICE_PORT")
	if host == "" || port == "" {
		return nil, ErrNotInCluster
	}
	if saDir == "" {
		saDir = DefaultServiceAccountDir
	}
	caPEM, err := os.ReadFile(filepath.Join(saDir, "ca.crt"))
	if err != nil {
		return nil, fmt.Errorf("reading service-account CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("service-account CA %s holds no certificate", filepath.Join(saDir, "ca.crt"))
	}
	ns, _ := os.ReadFile(filepath.Join(saDir, "namespace"))
	return New("https://"+net.JoinHostPort(host, port), filepath.Join(saDir, "token"), pool, timeout, strings.TrimSpace(string(ns))), nil
}

// New builds a Client for base (https://host:port) with a bearer token read
// from tokenFile on every request (tokens are rotated) and roots as CAs.
func New(base, tokenFile string, roots *x509.CertPool, timeout time.Duration, namespace string) *Client {
	tr := &http.Transport{
		TLSClientConfig:     &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
		MaxIdleConnsPerHost: 4,
	}
	hc := &http.Client{Transport: tr, Timeout: timeout, CheckRedirect: refuseRedirect}
	return &Client{base: strings.TrimRight(base, "/"), tokenFile: tokenFile, http: hc, Namespace: namespace}
}

// refuseRedirect follows no redirect: the API server never sends one, Go
// would forward the bearer token to another port or scheme of the same
// host, and a 307/308 would replay a PATCH elsewhere. A redirect is an
// error naming where it pointed.
func refuseRedirect(req *http.Request, via []*http.Request) error {
	return fmt.Errorf("kubernetes API redirected %s to %s: not followed (the service-account token goes to the API server only)",
		via[len(via)-1].URL.Redacted(), req.URL.Redacted())
}

// StatusError is a non-2xx API answer.
type StatusError struct {
	Code    int
	Message string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("kubernetes API: HTTP %d: %s", e.Code, e.Message)
}

// IsNotFound reports whether err is an API 404.
func IsNotFound(err error) bool {
	var se *StatusError
	return errors.As(err, &se) && se.Code == http.StatusNotFound
}

// IsConflict reports whether err is an API 409 (resourceVersion conflict or already exists).
func IsConflict(err error) bool {
	var se *StatusError
	return errors.As(err, &se) && se.Code == http.StatusConflict
}

// Do sends one request to path (e.g. /api/v1/namespaces/ns/pods) and returns
// the body of a 2xx answer of at most MaxResponseBytes.
func (c *Client) Do(ctx context.Context, method, path, contentType string, body []byte) ([]byte, error) {
	return c.do(ctx, method, path, contentType, body, MaxResponseBytes)
}

// do is Do reading at most limit bytes of the answer.
func (c *Client) do(ctx context.Context, method, path, contentType string, body []byte, limit int64) ([]byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return nil, fmt.Errorf("building %s %s: %w", method, path, err)
	}
	req.Header.Set("Accept", "application/json")
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if c.tokenFile != "" {
		tok, err := os.ReadFile(c.tokenFile)
		if err != nil {
			return nil, fmt.Errorf("reading service-account token: %w", err)
		}
		req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(tok)))
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s %s: reading body: %w", method, path, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s %s: answer larger than %d bytes, the most this call needs; not read further", method, path, limit)
	}
	if resp.StatusCode/100 != 2 {
		msg := strings.TrimSpace(string(b))
		if len(msg) > 300 {
			msg = msg[:300]
		}
		return nil, &StatusError{Code: resp.StatusCode, Message: msg}
	}
	return b, nil
}
