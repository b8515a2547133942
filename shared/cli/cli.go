// Package cli is the command line of inferscale's binaries. CPA runs
// metric and evaluate with no arguments and the JSON on stdin; a person at
// a terminal gets --help and --version instead of a process that waits on
// stdin, and a stray argument is refused. The exporter, which reads no
// stdin, adds its own flags.
package cli

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"golang.org/x/term"
)

// Command describes one binary for its --help.
type Command struct {
	Name  string // the binary's name, e.g. "evaluate"
	Usage string // what it reads and prints, a few lines
	// Synopsis is the usage line after the name (default "< input.json").
	Synopsis string
	// Flags declares the binary's own flags (nil: only --help and
	// --version); they are set when Parse returns done false.
	Flags func(*flag.FlagSet)
}

// Parse reads args (without the program name). It returns done when the
// process should exit now with code: after --help or --version (0, text
// on stdout) or on a bad argument or a terminal on stdin (2, one line on
// stderr). stdinIsTerminal is asked only when no flag ends the run.
func (c Command) Parse(args []string, stdout, stderr io.Writer, stdinIsTerminal func() bool) (code int, done bool) {
	fs := flag.NewFlagSet(c.Name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	version := fs.Bool("version", false, "print the version and exit")
	if c.Flags != nil {
		c.Flags(fs)
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			c.help(stdout, fs)
			return 0, true
		}
		fmt.Fprintf(stderr, "%s: %v (see %s --help)\n", c.Name, err, c.Name)
		return 2, true
	}
	switch {
	case *version:
		fmt.Fprintf(stdout, "%s %s\n", c.Name, Version())
		return 0, true
	case fs.NArg() > 0:
		fmt.Fprintf(stderr, "%s: unexpected argument %q (usage: %s %s; see %s --help)\n", c.Name, fs.Arg(0), c.Name, c.synopsis(), c.Name)
		return 2, true
	case stdinIsTerminal != nil && stdinIsTerminal():
		fmt.Fprintf(stderr, "%s: stdin is a terminal: it reads CPA's JSON on stdin, e.g. %s < input.json (see %s --help)\n", c.Name, c.Name, c.Name)
		return 2, true
	}
	return 0, false
}

func (c Command) help(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(w, "usage: %s %s\n\n%s\n\nflags:\n", c.Name, c.synopsis(), c.Usage)
	fs.SetOutput(w)
	fs.PrintDefaults()
	fmt.Fprintf(w, "  -help\n    \tprint this text and exit\n\nSettings are environment variables (the CustomPodAutoscaler's config); docs/configuration.md lists them.\n")
}

func (c Command) synopsis() string {
	if c.Synopsis == "" {
		return "< input.json"
	}
	return c.Synopsis
}

// Version is the build's version: the module version when built from a
// tagged module, else the VCS revision (with "+dirty" for a modified
// tree), else "devel".
func Version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	rev, dirty := "", false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "devel"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "+dirty"
	}
	return rev
}

// StdinIsTerminal reports whether the process's stdin is a terminal,
// where CPA would have given a pipe (/dev/null is not one: it reads as
// empty input).
func StdinIsTerminal() bool { return term.IsTerminal(int(os.Stdin.Fd())) }
