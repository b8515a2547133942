package preset

import (
	"bytes"
	"encoding/json"
	"path"
	"reflect"
	"testing"
	"unicode/utf8"

	"github.com/inferscale/inferscale/internal/jsontest"
	"github.com/tidwall/gjson"
)

// presetCases must decode as json.Decoder with DisallowUnknownFields
// decodes them (or fail when it fails).
var presetCases = []string{
	`{"name":"x","description":"d","detect":["a","b"],"signals":{"waiting":{"families":["f"],"labels":{"model":"m"},"scale":0.001,"agg":"mean"},"ttft":null},"notes":[]}`,
	`{"name":"x","detect":null,"signals":null,"notes":["n",null]}`,
	`{"signals":{"waiting":{"families":[],"labels":null,"scale":1e2,"agg":null}}}`,
	`null`,
	`{}`,
	`{"name":"x","extra":1}`,
	`{"signals":{"waiting":{"family":["f"]}}}`,
	`{"signals":{"waiting":{"scale":"1"}}}`,
	`{"signals":{"waiting":{"scale":1e400}}}`,
	`{"signals":{"waiting":{"labels":{"a":1}}}}`,
	`{"signals":{"waiting":[]}}`,
	`{"signals":[]}`,
	`{"detect":"a"}`,
	`{"detect":[1]}`,
	`{"name":5}`,
	`[]`,
}

func TestDecodeJSONMatchesEncodingJSON(t *testing.T) {
	for _, in := range presetCases {
		comparePresetDecode(t, in)
	}
	for _, name := range BuiltinNames() {
		b, err := serverFiles.ReadFile(path.Join("servers", name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		comparePresetDecode(t, string(b))
	}
}

func FuzzDecodeJSONMatchesEncodingJSON(f *testing.F) {
	for _, in := range presetCases {
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		// Outside the promise: invalid UTF-8, repeated keys and keys that
		// match a field only when case is ignored, documents with
		// trailing data (a json.Decoder stops after the first value).
		if !utf8.ValidString(in) || !gjson.Valid(in) || !jsontest.ExactKeys(gjson.Parse(in), jsontest.FieldNames(Preset{}, Reading{})) {
			return
		}
		comparePresetDecode(t, in)
	})
}

func comparePresetDecode(t *testing.T, in string) {
	t.Helper()
	var want Preset
	dec := json.NewDecoder(bytes.NewReader([]byte(in)))
	dec.DisallowUnknownFields()
	werr := dec.Decode(&want)
	got, gerr := decodeJSON(in)
	switch {
	case (werr == nil) != (gerr == nil):
		t.Errorf("%q: encoding/json error %v, decodeJSON error %v", in, werr, gerr)
	case werr == nil && !reflect.DeepEqual(*got, want):
		t.Errorf("%q:\ndecodeJSON    %+v\nencoding/json %+v", in, *got, want)
	}
}
