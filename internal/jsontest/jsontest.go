// Package jsontest supports the differential tests that compare the
// project's reflection-free JSON decoders with encoding/json. The two differ
// by design only on repeated keys and on keys that match a field name only
// when case is ignored (encoding/json accepts both); ExactKeys tells which
// inputs are outside that gap and so must decode identically.
package jsontest

import (
	"reflect"
	"strings"

	"github.com/tidwall/gjson"
)

// FieldNames maps the lower-cased JSON key of every field of the given
// struct values to its exact spelling.
func FieldNames(structs ...any) map[string]string {
	names := map[string]string{}
	for _, s := range structs {
		typ := reflect.TypeOf(s)
		for i := 0; i < typ.NumField(); i++ {
			tag, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
			names[strings.ToLower(tag)] = tag
		}
	}
	return names
}

// ExactKeys reports whether no object in v repeats a key (ignoring case) and
// no key differs from one of names only by case.
func ExactKeys(v gjson.Result, names map[string]string) bool {
	ok := true
	var walk func(v gjson.Result)
	walk = func(v gjson.Result) {
		if !v.IsObject() && !v.IsArray() {
			return
		}
		seen := map[string]bool{}
		v.ForEach(func(k, x gjson.Result) bool {
			if v.IsObject() {
				lower := strings.ToLower(k.Str)
				if seen[lower] || (names[lower] != "" && names[lower] != k.Str) {
					ok = false
				}
				seen[lower] = true
			}
			walk(x)
			return ok
		})
	}
	walk(v)
	return ok
}
