package runner

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/inferscale/inferscale/sim/engine"
)

// Check validates specs as Build would, without starting anything, so a
// command can refuse a bad policy list before it loads a trace or
// searches the oracle: every name is known, every parameter parses and
// is in range, and faithful mode finds the two binaries.
func Check(specs []Spec, cfg engine.Config, opt Options) error {
	var errs []error
	for _, sp := range specs {
		if err := check(sp, cfg, opt); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func check(sp Spec, cfg engine.Config, opt Options) error {
	switch sp.Name {
	case Oracle:
		return nil
	case "inferscale":
		if _, _, err := InferscaleConfig(sp.Params, cfg); err != nil {
			return err
		}
		if opt.Mode != Faithful {
			return nil
		}
		for _, name := range []string{"metric", "evaluate"} {
			p := filepath.Join(opt.BinDir, name)
			if st, err := os.Stat(p); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
				return fmt.Errorf("faithful mode needs the built %s binary at %s (run make build)", name, p)
			}
		}
		return nil
	}
	b, err := Build(sp, cfg, opt)
	if err != nil {
		return err
	}
	return b.Close()
}
