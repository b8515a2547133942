package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
)

// ConfigMap is the part of a core/v1 ConfigMap inferscale reads and writes.
type ConfigMap struct {
	Name            string
	Namespace       string
	ResourceVersion string
	Data            map[string]string
}

type configMapJSON struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   configMapMeta     `json:"metadata"`
	Data       map[string]string `json:"data,omitempty"`
}

type configMapMeta struct {
	Name            string            `json:"name"`
	Namespace       string            `json:"namespace,omitempty"`
	ResourceVersion string            `json:"resourceVersion,omitempty"`
	Labels          map[string]string `json:"labels,omitempty"`
}

func configMapPath(ns, name string) string {
	p := "/api/v1/namespaces/" + url.PathEscape(ns) + "/configmaps"
	if name != "" {
		p += "/" + url.PathEscape(name)
	}
	return p
}

// GetConfigMap reads ns/name (RBAC: get configmaps). A missing one gives an
// error for which IsNotFound is true.
func (c *Client) GetConfigMap(ctx context.Context, ns, name string) (*ConfigMap, error) {
	b, err := c.do(ctx, http.MethodGet, configMapPath(ns, name), "", nil, MaxConfigMapResponseBytes)
	if err != nil {
		return nil, fmt.Errorf("getting configmap %s/%s: %w", ns, name, err)
	}
	return decodeConfigMap(b)
}

// CreateConfigMap creates cm (RBAC: create configmaps). An existing one
// gives an error for which IsConflict is true.
func (c *Client) CreateConfigMap(ctx context.Context, cm *ConfigMap) (*ConfigMap, error) {
	body, err := encodeConfigMap(cm, false)
	if err != nil {
		return nil, err
	}
	b, err := c.do(ctx, http.MethodPost, configMapPath(cm.Namespace, ""), "application/json", body, MaxConfigMapResponseBytes)
	if err != nil {
		return nil, fmt.Errorf("creating configmap %s/%s: %w", cm.Namespace, cm.Name, err)
	}
	return decodeConfigMap(b)
}

// UpdateConfigMap replaces cm, guarded by cm.ResourceVersion (RBAC: update
// configmaps). A concurrent writer gives an error for which IsConflict is true.
func (c *Client) UpdateConfigMap(ctx context.Context, cm *ConfigMap) (*ConfigMap, error) {
	body, err := encodeConfigMap(cm, true)
	if err != nil {
		return nil, err
	}
	b, err := c.do(ctx, http.MethodPut, configMapPath(cm.Namespace, cm.Name), "application/json", body, MaxConfigMapResponseBytes)
	if err != nil {
		return nil, fmt.Errorf("updating configmap %s/%s: %w", cm.Namespace, cm.Name, err)
	}
	return decodeConfigMap(b)
}

func encodeConfigMap(cm *ConfigMap, withVersion bool) ([]byte, error) {
	j := configMapJSON{APIVersion: "v1", Kind: "ConfigMap", Data: cm.Data,
		Metadata: configMapMeta{Name: cm.Name, Namespace: cm.Namespace,
			Labels: map[string]string{"app.kubernetes.io/managed-by": "inferscale"}}}
	if withVersion {
		j.Metadata.ResourceVersion = cm.ResourceVersion
	}
	b, err := json.Marshal(j)
	if err != nil {
		return nil, fmt.Errorf("encoding configmap %s: %w", cm.Name, err)
	}
	return b, nil
}

func decodeConfigMap(b []byte) (*ConfigMap, error) {
	var j configMapJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return nil, fmt.Errorf("decoding configmap: %w", err)
	}
	return &ConfigMap{Name: j.Metadata.Name, Namespace: j.Metadata.Namespace,
		ResourceVersion: j.Metadata.ResourceVersion, Data: j.Data}, nil
}
