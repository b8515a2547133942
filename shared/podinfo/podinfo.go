// Package podinfo reads the fields inferscale needs from a Pod object as
// CPA passes it (no kind/apiVersion; possibly Pending, not ready or
// terminating, with no IP) using gjson, and derives lifecycle facts:
// readiness, startup time and age.
package podinfo

import (
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/tidwall/gjson"

	"github.com/inferscale/inferscale/shared/signal"
)

// Info is what a pod object says about itself.
type Info struct {
	Name, Namespace, Node string
	Phase                 string
	// PodIP and HostIP are valid IP addresses or invalid (zero) when absent.
	PodIP, HostIP netip.Addr
	Ready         bool
	Terminating   bool
	Labels        map[string]string
	// Ports maps container port names to numbers (TCP ports only).
	Ports map[string]int

	CreatedAt, StartedAt, ReadyAt, DeletedAt *time.Time
}

// Parse reads a pod object. It fails only when the JSON is invalid or the
// pod has no name; missing or malformed optional fields are left empty.
func Parse(raw []byte) (*Info, error) {
	if !gjson.ValidBytes(raw) {
		return nil, errors.New("pod is not valid JSON")
	}
	doc := gjson.ParseBytes(raw)
	if !doc.IsObject() {
		return nil, errors.New("pod is not a JSON object")
	}
	meta := doc.Get("metadata")
	name := meta.Get("name").String()
	if name == "" {
		return nil, errors.New("pod has no metadata.name")
	}
	in := &Info{
		Name:      name,
		Namespace: meta.Get("namespace").String(),
		Node:      doc.Get("spec.nodeName").String(),
		Phase:     doc.Get("status.phase").String(),
		Labels:    map[string]string{},
		Ports:     map[string]int{},
		CreatedAt: timeField(meta.Get("creationTimestamp")),
		DeletedAt: timeField(meta.Get("deletionTimestamp")),
		StartedAt: timeField(doc.Get("status.startTime")),
	}
	in.Terminating = in.DeletedAt != nil
	in.PodIP = ipField(doc.Get("status.podIP"))
	in.HostIP = ipField(doc.Get("status.hostIP"))
	meta.Get("labels").ForEach(func(k, v gjson.Result) bool {
		in.Labels[k.String()] = v.String()
		return true
	})
	doc.Get("spec.containers").ForEach(func(_, c gjson.Result) bool {
		c.Get("ports").ForEach(func(_, p gjson.Result) bool {
			proto := p.Get("protocol").String()
			n := p.Get("containerPort").Int()
			if pn := p.Get("name").String(); pn != "" && (proto == "" || proto == "TCP") && n > 0 && n < 65536 {
				if _, dup := in.Ports[pn]; !dup {
					in.Ports[pn] = int(n)
				}
			}
			return true
		})
		return true
	})
	doc.Get("status.conditions").ForEach(func(_, c gjson.Result) bool {
		if c.Get("type").String() != "Ready" {
			return true
		}
		if c.Get("status").String() == "True" {
			in.Ready = true
			in.ReadyAt = timeField(c.Get("lastTransitionTime"))
		}
		return false
	})
	return in, nil
}

func timeField(r gjson.Result) *time.Time {
	if r.Type != gjson.String {
		return nil
	}
	t, err := time.Parse(time.RFC3339, r.String())
	if err != nil {
		return nil
	}
	return &t
}

func ipField(r gjson.Result) netip.Addr {
	a, err := netip.ParseAddr(r.String())
	if err != nil || a.Zone() != "" {
		return netip.Addr{}
	}
	return a
}

// Lifecycle returns the signal.Pod with the pod's lifecycle fields set:
// startup seconds (ReadyAt - CreatedAt) for ready pods, age for all.
func (in *Info) Lifecycle(now time.Time) signal.Pod {
	p := signal.Pod{
		Name:        in.Name,
		Namespace:   in.Namespace,
		Node:        in.Node,
		Phase:       in.Phase,
		Ready:       in.Ready,
		Terminating: in.Terminating,
		CreatedAt:   in.CreatedAt,
		StartedAt:   in.StartedAt,
		ReadyAt:     in.ReadyAt,
		ScrapeTime:  now,
	}
	if in.CreatedAt != nil {
		if age := now.Sub(*in.CreatedAt).Seconds(); age >= 0 {
			p.AgeSeconds = signal.F(age)
		}
		if in.ReadyAt != nil {
			if s := in.ReadyAt.Sub(*in.CreatedAt).Seconds(); s >= 0 {
				p.StartupSeconds = signal.F(s)
			}
		}
	}
	return p
}

// Port resolves the metrics port: the named container port when name is
// set and present, else def.
func (in *Info) Port(name string, def int) (int, error) {
	if name == "" {
		return def, nil
	}
	if p, ok := in.Ports[name]; ok {
		return p, nil
	}
	return def, fmt.Errorf("pod %s has no TCP container port named %q", in.Name, name)
}
