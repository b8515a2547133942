package decisionlog

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"
)

// FuzzParse: whatever the log, Parse never panics, every decision it
// returns is valid and writes back to a line that parses to the same one.
func FuzzParse(f *testing.F) {
	var b bytes.Buffer
	_ = Write(&b, sample(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC), 3, 5))
	one := b.String()
	f.Add(one)
	f.Add("I1201 12:00:00.1 1 shell.go:84] Shell command stderr: " + one + one)
	f.Add(strings.TrimSuffix(one, "}\n"))
	f.Add(`{"inferscale":"decision/v1","time":"2026-12-01T12:00:00Z","mode":"advisory","current":0,"target":0,"rules":[{"name":"q","value":1e308}]}`)
	f.Add(`{"inferscale":"decision/{"inferscale":"decision/v1"`)
	f.Fuzz(func(t *testing.T, log string) {
		got, _ := Parse(strings.NewReader(log))
		for _, l := range got {
			if err := l.Validate(); err != nil {
				t.Fatalf("Parse returned an invalid line %+v: %v", l, err)
			}
			var w bytes.Buffer
			if err := Write(&w, l); err != nil {
				t.Fatalf("a parsed line does not write back: %v", err)
			}
			again, errs := Parse(&w)
			if len(again) != 1 || len(errs) != 0 {
				t.Fatalf("written line %q parses to %v, %v", w.String(), again, errs)
			}
			normalise(&l)
			normalise(&again[0])
			if !reflect.DeepEqual(again[0], l) {
				t.Fatalf("round trip changed the line:\n%+v\n%+v", l, again[0])
			}
		}
	})
}

// normalise applies what Write does (UTC time, [] for absent lists).
func normalise(l *Line) {
	l.Time = l.Time.UTC()
	if l.Reasons == nil {
		l.Reasons = []string{}
	}
	if l.Alerts == nil {
		l.Alerts = []string{}
	}
	if l.Rules == nil {
		l.Rules = []Rule{}
	}
}
