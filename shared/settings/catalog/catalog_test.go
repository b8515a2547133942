package catalog

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferscale/inferscale/internal/testenv"
	"github.com/inferscale/inferscale/shared/settings"
)

// Every knob is declared once, across the stages, and documented.
func TestEveryKnobOnceWithADoc(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range All() {
		if seen[k.Key] {
			t.Errorf("knob %s declared twice", k.Key)
		}
		seen[k.Key] = true
		if k.Doc == "" {
			t.Errorf("knob %s has no doc", k.Key)
		}
	}
	if len(seen) < 80 {
		t.Errorf("the catalog has %d knobs: a stage is missing", len(seen))
	}
}

var updateDocs = flag.Bool("update-docs", false, "rewrite the knob tables in docs/configuration.md and shared/settings/keys.go")

// docs/configuration.md holds the tables Table generates from the tags,
// between its markers.
func TestConfigurationDocMatchesTheKnobs(t *testing.T) {
	const begin, end = "<!-- knobs:begin (go test ./shared/settings/catalog -update-docs) -->\n", "<!-- knobs:end -->"
	path := filepath.Join(testenv.ModuleRoot(t), "docs", "configuration.md")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("%s has no %q ... %q section", path, begin, end)
	}
	want := doc[:i+len(begin)] + settings.Table(All()) + doc[j:]
	checkGenerated(t, path, doc, want)
}

// settings.Keys, which a stage checks a policy file against without
// linking the other stage's knobs, is every stage's keys.
func TestKeysAreEveryStagesKeys(t *testing.T) {
	path := filepath.Join(testenv.ModuleRoot(t), "shared", "settings", "keys.go")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	checkGenerated(t, path, string(b), settings.KeysSource(All()))
}

// Every key of the catalog is known: none is reported as a miss of another.
func TestNoCatalogKeyIsANearMiss(t *testing.T) {
	var env []string
	for _, k := range All() {
		env = append(env, k.Key+"=1")
	}
	if got := settings.NearMisses(env); len(got) != 0 {
		t.Fatalf("catalog keys reported as near misses: %+v", got)
	}
}

// checkGenerated fails when the file at path, holding got, is not want, or
// rewrites it with -update-docs.
func checkGenerated(t *testing.T, path, got, want string) {
	t.Helper()
	if *updateDocs {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got != want {
		t.Fatalf("%s is out of date with the knobs' tags: go test ./shared/settings/catalog -update-docs", path)
	}
}
