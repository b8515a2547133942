// Package rbacgrant flattens RBAC rules into single grants, the unit the deploy tests compare: what a Role allows
// against what inferscale calls.
package rbacgrant

import (
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
)

// Grant is one (API group, resource, verb, object name) a rule allows; Name "" is every object of the resource.
type Grant struct{ Group, Resource, Verb, Name string }

func (g Grant) String() string {
	group := g.Group
	if group == "" {
		group = "core"
	}
	s := fmt.Sprintf("%s %s/%s", g.Verb, group, g.Resource)
	if g.Name != "" {
		s += " " + g.Name
	}
	return s
}

// Of returns every grant of the rules. A wildcard group, resource or verb is an error: it cannot be compared, and
// least privilege never needs one.
func Of(rules []rbacv1.PolicyRule) (map[Grant]bool, error) {
	out := map[Grant]bool{}
	for _, rule := range rules {
		names := rule.ResourceNames
		if len(names) == 0 {
			names = []string{""}
		}
		for _, g := range rule.APIGroups {
			for _, res := range rule.Resources {
				for _, v := range rule.Verbs {
					if g == "*" || res == "*" || v == "*" {
						return nil, fmt.Errorf("wildcard in rule %+v", rule)
					}
					for _, n := range names {
						out[Grant{g, res, v, n}] = true
					}
				}
			}
		}
	}
	return out, nil
}
