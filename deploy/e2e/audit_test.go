//go:build e2e

package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/inferscale/inferscale/internal/rbacgrant"
)

// apiCall is one request the API server's audit log recorded.
type apiCall struct {
	User      string
	UserAgent string
	Verb      string
	Group     string
	Resource  string // with "/subresource"
	Namespace string
	Name      string
	Code      int
	At        time.Time
}

// grant is the RBAC view of a call: what a Role rule must allow for it.
type grant = rbacgrant.Grant

func (a apiCall) grant() grant {
	return grant{Group: a.Group, Resource: a.Resource, Verb: a.Verb, Name: a.Name}
}

// auditCalls reads the audit log (ResponseComplete events) of user since a time.
func (c *cluster) auditCalls(user string, since time.Time) ([]apiCall, error) {
	f, err := os.Open(c.audit)
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	defer f.Close()
	var out []apiCall
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var ev struct {
			Stage string `json:"stage"`
			User  struct {
				Username string `json:"username"`
			} `json:"user"`
			UserAgent string `json:"userAgent"`
			Verb      string `json:"verb"`
			ObjectRef *struct {
				Resource    string `json:"resource"`
				Namespace   string `json:"namespace"`
				Name        string `json:"name"`
				APIGroup    string `json:"apiGroup"`
				Subresource string `json:"subresource"`
			} `json:"objectRef"`
			ResponseStatus struct {
				Code int `json:"code"`
			} `json:"responseStatus"`
			RequestReceivedTimestamp time.Time `json:"requestReceivedTimestamp"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return nil, fmt.Errorf("audit log line: %w", err)
		}
		if ev.Stage != "ResponseComplete" || ev.User.Username != user || ev.ObjectRef == nil || ev.RequestReceivedTimestamp.Before(since) {
			continue
		}
		res := ev.ObjectRef.Resource
		if ev.ObjectRef.Subresource != "" {
			res += "/" + ev.ObjectRef.Subresource
		}
		out = append(out, apiCall{User: ev.User.Username, UserAgent: ev.UserAgent, Verb: ev.Verb, Group: ev.ObjectRef.APIGroup,
			Resource: res, Namespace: ev.ObjectRef.Namespace, Name: ev.ObjectRef.Name, Code: ev.ResponseStatus.Code,
			At: ev.RequestReceivedTimestamp})
	}
	return out, sc.Err()
}

// program is who made a call, from its User-Agent: "custom-pod-autoscaler" (client-go's default agent names the
// binary), or "inferscale" for metric and evaluate (shared/kube).
func (a apiCall) program() string {
	ua := strings.ToLower(a.UserAgent)
	switch {
	case strings.HasPrefix(ua, "custom-pod-autoscaler"):
		return "cpa"
	case strings.HasPrefix(ua, "inferscale"), strings.HasPrefix(ua, "go-http-client"):
		return "inferscale"
	}
	return a.UserAgent
}

func sortedGrants(m map[grant]bool) []string {
	var out []string
	for g := range m {
		out = append(out, g.String())
	}
	sort.Strings(out)
	return out
}
