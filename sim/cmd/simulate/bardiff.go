package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/inferscale/inferscale/sim/bar"
)

// cmdBarDiff prints what moved between two bar runs (simulate bar -json)
// as Markdown: make bar-delta's last step.
func cmdBarDiff(args []string, w io.Writer) error {
	fs := flag.NewFlagSet("bar-diff", flag.ContinueOnError)
	oldLabel := fs.String("old-label", "", "what the old run was (default: its file name)")
	newLabel := fs.String("new-label", "", "what the new run was (default: its file name)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: simulate bar-diff [-old-label L] [-new-label L] OLD.json NEW.json  (files from simulate bar -json)")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return parseErr(err)
	}
	if fs.NArg() != 2 {
		fs.Usage()
		return fmt.Errorf("bar-diff: want two reports, OLD.json NEW.json; got %d arguments", fs.NArg())
	}
	old, err := readReport(fs.Arg(0))
	if err != nil {
		return err
	}
	nw, err := readReport(fs.Arg(1))
	if err != nil {
		return err
	}
	return bar.WriteDelta(w, bar.Diff(old, nw), label(*oldLabel, fs.Arg(0)), label(*newLabel, fs.Arg(1)))
}

func label(l, path string) string {
	if l != "" {
		return l
	}
	return filepath.Base(path)
}

// readReport reads one bar report file.
func readReport(path string) (bar.Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return bar.Report{}, fmt.Errorf("bar-diff: %w", err)
	}
	defer f.Close()
	r, err := bar.ReadReport(f)
	if err != nil {
		return bar.Report{}, fmt.Errorf("bar-diff: %s: %w", path, err)
	}
	return r, nil
}
