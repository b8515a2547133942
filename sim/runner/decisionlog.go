package runner

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/inferscale/inferscale/sim/inferscale"
)

// logged wraps a fast inferscale replay so that every tick's decision line
// goes to its file in opt.DecisionLogs: the log evaluate writes on stderr,
// which `simulate decisions -log FILE` reads.
func logged(fast *inferscale.Fast, opt Options) (*Built, error) {
	name := opt.LogName
	if name == "" {
		name = fast.Name()
	}
	path := filepath.Join(opt.DecisionLogs, LogFileName(name))
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("decision log: %w", err)
	}
	l := &inferscale.Logged{Fast: fast, W: f}
	return &Built{Policy: l, Close: func() error {
		return errors.Join(l.Err, f.Close())
	}}, nil
}

// LogFileName is the decision log file of a replay named name: its
// letters, digits and ".=-" kept, every other rune an underscore.
func LogFileName(name string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '=', r == '-':
			return r
		}
		return '_'
	}, name) + ".log"
}
