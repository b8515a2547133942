package kube

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeServiceAccount lays out a service-account dir trusting srv's certificate.
func writeServiceAccount(t *testing.T, srv *httptest.Server, token string) string {
	t.Helper()
	dir := t.TempDir()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	for name, body := range map[string][]byte{"ca.crt": ca, "token": []byte(token + "\n"), "namespace": []byte("inference")} {
		if err := os.WriteFile(filepath.Join(dir, name), body, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestInClusterDo(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer s3cret" {
			http.Error(w, `{"kind":"Status","code":401}`, http.StatusUnauthorized)
			return
		}
		switch r.URL.Path {
		case "/api/v1/namespaces/inference/configmaps/state":
			w.Write([]byte(`{"data":{"state":"{}"}}`))
		default:
			http.Error(w, `{"kind":"Status","reason":"NotFound"}`, http.StatusNotFound)
		}
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	host, port, _ := net.SplitHostPort(u.Host)
	env := map[string]string{"KUBERNETES_SERVICE_HOST": host, "KUBERNETES_SERVICE_PORT": port}
	dir := writeServiceAccount(t, srv, "s3cret")

	c, err := InCluster(func(k string) string { return env[k] }, dir, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if c.Namespace != "inference" {
		t.Errorf("namespace = %q", c.Namespace)
	}
	b, err := c.Do(context.Background(), http.MethodGet, "/api/v1/namespaces/inference/configmaps/state", "", nil)
	if err != nil || !strings.Contains(string(b), `"state"`) {
		t.Fatalf("get: %s, %v", b, err)
	}
	_, err = c.Do(context.Background(), http.MethodGet, "/api/v1/namespaces/inference/configmaps/other", "", nil)
	if !IsNotFound(err) || IsConflict(err) {
		t.Fatalf("want a not-found error, got %v", err)
	}

	// A rotated token is picked up on the next request.
	os.WriteFile(filepath.Join(dir, "token"), []byte("wrong"), 0o600)
	_, err = c.Do(context.Background(), http.MethodGet, "/api/v1/namespaces/inference/configmaps/state", "", nil)
	var se *StatusError
	if err == nil || !strings.Contains(err.Error(), "401") {
		t.Fatalf("want 401 after token change, got %v (%T)", err, se)
	}
}

func TestInClusterErrors(t *testing.T) {
	if _, err := InCluster(func(string) string { return "" }, t.TempDir(), time.Second); err != ErrNotInCluster {
		t.Fatalf("want ErrNotInCluster, got %v", err)
	}
	env := map[string]string{"KUBERNETES_SERVICE_HOST": "127.0.0.1", "KUBERNETES_SERVICE_PORT": "1"}
	if _, err := InCluster(func(k string) string { return env[k] }, t.TempDir(), time.Second); err == nil || !strings.Contains(err.Error(), "CA") {
		t.Fatalf("missing CA: %v", err)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "ca.crt"), []byte("not pem"), 0o600)
	if _, err := InCluster(func(k string) string { return env[k] }, dir, time.Second); err == nil || !strings.Contains(err.Error(), "no certificate") {
		t.Fatalf("bad CA: %v", err)
	}
}

func TestUntrustedServerIsRefused(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("{}")) }))
	defer srv.Close()
	dir := t.TempDir() // trusts a freshly made CA, not the server's certificate
	os.WriteFile(filepath.Join(dir, "ca.crt"), selfSignedPEM(t), 0o600)
	os.WriteFile(filepath.Join(dir, "token"), []byte("t"), 0o600)
	u, _ := url.Parse(srv.URL)
	host, port, _ := net.SplitHostPort(u.Host)
	env := map[string]string{"KUBERNETES_SERVICE_HOST": host, "KUBERNETES_SERVICE_PORT": port}
	c, err := InCluster(func(k string) string { return env[k] }, dir, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Do(context.Background(), http.MethodGet, "/api", "", nil); err == nil {
		t.Fatal("a server with an untrusted certificate must be refused")
	}
}

func selfSignedPEM(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "other-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}
