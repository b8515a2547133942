package settings

import (
	"reflect"
	"testing"
)

// A variable that is almost a key is reported with the key it misses; the
// process environment's own variables, CPA's keys and the exact keys are not.
func TestNearMissesNameTheKeyTheyMiss(t *testing.T) {
	env := []string{
		"queueTargte=5",    // transposition
		"QUEUETARGET=5",    // case
		"queuetarget=5",    // case
		"ttftSLOSeconds=2", // a known key with something appended
		"kvTarge=0.8",      // deletion
		"queueTarget=4",    // exact: read as usual
		"interval=15000",   // CPA's own key
		"minReplicas=1",    // CPA's and ours
		"PATH=/usr/bin",    // the process environment
		"HOSTNAME=cpa-0",   // ditto
		"KUBERNETES_SERVICE_HOST=10.0.0.1",
		"http_proxy=",       // far from every key
		"scaleTargetRef={}", // the operator's
		"",                  // malformed entries are ignored
		"=x",
	}
	got := NearMisses(env)
	want := []NearMiss{
		{Name: "QUEUETARGET", Key: "queueTarget"},
		{Name: "kvTarge", Key: "kvTarget"},
		{Name: "queueTargte", Key: "queueTarget"},
		{Name: "queuetarget", Key: "queueTarget"},
		{Name: "ttftSLOSeconds", Key: "ttftSLO"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("NearMisses:\n got %+v\nwant %+v", got, want)
	}
}

func TestEditDistance(t *testing.T) {
	for _, c := range []struct {
		a, b  string
		limit int
		want  int
	}{
		{"kitten", "sitting", 3, 3},
		{"kitten", "sitting", 2, 3},
		{"", "abc", 5, 3},
		{"abc", "abc", 0, 0},
		{"abcdef", "ab", 2, 3},
	} {
		if got := editDistance(c.a, c.b, c.limit); got != c.want {
			t.Errorf("editDistance(%q, %q, %d) = %d, want %d", c.a, c.b, c.limit, got, c.want)
		}
	}
}
