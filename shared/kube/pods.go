package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"github.com/tidwall/gjson"
)

// SelectorFromTarget builds a label selector string (the API's
// labelSelector syntax) from a scale target's spec.selector: matchLabels
// plus matchExpressions (In, NotIn, Exists, DoesNotExist).
func SelectorFromTarget(target []byte) (string, error) {
	sel := gjson.GetBytes(target, "spec.selector")
	if !sel.Exists() || !sel.IsObject() {
		return "", errors.New("target has no spec.selector object")
	}
	var parts []string
	var bad []error
	sel.Get("matchLabels").ForEach(func(k, v gjson.Result) bool {
		if err := checkLabelToken(k.String()); err != nil {
			bad = append(bad, fmt.Errorf("matchLabels key: %w", err))
		}
		if v.String() != "" {
			if err := checkLabelToken(v.String()); err != nil {
				bad = append(bad, fmt.Errorf("matchLabels[%s]: %w", k.String(), err))
			}
		}
		parts = append(parts, k.String()+"="+v.String())
		return true
	})
	sort.Strings(parts)
	sel.Get("matchExpressions").ForEach(func(_, e gjson.Result) bool {
		key := e.Get("key").String()
		if err := checkLabelToken(key); err != nil {
			bad = append(bad, fmt.Errorf("matchExpressions key: %w", err))
			return true
		}
		var vals []string
		e.Get("values").ForEach(func(_, v gjson.Result) bool {
			if err := checkLabelToken(v.String()); err != nil {
				bad = append(bad, fmt.Errorf("matchExpressions[%s] value: %w", key, err))
			}
			vals = append(vals, v.String())
			return true
		})
		switch op := e.Get("operator").String(); op {
		case "In", "NotIn":
			if len(vals) == 0 {
				bad = append(bad, fmt.Errorf("matchExpressions[%s] %s needs values", key, op))
				return true
			}
			parts = append(parts, fmt.Sprintf("%s %s (%s)", key, strings.ToLower(op), strings.Join(vals, ",")))
		case "Exists":
			parts = append(parts, key)
		case "DoesNotExist":
			parts = append(parts, "!"+key)
		default:
			bad = append(bad, fmt.Errorf("matchExpressions[%s]: unknown operator %q", key, op))
		}
		return true
	})
	if err := errors.Join(bad...); err != nil {
		return "", fmt.Errorf("target spec.selector: %w", err)
	}
	if len(parts) == 0 {
		return "", errors.New("target spec.selector is empty: it would select every pod in the namespace")
	}
	return strings.Join(parts, ","), nil
}

// checkLabelToken rejects characters that would change a selector's meaning.
func checkLabelToken(s string) error {
	if s == "" || len(s) > 317 {
		return fmt.Errorf("%q is empty or too long", s)
	}
	for _, r := range s {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./", r)
		if !ok {
			return fmt.Errorf("%q has character %q", s, r)
		}
	}
	return nil
}

// ListPods returns the raw JSON of every pod in namespace matching the
// label selector (one GET, no pagination: a target's pods fit one page).
func (c *Client) ListPods(ctx context.Context, namespace, selector string) ([][]byte, error) {
	if namespace == "" {
		return nil, errors.New("listing pods: empty namespace")
	}
	path := "/api/v1/namespaces/" + url.PathEscape(namespace) + "/pods?labelSelector=" + url.QueryEscape(selector)
	b, err := c.do(ctx, http.MethodGet, path, "", nil, MaxPodListResponseBytes)
	if err != nil {
		return nil, fmt.Errorf("listing pods of %s (%s): %w", namespace, selector, err)
	}
	items := gjson.GetBytes(b, "items")
	if !items.IsArray() {
		return nil, fmt.Errorf("listing pods of %s: response has no items array", namespace)
	}
	var out [][]byte
	items.ForEach(func(_, it gjson.Result) bool {
		out = append(out, []byte(it.Raw))
		return true
	})
	return out, nil
}

// DeletionCostAnnotation is the ReplicaSet controller's hint: pods with a
// lower cost are deleted first on scale-down.
const DeletionCostAnnotation = "controller.kubernetes.io/pod-deletion-cost"

// PatchPodAnnotations sets (non-nil value) or removes (nil) annotations of
// namespace/pod with one JSON merge patch (RBAC: patch pods). No
// annotations: no request.
func (c *Client) PatchPodAnnotations(ctx context.Context, namespace, pod string, annotations map[string]*string) error {
	if namespace == "" || pod == "" {
		return fmt.Errorf("patching pod annotations: namespace %q and pod %q are required", namespace, pod)
	}
	if len(annotations) == 0 {
		return nil
	}
	for k := range annotations {
		if err := checkLabelToken(k); err != nil {
			return fmt.Errorf("patching pod %s/%s: annotation key: %w", namespace, pod, err)
		}
	}
	body, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annotations}})
	if err != nil {
		return fmt.Errorf("patching pod %s/%s: %w", namespace, pod, err)
	}
	path := "/api/v1/namespaces/" + url.PathEscape(namespace) + "/pods/" + url.PathEscape(pod)
	if _, err := c.Do(ctx, http.MethodPatch, path, "application/merge-patch+json", body); err != nil {
		return fmt.Errorf("patching pod %s/%s annotations: %w", namespace, pod, err)
	}
	return nil
}
