package jsonread

import (
	"testing"
	"time"

	"github.com/tidwall/gjson"
)

type doc struct {
	Name  string
	On    bool
	F     float64
	FP    *float64
	N     int
	NP    *int
	T     time.Time
	TP    *time.Time
	Tags  []string
	Items []int
}

func read(s string) (doc, error) {
	var d Reader
	var out doc
	d.Object(gjson.Parse(s), func(k string, x gjson.Result) {
		switch k {
		case "name":
			d.String(x, &out.Name)
		case "on":
			d.Bool(x, &out.On)
		case "f":
			d.Float(x, &out.F)
		case "fp":
			out.FP = d.FloatPtr(x)
		case "n":
			d.Int(x, &out.N)
		case "np":
			out.NP = d.IntPtr(x)
		case "t":
			d.Time(x, &out.T)
		case "tp":
			out.TP = d.TimePtr(x)
		case "tags":
			out.Tags = d.Strings(x)
		case "items":
			out.Items = Slice(&d, x, func(e gjson.Result, n *int) { d.Int(e, n) })
		default:
			d.Unknown(k)
		}
	})
	return out, d.Err()
}

func TestReaderReadsEveryKind(t *testing.T) {
	got, err := read(`{"name":"a\u00e9","on":true,"f":1.5e3,"fp":-2,"n":7,"np":0,
		"t":"2026-01-02T03:04:05Z","tp":"2026-01-02T03:04:05.5+01:00","tags":["x",null],"items":[]}`)
	if err != nil {
		t.Fatal(err)
	}
	want := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if got.Name != "aé" || !got.On || got.F != 1500 || got.FP == nil || *got.FP != -2 || got.N != 7 ||
		got.NP == nil || *got.NP != 0 || !got.T.Equal(want) || got.TP == nil ||
		!got.TP.Equal(want.Add(-time.Hour+500*time.Millisecond)) {
		t.Errorf("got %+v", got)
	}
	if len(got.Tags) != 2 || got.Tags[0] != "x" || got.Tags[1] != "" {
		t.Errorf("tags %q", got.Tags)
	}
	if got.Items == nil || len(got.Items) != 0 {
		t.Errorf("a present empty array must give an empty non-nil slice, got %#v", got.Items)
	}
}

func TestReaderNullLeavesValuesAlone(t *testing.T) {
	got, err := read(`{"name":"a","name":null,"n":3,"n":null,"fp":null,"np":null,"tp":null,"tags":null,"items":null}`)
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "a" || got.N != 3 || got.FP != nil || got.NP != nil || got.TP != nil || got.Tags != nil || got.Items != nil {
		t.Errorf("got %+v", got)
	}
	if _, err := read(`null`); err != nil {
		t.Errorf("null document: %v", err)
	}
}

func TestReaderNamesTheFirstBadField(t *testing.T) {
	for doc, want := range map[string]string{
		`{"name":1}`:                  `name: want a string, got 1`,
		`{"on":"yes"}`:                `on: want true or false, got "yes"`,
		`{"f":"1"}`:                   `f: want a number, got "1"`,
		`{"fp":1e999}`:                `fp: want a number in float64 range, got 1e999`,
		`{"n":1.5}`:                   `n: want an integer, got 1.5`,
		`{"np":99999999999999999999}`: `np: want an integer, got 99999999999999999999`,
		`{"tags":"x"}`:                `tags: want an array of strings, got "x"`,
		`{"tags":["a",2]}`:            `tags: [1]: want a string, got 2`,
		`{"items":{}}`:                `items: want an array, got {}`,
		`{"items":[1,true,"x"]}`:      `items: [1]: want an integer, got true`,
		`{"zzz":1,"name":2}`:          `zzz: unknown field "zzz"`,
		`[1]`:                         `want an object, got [1]`,
		`{"t":"yesterday"}`:           `t: parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"`,
	} {
		_, err := read(doc)
		if err == nil || err.Error() != want {
			t.Errorf("%s: got error %v, want %s", doc, err, want)
		}
	}
}

func TestReaderKeepsTheFirstError(t *testing.T) {
	var d Reader
	d.Keep(nil)
	if d.Err() != nil {
		t.Fatal("Keep(nil) recorded an error")
	}
	d.Fail(gjson.Parse(`1`), "a string")
	d.Unknown("k")
	d.Fail(gjson.Parse(`2`), "an object")
	if got := d.Err().Error(); got != "want a string, got 1" {
		t.Errorf("got %q", got)
	}
	called := false
	d.Object(gjson.Parse(`{"a":1}`), func(string, gjson.Result) { called = true })
	d.Array(gjson.Parse(`[1]`), func(gjson.Result) { called = true }, func() { called = true })
	if called {
		t.Error("Object/Array read on after an error")
	}
}

func TestSliceReadsElementsInOrder(t *testing.T) {
	got, err := read(`{"items":[3,null,-1],"items":[4,5]}`)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Items) != 2 || got.Items[0] != 4 || got.Items[1] != 5 {
		t.Errorf("a repeated key must replace the slice, got %v", got.Items)
	}
	got, err = read(`{"items":[3,null,-1]}`)
	if err != nil || len(got.Items) != 3 || got.Items[0] != 3 || got.Items[1] != 0 || got.Items[2] != -1 {
		t.Errorf("got %v, %v", got.Items, err)
	}
}
