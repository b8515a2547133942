// Package configmapfake is an in-memory fake of the small Kubernetes API
// client's ConfigMap calls (shared/kube), for the state store tests.
package configmapfake

import (
	"context"
	"net/http"
	"strconv"

	"github.com/inferscale/inferscale/shared/kube"
)

// ConfigMaps is one namespace-less ConfigMap slot with the API server's
// resourceVersion checks: create fails when it exists, update fails on a
// stale resourceVersion.
type ConfigMaps struct {
	CM      *kube.ConfigMap
	version int
}

// GetConfigMap returns a copy of the ConfigMap, or a 404.
func (f *ConfigMaps) GetConfigMap(_ context.Context, _, _ string) (*kube.ConfigMap, error) {
	if f.CM == nil {
		return nil, &kube.StatusError{Code: http.StatusNotFound, Message: "not found"}
	}
	c := *f.CM
	return &c, nil
}

// CreateConfigMap stores cm, or fails with a conflict when one exists.
func (f *ConfigMaps) CreateConfigMap(_ context.Context, cm *kube.ConfigMap) (*kube.ConfigMap, error) {
	if f.CM != nil {
		return nil, &kube.StatusError{Code: http.StatusConflict, Message: "exists"}
	}
	return f.store(cm), nil
}

// UpdateConfigMap replaces the ConfigMap when cm carries its current
// resourceVersion, else fails with a conflict.
func (f *ConfigMaps) UpdateConfigMap(_ context.Context, cm *kube.ConfigMap) (*kube.ConfigMap, error) {
	if f.CM == nil || cm.ResourceVersion != f.CM.ResourceVersion {
		return nil, &kube.StatusError{Code: http.StatusConflict, Message: "conflict"}
	}
	return f.store(cm), nil
}

func (f *ConfigMaps) store(cm *kube.ConfigMap) *kube.ConfigMap {
	f.version++
	c := *cm
	c.ResourceVersion = strconv.Itoa(f.version)
	f.CM = &c
	out := c
	return &out
}
