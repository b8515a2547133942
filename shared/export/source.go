// Package export is inferscale's exporter: a Prometheus collector that
// reads the persisted state (package state) on every scrape and serves
// what an SRE graphs and alerts on: the replicas the last saved tick saw
// and decided, the step that decided, policy v2's forecast, ceiling and
// headroom, the alerts by reason, the tick count, the age of the last
// saved tick and the intervals missed since, and the per-pod TTFT counts
// a windowed SLO attainment is computed from.
//
// evaluate is a process that ends with its tick, so it cannot serve
// metrics itself; the exporter is a long-running sidecar that only reads
// the state evaluate owns: it takes no lock and writes nothing. A state
// it cannot read is the series inferscale_state_up 0 and nothing else.
package export

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/inferscale/inferscale/shared/decide/knobs"
	"github.com/inferscale/inferscale/shared/kube"
	"github.com/inferscale/inferscale/shared/state"
	"github.com/inferscale/inferscale/shared/state/store"
)

// Reader reads the persisted state, read-only.
type Reader interface {
	Read(ctx context.Context) (*state.State, error)
}

// ErrNoState is a store that holds no state yet (before the first saved
// tick, or with stateBackend=none).
var ErrNoState = errors.New("no state saved yet")

// File reads the file backend's state. evaluate renames a complete file
// over the old one, so a read without its lock sees one whole state.
type File struct{ Path string }

// Read decodes the file (at most state.MaxStateBytes are read).
func (f File) Read(context.Context) (*state.State, error) {
	fh, err := os.Open(f.Path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("state file %s: %w", f.Path, ErrNoState)
	}
	if err != nil {
		return nil, fmt.Errorf("opening state file: %w", err)
	}
	defer fh.Close()
	st, err := state.Read(fh)
	if err != nil {
		return nil, fmt.Errorf("state file %s: %w", f.Path, err)
	}
	return st, nil
}

// ConfigMapAPI is what reading the ConfigMap backend needs: a get.
type ConfigMapAPI interface {
	GetConfigMap(ctx context.Context, ns, name string) (*kube.ConfigMap, error)
}

// ConfigMap reads the ConfigMap backend's state with one get (kube's
// answer bound applies), never an update.
type ConfigMap struct {
	API       ConfigMapAPI
	Namespace string
	Name      string
}

// Read gets the ConfigMap and decodes its state document.
func (c ConfigMap) Read(ctx context.Context) (*state.State, error) {
	cm, err := c.API.GetConfigMap(ctx, c.Namespace, c.Name)
	if kube.IsNotFound(err) {
		return nil, fmt.Errorf("configmap %s/%s: %w", c.Namespace, c.Name, ErrNoState)
	}
	if err != nil {
		return nil, err
	}
	raw, ok := cm.Data[store.ConfigMapKey]
	if !ok {
		return nil, fmt.Errorf("configmap %s/%s has no %s: %w", c.Namespace, c.Name, store.ConfigMapKey, ErrNoState)
	}
	st, err := state.Decode([]byte(raw))
	if err != nil {
		return nil, fmt.Errorf("configmap %s/%s: %w", c.Namespace, c.Name, err)
	}
	return st, nil
}

// none is stateBackend=none: there is never a state to read.
type none struct{}

func (none) Read(context.Context) (*state.State, error) {
	return nil, fmt.Errorf("stateBackend is none: %w", ErrNoState)
}

// Open is the Reader of the store the settings name, as evaluate opens
// it (decide.OpenStore), read-only: the file, or the ConfigMap through
// the in-cluster API with timeout per request.
func Open(s knobs.Store, getenv func(string) string, timeout time.Duration) (Reader, error) {
	switch s.Backend {
	case "none":
		return none{}, nil
	case "configmap":
		c, err := kube.InCluster(getenv, "", timeout)
		if err != nil {
			return nil, err
		}
		ns := s.Namespace
		if ns == "" {
			ns = c.Namespace
		}
		return ConfigMap{API: c, Namespace: ns, Name: s.ConfigMap}, nil
	}
	return File{Path: s.File}, nil
}
