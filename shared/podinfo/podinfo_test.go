package podinfo_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/inferscale/inferscale/shared/podinfo"
)

func example(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "examples", "metric", name))
	if err != nil {
		t.Fatalf("reading example: %v", err)
	}
	return []byte(gjson.GetBytes(b, "resource").Raw)
}

var now = time.Date(2026, 11, 29, 21, 0, 0, 0, time.UTC)

func TestReadyPod(t *testing.T) {
	in, err := podinfo.Parse(example(t, "pod-ready.json"))
	if err != nil {
		t.Fatal(err)
	}
	if in.Name != "llm-7d9f8-abcde" || in.Namespace != "inference" || in.Node != "gpu-node-1" || in.Phase != "Running" {
		t.Errorf("identity = %+v", in)
	}
	if !in.Ready || in.Terminating || in.PodIP.String() != "127.0.0.1" || in.HostIP.String() != "127.0.0.1" {
		t.Errorf("state = ready %v term %v ip %v host %v", in.Ready, in.Terminating, in.PodIP, in.HostIP)
	}
	if in.Labels["app"] != "llm" || in.Ports["http"] != 8000 {
		t.Errorf("labels %v ports %v", in.Labels, in.Ports)
	}
	p := in.Lifecycle(now)
	if p.StartupSeconds == nil || *p.StartupSeconds != 190 {
		t.Errorf("startup = %v, want 190 (20:03:10 - 20:00:00)", p.StartupSeconds)
	}
	if p.AgeSeconds == nil || *p.AgeSeconds != 3600 {
		t.Errorf("age = %v", p.AgeSeconds)
	}
	if p.StartedAt == nil || p.ReadyAt.Sub(*p.StartedAt) != 188*time.Second {
		t.Errorf("startedAt %v readyAt %v", p.StartedAt, p.ReadyAt)
	}
	if port, err := in.Port("http", 9); err != nil || port != 8000 {
		t.Errorf("named port = %d %v", port, err)
	}
	if port, err := in.Port("metrics", 9); err == nil || port != 9 {
		t.Errorf("missing named port = %d %v, want default and error", port, err)
	}
	if port, err := in.Port("", 8001); err != nil || port != 8001 {
		t.Errorf("no name = %d %v", port, err)
	}
}

func TestPendingPod(t *testing.T) {
	in, err := podinfo.Parse(example(t, "pod-pending.json"))
	if err != nil {
		t.Fatal(err)
	}
	if in.Ready || in.PodIP.IsValid() || in.HostIP.IsValid() || in.Phase != "Pending" {
		t.Errorf("pending = %+v", in)
	}
	p := in.Lifecycle(now)
	if p.StartupSeconds != nil || p.ReadyAt != nil {
		t.Error("a pod that never became ready has no startup time")
	}
	if p.AgeSeconds == nil || *p.AgeSeconds != 30 {
		t.Errorf("age = %v, want 30", p.AgeSeconds)
	}
}

func TestTerminatingPod(t *testing.T) {
	in, err := podinfo.Parse(example(t, "pod-terminating.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !in.Terminating || in.Ready || !in.PodIP.IsValid() {
		t.Errorf("terminating = %+v", in)
	}
	if p := in.Lifecycle(now); !p.Terminating || p.StartupSeconds != nil {
		t.Errorf("lifecycle = %+v", p)
	}
}

func TestBadInput(t *testing.T) {
	for _, s := range []string{``, `[]`, `"x"`, `{"metadata":{}}`, `{"metadata":{"name":""}}`, `{"metadata":`} {
		if _, err := podinfo.Parse([]byte(s)); err == nil {
			t.Errorf("%q: want error", s)
		}
	}
	// Odd optional fields are ignored, never fatal, and never become addresses.
	in, err := podinfo.Parse([]byte(`{"metadata":{"name":"x","creationTimestamp":12,"labels":"no"},
		"spec":{"containers":[{"ports":[{"name":"http","containerPort":99999},{"name":"udp","containerPort":53,"protocol":"UDP"}]}]},
		"status":{"podIP":"evil.example.com:80/x","hostIP":"fe80::1%eth0","conditions":[{"type":"Ready","status":"True","lastTransitionTime":"yesterday"}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if in.PodIP.IsValid() || in.HostIP.IsValid() || len(in.Ports) != 0 || in.CreatedAt != nil || !in.Ready || in.ReadyAt != nil {
		t.Errorf("odd fields = %+v", in)
	}
	if p := in.Lifecycle(now); p.AgeSeconds != nil || p.StartupSeconds != nil {
		t.Errorf("lifecycle without times = %+v", p)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"metadata":{"name":"a","creationTimestamp":"2026-01-01T00:00:00Z"},"status":{"podIP":"10.0.0.1","conditions":[{"type":"Ready","status":"True","lastTransitionTime":"2025-01-01T00:00:00Z"}]}}`))
	f.Add([]byte(`{"metadata":{"name":"b"},"spec":{"containers":[{"ports":[{"name":"m","containerPort":1}]}]}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		in, err := podinfo.Parse(b)
		if err != nil {
			return
		}
		if in.Name == "" {
			t.Fatal("parsed pod without a name")
		}
		p := in.Lifecycle(now)
		if p.StartupSeconds != nil && *p.StartupSeconds < 0 {
			t.Fatal("negative startup")
		}
		for _, port := range in.Ports {
			if port <= 0 || port > 65535 {
				t.Fatalf("port %d out of range", port)
			}
		}
	})
}
