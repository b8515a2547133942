package store

import (
	"context"
	"fmt"

	"github.com/inferscale/inferscale/shared/kube"
	"github.com/inferscale/inferscale/shared/state"
)

// ConfigMapKey is the data key that holds the state document.
const ConfigMapKey = "state.json"

// ConfigMapAPI is what the ConfigMap backend needs from the API client.
type ConfigMapAPI interface {
	GetConfigMap(ctx context.Context, ns, name string) (*kube.ConfigMap, error)
	CreateConfigMap(ctx context.Context, cm *kube.ConfigMap) (*kube.ConfigMap, error)
	UpdateConfigMap(ctx context.Context, cm *kube.ConfigMap) (*kube.ConfigMap, error)
}

// ConfigMap keeps state in a ConfigMap so that it survives the CPA
// pod being recreated. Concurrent writers are detected by resourceVersion:
// the later Save fails with a conflict and that tick errors (CPA retries on
// the next one). Local is an optional file lock held for the transaction so
// that processes in the same pod queue instead of conflicting.
type ConfigMap struct {
	API       ConfigMapAPI
	Namespace string
	Name      string
	// LockPath, when set, is flocked for the whole transaction.
	LockPath string
}

type cmTxn struct {
	s    ConfigMap
	lock Txn
	cm   *kube.ConfigMap
	loaded
}

// Begin reads the ConfigMap (absent: fresh state).
func (s ConfigMap) Begin(ctx context.Context) (Txn, error) {
	t := &cmTxn{s: s}
	if s.LockPath != "" {
		l, err := File{Path: s.LockPath}.Begin(ctx)
		if err != nil {
			return nil, err
		}
		t.lock = l
	}
	cm, err := s.API.GetConfigMap(ctx, s.Namespace, s.Name)
	switch {
	case kube.IsNotFound(err):
		t.st = state.New()
	case err != nil:
		t.Close()
		return nil, fmt.Errorf("reading state: %w", err)
	default:
		t.cm = cm
		raw, ok := cm.Data[ConfigMapKey]
		if !ok {
			t.st = state.New()
			break
		}
		st, derr := state.Decode([]byte(raw))
		if derr != nil {
			t.st, t.warn = state.New(), fmt.Errorf("configmap %s/%s discarded, starting fresh: %w", s.Namespace, s.Name, derr)
		} else {
			t.st = st
		}
	}
	return t, nil
}

func (t *cmTxn) Save(ctx context.Context, st *state.State) error {
	b, err := t.encodeOnce(st)
	if err != nil {
		return err
	}
	if t.cm == nil {
		_, err = t.s.API.CreateConfigMap(ctx, &kube.ConfigMap{Name: t.s.Name, Namespace: t.s.Namespace,
			Data: map[string]string{ConfigMapKey: string(b)}})
		return err
	}
	data := make(map[string]string, len(t.cm.Data)+1)
	for k, v := range t.cm.Data {
		data[k] = v
	}
	data[ConfigMapKey] = string(b)
	_, err = t.s.API.UpdateConfigMap(ctx, &kube.ConfigMap{Name: t.s.Name, Namespace: t.s.Namespace,
		ResourceVersion: t.cm.ResourceVersion, Data: data})
	return err
}

func (t *cmTxn) Close() error {
	if t.lock == nil {
		return nil
	}
	err := t.lock.Close()
	t.lock = nil
	return err
}
