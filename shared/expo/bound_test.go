package expo_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/inferscale/inferscale/shared/expo"
)

// series is one sample line of a wanted family with n labels.
func series(n int, value string) string {
	var b strings.Builder
	b.WriteString("vllm:num_requests_waiting{")
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "l%d=%q", i, value)
	}
	b.WriteString("} 1\n")
	return b.String()
}

// N6 (issue 15): expfmt checks each label of a sample against all the
// labels before it, so one series with many labels cost quadratic time
// (4k labels 0.8 s, 16k 15.5 s, 32k 65 s; a 7.9 MiB line over 2 min), and
// nothing bounded it. A line beyond MaxLabels labels or MaxLineBytes bytes
// is refused before the parser sees it (the pod's readings fail: unknown,
// never low), in both formats and whether or not the family is wanted as a
// whole; quoted '=', '{' and '"' in label values do not count.
func TestALineBeyondItsBoundsIsRefused(t *testing.T) {
	want := expo.Wanted{"vllm:num_requests_waiting": true}
	ctx := context.Background()
	for name, c := range map[string]struct {
		body string
		ok   bool
	}{
		"MaxLabels labels":           {series(expo.MaxLabels, `a=b{"c\"}=`), true},
		"MaxLabels+1 labels":         {series(expo.MaxLabels+1, "v"), false},
		"16k labels":                 {series(16<<10, "v"), false},
		"a line over MaxLineBytes":   {series(1, strings.Repeat("x", expo.MaxLineBytes)), false},
		"many short lines":           {strings.Repeat("vllm:num_requests_waiting 1\n", 1) + strings.Repeat("# a comment\n", 100000), true},
		"a HELP line with = signs":   {"# HELP vllm:num_requests_waiting " + strings.Repeat("a=b ", 1000) + "\n" + series(1, "v"), true},
		"labels spread over 2 lines": {series(expo.MaxLabels/2+1, "v") + strings.Replace(series(expo.MaxLabels/2+1, "w"), "l0=", "m0=", 1), true},
	} {
		for _, ct := range []string{"text/plain", "application/openmetrics-text; version=1.0.0"} {
			body := c.body
			if strings.HasPrefix(ct, "application/openmetrics") {
				body = strings.ReplaceAll(body, "# a comment\n", "") + "# EOF\n"
			}
			for _, w := range []expo.Wanted{want, nil} {
				_, err := expo.ParseWanted(ctx, []byte(body), ct, w)
				if (err == nil) != c.ok {
					t.Errorf("%s (%s, want %v): err %v", name, ct, w != nil, err)
				}
			}
		}
	}
}

// N6: parsing stops when the scrape's context ends, so a slow parse can
// not outlast the per-pod deadline.
func TestParsingStopsAtTheDeadline(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := expo.ParseWanted(ctx, []byte(series(2, "v")), "text/plain", nil); err == nil || !strings.Contains(err.Error(), "canceled") {
		t.Errorf("a parse after the deadline: %v", err)
	}
}
