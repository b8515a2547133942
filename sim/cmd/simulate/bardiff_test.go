package main

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func fixture(name string) string { return filepath.Join("testdata", "bar-diff", name) }

func TestBarDiffShowsWhatMoved(t *testing.T) {
	var b strings.Builder
	if err := cmdBarDiff([]string{"-old-label", "main", fixture("old.json"), fixture("new.json")}, &b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"bar delta, main → new.json: policy inferscale, flags `-only=azure-code -quick=true -shared=../shared`; 2 cells in both, 1 moved, 1 unchanged",
		// The moved cell: every figure old → new, the ratio, the criteria that flipped.
		"| azure-code/s1/gpu×1/60s | 98.500% → 99.500% | 2.000 → 2.200 | 1.100 | 1.05 → 0.00 | 0 | 2 → 0 | 3 | att FAIL→pass, flaps FAIL→pass, no down@breach FAIL→pass, all FAIL→pass |",
		"only in main: azure-code/s1/gpu×0.5/60s",
		"only in new.json: azure-code/s1/gpu×1/180s~0.5",
		"- att: 2/3 → 3/3\n",
		"- 0 killed: 3/3 → 3/3 (=)\n",
		"- all: 1/3 → 3/3\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("bar-diff output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "| azure-code/s1/gpu×2/60s") {
		t.Errorf("the unchanged cell has a row:\n%s", out)
	}
}

func TestBarDiffOfARunWithItselfIsEmpty(t *testing.T) {
	var b strings.Builder
	if err := cmdBarDiff([]string{fixture("new.json"), fixture("new.json")}, &b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.Contains(out, "3 cells in both, 0 moved, 3 unchanged") || strings.Contains(out, "| cell |") || strings.Contains(out, "only in") {
		t.Errorf("a run against itself should move nothing:\n%s", out)
	}
	if n := strings.Count(out, "(=)"); n != 9 {
		t.Errorf("%d counts marked equal, want all 9 (7 criteria, and the cost against the static fleet and the oracle of both objectives):\n%s", n, out)
	}
}

func TestBarDiffRejectsBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // in the error
	}{
		{[]string{fixture("old.json")}, "want two reports"},
		{[]string{fixture("old.json"), fixture("new.json"), fixture("new.json")}, "want two reports"},
		{[]string{fixture("old.json"), fixture("missing.json")}, "no such file"},
		{[]string{fixture("old.json"), fixture("truncated.json")}, "truncated.json: not a bar report"},
		{[]string{fixture("wrong-format.json"), fixture("new.json")}, `format "inferscale-bar/0"`},
		{[]string{fixture("old.json"), fixture("twice.json")}, "names cell azure-code/s1/gpu×1/60s twice"},
		{[]string{fixture("empty.json"), fixture("new.json")}, "no rows"},
	} {
		var b strings.Builder
		err := cmdBarDiff(tc.args, &b)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("bar-diff %v: error %v, want one containing %q", tc.args, err, tc.want)
		}
	}
	// Through dispatch, as main sees it: an error, so a non-zero exit.
	if err := dispatch(context.Background(), []string{"bar-diff", fixture("old.json"), fixture("truncated.json")}, quietLog()); err == nil {
		t.Error("simulate bar-diff on a truncated report: accepted")
	}
}

func TestBarJSONFailsBeforeTheCellsWhereItCannotWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing", "bar.json")
	err := dispatch(context.Background(), []string{"bar", "-quick", "-only", "demo/s1/gpu×2/60s", "-shared", ".", "-cache", "", "-json", path}, quietLog())
	if err == nil || !strings.Contains(err.Error(), "-json") {
		t.Fatalf("bar -json into a missing folder: error %v, want a -json error", err)
	}
	if _, err := os.Stat(path); err == nil {
		t.Error("a report file was left behind")
	}
}

func TestBarReportArgsLeaveOutHowFlags(t *testing.T) {
	fs := flag.NewFlagSet("bar", flag.ContinueOnError)
	fs.Bool("quick", false, "")
	fs.Bool("markdown", false, "")
	fs.Int("j", 2, "")
	fs.String("seeds", "1,2,3", "") // not set: not recorded
	for _, name := range []string{"json", "cache", "only", "policy"} {
		fs.String(name, "", "")
	}
	if err := fs.Parse([]string{"-quick", "-j", "1", "-json", "x.json", "-cache", "", "-only", "demo", "-markdown", "-policy", "kpa"}); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(cellFlags(fs), " ")
	if got != "-only=demo -quick=true" {
		t.Errorf("report args %q, want the cell flags only", got)
	}
}
