package cli

import (
	"bytes"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	c := Command{Name: "evaluate", Usage: "reads CPA's evaluate input"}
	for _, tc := range []struct {
		name     string
		args     []string
		terminal bool
		code     int
		done     bool
		stdout   string
		stderr   string
	}{
		{name: "no arguments, a pipe: run", args: nil, code: 0, done: false},
		{name: "help", args: []string{"--help"}, code: 0, done: true, stdout: "usage: evaluate < input.json"},
		{name: "short help", args: []string{"-h"}, code: 0, done: true, stdout: "reads CPA's evaluate input"},
		{name: "version", args: []string{"--version"}, code: 0, done: true, stdout: "evaluate "},
		{name: "unknown flag", args: []string{"--bogus"}, code: 2, done: true, stderr: "-bogus"},
		{name: "stray argument", args: []string{"input.json"}, code: 2, done: true, stderr: `unexpected argument "input.json"`},
		{name: "terminal on stdin", terminal: true, code: 2, done: true, stderr: "stdin is a terminal"},
		{name: "help on a terminal still helps", args: []string{"--help"}, terminal: true, code: 0, done: true, stdout: "usage:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code, done := c.Parse(tc.args, &out, &errb, func() bool { return tc.terminal })
			if code != tc.code || done != tc.done {
				t.Fatalf("Parse(%q) = %d, %v; want %d, %v", tc.args, code, done, tc.code, tc.done)
			}
			if !strings.Contains(out.String(), tc.stdout) || (tc.stdout == "" && out.Len() > 0) {
				t.Errorf("stdout %q, want it to contain %q", out.String(), tc.stdout)
			}
			if !strings.Contains(errb.String(), tc.stderr) || (tc.stderr == "" && errb.Len() > 0) {
				t.Errorf("stderr %q, want it to contain %q", errb.String(), tc.stderr)
			}
		})
	}
}

func TestVersionIsNeverEmpty(t *testing.T) {
	if Version() == "" {
		t.Fatal("empty version")
	}
}
