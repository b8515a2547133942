package state

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

var updateSchema = flag.Bool("update-schema", false, "record fields added to the persisted state in testdata/schema-v<Version>.txt")

// TestPersistedSchemaIsPinned pins the persisted state's schema: every
// JSON path a state document can hold, with its type, over State and the
// forecast, model and signal types it embeds (testdata/schema-v<Version>.txt).
//
// The rule (docs/evaluate.md, "State"): adding an optional field needs no
// new Version (a state written before it still decodes; an older binary
// discards a newer state once, with a StateReset Event) — record it with
// `go test ./shared/state -run TestPersistedSchemaIsPinned -update-schema`.
// Renaming, removing or retyping a field would make every stored state
// fail the strict decode and silently reset every fleet's learned model:
// bump Version, keep the old schema file, and add a migration or an
// explicit reset. This test fails on such a change without a bump.
func TestPersistedSchemaIsPinned(t *testing.T) {
	current := schemaLines(reflect.TypeOf(State{}))
	path := filepath.Join("testdata", fmt.Sprintf("schema-v%d.txt", Version))
	b, err := os.ReadFile(path)
	if err != nil && !*updateSchema {
		t.Fatalf("%v: Version %d has no pinned schema (run with -update-schema once the migration is in place)", err, Version)
	}
	pinned := lines(string(b))
	var gone, added []string
	for _, l := range pinned {
		if !slices.Contains(current, l) {
			gone = append(gone, l)
		}
	}
	for _, l := range current {
		if !slices.Contains(pinned, l) {
			added = append(added, l)
		}
	}
	if len(gone) > 0 {
		t.Fatalf("the persisted state's schema lost or changed %d path(s) pinned for Version %d:\n  %s\n"+
			"every stored state would fail the strict decode: bump state.Version, keep %s and add a migration (or an explicit reset)",
			len(gone), Version, strings.Join(gone, "\n  "), path)
	}
	if len(added) > 0 {
		if !*updateSchema {
			t.Fatalf("%d path(s) added to the persisted state, not yet pinned:\n  %s\n"+
				"optional additions need no new Version: record them with -update-schema", len(added), strings.Join(added, "\n  "))
		}
		if err := os.WriteFile(path, []byte(strings.Join(current, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// A stored state of the pinned schema decodes strictly and re-encodes to
// the same document (testdata/state-v<Version>.json: a state that went
// through 40 minutes of the simulator's demo in fast mode: the service
// model, forecast, needs, pods and histories populated).
func TestPinnedStateDocumentStillDecodes(t *testing.T) {
	path := filepath.Join("testdata", fmt.Sprintf("state-v%d.json", Version))
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := Decode(b)
	if err != nil {
		t.Fatalf("%s no longer decodes: %v (a stored state of this Version would be reset)", path, err)
	}
	again, err := Encode(st)
	if err != nil {
		t.Fatal(err)
	}
	var x, y any
	if err := json.Unmarshal(b, &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(again, &y); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(x, y) {
		t.Errorf("%s does not survive a decode and encode unchanged", path)
	}
}

func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// schemaLines lists "path type" for every JSON path of t, sorted.
func schemaLines(t reflect.Type) []string {
	var out []string
	walkSchema(t, "$", map[reflect.Type]bool{}, &out)
	slices.Sort(out)
	return slices.Compact(out)
}

var (
	timeType = reflect.TypeOf(time.Time{})
	rawType  = reflect.TypeOf(json.RawMessage{})
)

func walkSchema(t reflect.Type, path string, seen map[reflect.Type]bool, out *[]string) {
	switch {
	case t == timeType:
		*out = append(*out, path+" time")
		return
	case t == rawType:
		*out = append(*out, path+" raw")
		return
	}
	switch t.Kind() {
	case reflect.Pointer:
		walkSchema(t.Elem(), path, seen, out)
	case reflect.Slice, reflect.Array:
		walkSchema(t.Elem(), path+"[]", seen, out)
	case reflect.Map:
		walkSchema(t.Elem(), path+"{"+t.Key().Kind().String()+"}", seen, out)
	case reflect.Struct:
		if seen[t] {
			*out = append(*out, path+" recursive "+t.String())
			return
		}
		seen[t] = true
		defer delete(seen, t)
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			if f.Anonymous && name == "" {
				walkSchema(f.Type, path, seen, out)
				continue
			}
			if name == "" {
				name = f.Name
			}
			walkSchema(f.Type, path+"."+name, seen, out)
		}
	default:
		*out = append(*out, path+" "+t.Kind().String())
	}
}
