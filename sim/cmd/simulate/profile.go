package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/inferscale/inferscale/shared/decide/knobs"
	"github.com/inferscale/inferscale/sim/engine"
)

// cmdProfile prints the `profile` setting (the service model's prior)
// that describes the simulator's fleet model at a GPU speed, for a user
// whose model and GPU match it (or who knows their GPU's speed against it).
func cmdProfile(args []string, w io.Writer) error {
	fs := flag.NewFlagSet("profile", flag.ContinueOnError)
	fs.SetOutput(os.Stderr)
	speed := fs.Float64("gpu-speed", 1, "GPU speed against the simulator's Llama-3.1-8B/H100 model: every time cost divided by it (2: twice as fast)")
	prompt := fs.Int("prompt", engine.TypicalPrompt, "typical prompt length in tokens: β includes the causal-attention cost per token of a prompt this long (PerAttnPair·prompt/2)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: simulate profile [-gpu-speed F] [-prompt N]\nprints the profile setting (alpha=,beta=,gammaSeq=,gammaKv=) of the simulator's fleet model")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return parseErr(err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("profile: unexpected argument %q", fs.Arg(0))
	}
	if !(*speed >= minProfileSpeed && *speed <= maxProfileSpeed) {
		return fmt.Errorf("-gpu-speed %g: want a number from %g to %g", *speed, minProfileSpeed, maxProfileSpeed)
	}
	m := engine.Llama31_8B_H100().Scaled(*speed)
	if *prompt < 1 || *prompt > m.MaxModelLen {
		return fmt.Errorf("-prompt %d: want 1 to %d tokens", *prompt, m.MaxModelLen)
	}
	_, err := fmt.Fprintln(w, knobs.FormatProfile(m.Profile(*prompt)))
	return err
}

// The speeds a profile is printed for: a GPU a thousand times faster or
// slower than an H100 is another model (and its coefficients would print
// as subnormal numbers).
const (
	minProfileSpeed = 1e-3
	maxProfileSpeed = 1e3
)
