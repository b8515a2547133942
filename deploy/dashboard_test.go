package deploy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/yaml"

	"github.com/inferscale/inferscale/shared/export"
)

// exporterSeries are the names the exporter serves over the golden state (which has every one of them).
func exporterSeries(t *testing.T) map[string]bool {
	t.Helper()
	reg := prometheus.NewRegistry()
	at := time.Date(2026, 12, 1, 12, 1, 0, 0, time.UTC)
	c := export.NewCollector(export.File{Path: filepath.Join(repoRoot(t), "shared", "export", "testdata", "state.json")},
		export.Options{Interval: 15 * time.Second, Now: func() time.Time { return at }})
	reg.MustRegister(c)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, mf := range mfs {
		out[mf.GetName()] = true
	}
	return out
}

// promqlWords are the PromQL functions, aggregations and keywords the dashboard may use besides series names.
var promqlWords = map[string]bool{"sum": true, "max": true, "min": true, "avg": true, "count": true, "rate": true, "increase": true,
	"irate": true, "delta": true, "changes": true, "max_over_time": true, "min_over_time": true, "avg_over_time": true, "clamp_min": true,
	"clamp_max": true, "time": true, "by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "bool": true,
	"and": true, "or": true, "unless": true, "offset": true, "timestamp": true, "absent": true}

var (
	// quoted strings, label matchers and range or subquery brackets hold no series names.
	promqlNoNames = regexp.MustCompile(`"[^"]*"|\{[^}]*\}|\[[^\]]*\]|\b(by|without|on|ignoring|group_left)\s*\([^)]*\)`)
	promqlIdent   = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*`)
	promqlNumber  = regexp.MustCompile(`^[0-9.eE+-]+$`)
)

// seriesIn returns the series names an expression refers to (every identifier that is no PromQL word).
func seriesIn(expr string) []string {
	var out []string
	for _, w := range promqlIdent.FindAllString(promqlNoNames.ReplaceAllString(expr, " "), -1) {
		if !promqlWords[w] && !promqlNumber.MatchString(w) {
			out = append(out, w)
		}
	}
	return out
}

// The Grafana dashboard is valid JSON, and every panel's every query names only series the exporter serves.
func TestGrafanaDashboardQueriesOnlyExporterSeries(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "deploy", "grafana-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Title  string `json:"title"`
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("deploy/grafana-dashboard.json: %v", err)
	}
	served := exporterSeries(t)
	used := map[string]bool{}
	for _, p := range d.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, q := range p.Targets {
			names := seriesIn(q.Expr)
			if len(names) == 0 {
				t.Errorf("panel %q: query %q names no series", p.Title, q.Expr)
			}
			for _, n := range names {
				used[n] = true
				if !served[n] {
					t.Errorf("panel %q: query %q names %s, which the exporter does not serve", p.Title, q.Expr, n)
				}
			}
		}
	}
	// Every series the exporter serves is on the dashboard but the build info.
	for n := range served {
		if !used[n] && n != "inferscale_exporter_build_info" {
			t.Errorf("the dashboard shows no panel of %s", n)
		}
	}
}

func TestSeriesInFindsEveryName(t *testing.T) {
	got := strings.Join(seriesIn(`sum by (reason) (rate(inferscale_a_total{pod=~"x.*",le="0.5"}[5m])) / on(x) inferscale_b > 0 or vector_thing`), ",")
	if got != "inferscale_a_total,inferscale_b,vector_thing" {
		t.Fatalf("seriesIn = %s", got)
	}
}

// The alerting rules docs/sre.md offers name only series the exporter serves.
func TestSREAlertRulesNameExporterSeries(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "sre.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "## Alerts on the exporter's series")
	_, block, ok2 := strings.Cut(section, "```yaml\n")
	block, _, ok3 := strings.Cut(block, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("docs/sre.md has no yaml block under \"## Alerts on the exporter's series\"")
	}
	var rules struct {
		Groups []struct {
			Name  string `json:"name"`
			Rules []struct {
				Alert string `json:"alert"`
				Expr  string `json:"expr"`
				For   string `json:"for"`
			} `json:"rules"`
		} `json:"groups"`
	}
	if err := yaml.UnmarshalStrict([]byte(block), &rules); err != nil {
		t.Fatalf("docs/sre.md rules: %v", err)
	}
	served, n := exporterSeries(t), 0
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			n++
			for _, name := range seriesIn(r.Expr) {
				if !served[name] {
					t.Errorf("alert %s: %q names %s, which the exporter does not serve", r.Alert, r.Expr, name)
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no rule in docs/sre.md")
	}
}
