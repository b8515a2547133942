package kube

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/tidwall/gjson"
)

// Scale is what a scale target's scale subresource says: the replicas
// asked for (spec).
type Scale struct {
	Replicas int
}

// ScalePath is the scale subresource of namespace/name of the given
// apiVersion ("apps/v1", or "v1" for the core group) and kind, whose
// resource is the kind in lower case with an "s" (deployments,
// statefulsets, replicasets, leaderworkersets: the kinds CPA scales).
func ScalePath(namespace, apiVersion, kind, name string) (string, error) {
	switch {
	case namespace == "" || name == "":
		return "", fmt.Errorf("scale of %s %q in namespace %q: a namespace and a name are required", kind, name, namespace)
	case kind == "" || strings.ContainsAny(kind, "/?#. "):
		return "", fmt.Errorf("scale of %q: kind %q is not a resource kind", name, kind)
	case apiVersion == "" || strings.Count(apiVersion, "/") > 1 || strings.ContainsAny(apiVersion, "?# "):
		return "", fmt.Errorf("scale of %s %q: apiVersion %q is not group/version or version", kind, name, apiVersion)
	}
	prefix := "/apis/" + apiVersion
	if !strings.Contains(apiVersion, "/") {
		prefix = "/api/" + apiVersion
	}
	return prefix + "/namespaces/" + url.PathEscape(namespace) + "/" + strings.ToLower(kind) + "s/" + url.PathEscape(name) + "/scale", nil
}

// ReadScale reads the scale subresource of namespace/name (RBAC: get on
// <resource>/scale, e.g. deployments/scale).
func (c *Client) ReadScale(ctx context.Context, namespace, apiVersion, kind, name string) (Scale, error) {
	path, err := ScalePath(namespace, apiVersion, kind, name)
	if err != nil {
		return Scale{}, err
	}
	b, err := c.do(ctx, http.MethodGet, path, "", nil, MaxResponseBytes)
	if err != nil {
		return Scale{}, fmt.Errorf("reading the scale of %s %s/%s: %w", kind, namespace, name, err)
	}
	return parseScale(b)
}

// parseScale reads an autoscaling/v1 Scale. Its spec.replicas is
// omitted at zero, so a Scale without one asks for none; any other
// answer without a whole, non-negative count is an error, not zero pods.
func parseScale(b []byte) (Scale, error) {
	if !gjson.ValidBytes(b) {
		return Scale{}, errors.New("scale subresource: answer is not JSON")
	}
	kind := gjson.GetBytes(b, "kind").String()
	spec := gjson.GetBytes(b, "spec.replicas")
	if !spec.Exists() && kind == "Scale" {
		return Scale{}, nil
	}
	if kind != "Scale" {
		return Scale{}, fmt.Errorf("scale subresource: answer is a %q, not a Scale", kind)
	}
	if spec.Type != gjson.Number || spec.Num < 0 || spec.Num != float64(int(spec.Num)) {
		return Scale{}, fmt.Errorf("scale subresource: spec.replicas %q is not a replica count", spec.Raw)
	}
	return Scale{Replicas: int(spec.Num)}, nil
}
