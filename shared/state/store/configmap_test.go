package store

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/inferscale/inferscale/internal/configmapfake"
	"github.com/inferscale/inferscale/internal/statetest"
	"github.com/inferscale/inferscale/shared/kube"
	"github.com/inferscale/inferscale/shared/state"
)

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func TestConfigMapRoundTripAndConflict(t *testing.T) {
	ctx := context.Background()
	api := &configmapfake.ConfigMaps{}
	s := ConfigMap{API: api, Namespace: "ns", Name: "inferscale-state"}
	txn, err := s.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := txn.Save(ctx, statetest.Sample(t0)); err != nil {
		t.Fatalf("create: %v", err)
	}
	txn.Close()
	a, _ := s.Begin(ctx)
	b, _ := s.Begin(ctx)
	if !reflect.DeepEqual(a.State(), statetest.Sample(t0)) {
		t.Fatal("state not read back from the ConfigMap")
	}
	if err := a.Save(ctx, state.New()); err != nil {
		t.Fatalf("update: %v", err)
	}
	if err := b.Save(ctx, state.New()); !kube.IsConflict(err) {
		t.Fatalf("concurrent update: %v, want a conflict", err)
	}
	api.CM.Data[ConfigMapKey] = "not json"
	c, err := s.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if c.Warning() == nil {
		t.Fatal("corrupt ConfigMap data must warn and start fresh")
	}
}
