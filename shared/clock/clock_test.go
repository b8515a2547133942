package clock

import (
	"testing"
	"time"
)

func TestNow(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == EnvNow {
				return v
			}
			return ""
		}
	}
	got, err := Now(env("2026-01-02T03:04:05Z"))
	if err != nil || !got.Equal(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)) {
		t.Fatalf("RFC 3339: got %v, %v", got, err)
	}
	got, err = Now(env("1700000000.5"))
	if err != nil || !got.Equal(time.Unix(1700000000, 500000000)) {
		t.Fatalf("unix seconds: got %v, %v", got, err)
	}
	before := time.Now()
	got, err = Now(env(""))
	if err != nil || got.Before(before) {
		t.Fatalf("no override: got %v, %v", got, err)
	}
	for _, bad := range []string{"yesterday", "NaN", "-5", "1e300", "2026-13-01T00:00:00Z"} {
		if _, err := Now(env(bad)); err == nil {
			t.Errorf("Now(%q) accepted a bad value", bad)
		}
	}
}
