package state

import (
	"context"
	"net/http"
	"reflect"
	"strconv"
	"testing"

	"github.com/inferscale/inferscale/shared/kube"
)

// fakeAPI is an in-memory ConfigMap API with resourceVersion checks.
type fakeAPI struct {
	cm      *kube.ConfigMap
	version int
}

func (f *fakeAPI) GetConfigMap(_ context.Context, ns, name string) (*kube.ConfigMap, error) {
	if f.cm == nil {
		return nil, &kube.StatusError{Code: http.StatusNotFound, Message: "not found"}
	}
	c := *f.cm
	return &c, nil
}

func (f *fakeAPI) CreateConfigMap(_ context.Context, cm *kube.ConfigMap) (*kube.ConfigMap, error) {
	if f.cm != nil {
		return nil, &kube.StatusError{Code: http.StatusConflict, Message: "exists"}
	}
	f.version++
	c := *cm
	c.ResourceVersion = strconv.Itoa(f.version)
	f.cm = &c
	return &c, nil
}

func (f *fakeAPI) UpdateConfigMap(_ context.Context, cm *kube.ConfigMap) (*kube.ConfigMap, error) {
	if f.cm == nil || cm.ResourceVersion != f.cm.ResourceVersion {
		return nil, &kube.StatusError{Code: http.StatusConflict, Message: "conflict"}
	}
	f.version++
	c := *cm
	c.ResourceVersion = strconv.Itoa(f.version)
	f.cm = &c
	return &c, nil
}

func TestConfigMapStoreRoundTripAndConflict(t *testing.T) {
	ctx := context.Background()
	api := &fakeAPI{}
	s := ConfigMapStore{API: api, Namespace: "ns", Name: "inferscale-state"}
	txn, err := s.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := txn.Save(ctx, sample()); err != nil {
		t.Fatalf("create: %v", err)
	}
	txn.Close()
	a, _ := s.Begin(ctx)
	b, _ := s.Begin(ctx)
	if !reflect.DeepEqual(a.State(), sample()) {
		t.Fatal("state not read back from the ConfigMap")
	}
	if err := a.Save(ctx, New()); err != nil {
		t.Fatalf("update: %v", err)
	}
	if err := b.Save(ctx, New()); !kube.IsConflict(err) {
		t.Fatalf("concurrent update: %v, want a conflict", err)
	}
	api.cm.Data[ConfigMapKey] = "not json"
	c, err := s.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if c.Warning() == nil {
		t.Fatal("corrupt ConfigMap data must warn and start fresh")
	}
}
