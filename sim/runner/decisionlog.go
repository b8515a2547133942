package runner

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/inferscale/inferscale/sim/engine"
	"github.com/inferscale/inferscale/sim/inferscale"
)

// logged wraps a fast inferscale replay so that every tick's decision line
// goes to its file in opt.DecisionLogs: the log evaluate writes on stderr,
// which `simulate decisions -log FILE` reads.
func logged(fast *inferscale.Fast, opt Options) (*Built, error) {
	f, err := createLog(fast.Name(), opt)
	if err != nil {
		return nil, err
	}
	l := &inferscale.Logged{Fast: fast, W: f}
	return &Built{Policy: l, Close: func() error {
		return errors.Join(l.Err, f.Close())
	}}, nil
}

// faithful builds a faithful replay (the binaries through the CPA
// contract), its decision log the lines evaluate writes on stderr where
// opt.DecisionLogs asks for one.
func faithful(label string, env map[string]string, cfg engine.Config, opt Options) (*Built, error) {
	fo := inferscale.FaithfulOptions{Name: label, BinDir: opt.BinDir, Env: env, CPA: opt.CPA, Base: cfg.Base}
	var logFile *os.File
	if opt.DecisionLogs != "" {
		var err error
		if logFile, err = createLog(label, opt); err != nil {
			return nil, err
		}
		fo.DecisionLog = logFile
	}
	f, err := inferscale.NewFaithful(fo)
	if err != nil {
		if logFile != nil {
			_ = logFile.Close()
		}
		return nil, err
	}
	return &Built{Policy: f, Close: func() error {
		err := f.Close()
		if logFile != nil {
			err = errors.Join(err, logFile.Close())
		}
		return err
	}}, nil
}

// createLog creates the decision log file of the replay named name
// (opt.LogName where set) in opt.DecisionLogs.
func createLog(name string, opt Options) (*os.File, error) {
	if opt.LogName != "" {
		name = opt.LogName
	}
	f, err := os.Create(filepath.Join(opt.DecisionLogs, LogFileName(name)))
	if err != nil {
		return nil, fmt.Errorf("decision log: %w", err)
	}
	return f, nil
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
