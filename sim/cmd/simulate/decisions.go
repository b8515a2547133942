package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/inferscale/inferscale/shared/decisionlog"
	"github.com/inferscale/inferscale/sim/report"
)

// maxReportedErrors bounds the malformed lines listed on stderr.
const maxReportedErrors = 20

// cmdDecisions reads inferscale's decision log (kubectl logs output or a
// file of lines), prints a summary and draws the timeline.
func cmdDecisions(args []string, stdout io.Writer, log *slog.Logger) error {
	fs := flag.NewFlagSet("decisions", flag.ContinueOnError)
	path := fs.String("log", "", "decision log: `kubectl logs` output of the autoscaler pod, or a file of decision lines ('-': stdin)")
	png := fs.String("png", "", "write the decision timeline to this PNG")
	slo := fs.Float64("slo", 0, "TTFT SLO in seconds (0: the one the decisions carry)")
	gpus := fs.Float64("gpus-per-pod", 1, "GPUs per replica, for GPU-hours")
	shown := fs.Int("changes", 30, "list the last N target changes with what decided them")
	strict := fs.Bool("strict", false, "fail on any malformed decision line instead of skipping it")
	if err := fs.Parse(args); err != nil {
		return parseErr(err)
	}
	if *path == "" || fs.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: simulate decisions -log FILE [-png out.png] [-slo seconds] [-gpus-per-pod n] [-strict]")
		return errUsage
	}
	if *slo < 0 {
		return fmt.Errorf("-slo %g: want seconds > 0 (or 0: from the log)", *slo)
	}
	lines, errs, malformed, err := readDecisions(*path)
	if err != nil {
		return err
	}
	for i, e := range errs {
		if i == maxReportedErrors {
			break
		}
		log.Warn("skipped", "err", e)
	}
	if malformed > maxReportedErrors {
		log.Warn("more malformed decision lines", "count", malformed-maxReportedErrors)
	}
	if len(lines) == 0 {
		return fmt.Errorf("%s holds no decision lines (%d malformed); is it the log of evaluate with logStderr: true?", *path, malformed)
	}
	if *strict && malformed > 0 {
		return fmt.Errorf("%s: %d malformed decision lines (first: %v)", *path, malformed, errs[0])
	}
	sum, err := report.SummariseDecisions(lines, *slo, *gpus)
	if err != nil {
		return fmt.Errorf("%s: %w", *path, err)
	}
	if err := sum.Write(stdout); err != nil {
		return err
	}
	if malformed > 0 {
		fmt.Fprintf(stdout, "malformed decision lines skipped: %d\n", malformed)
	}
	if err := report.WriteTargetChanges(stdout, lines, *shown); err != nil {
		return err
	}
	if *png != "" {
		title := fmt.Sprintf("inferscale decisions (%s mode) — %s", strings.Join(sum.Modes, "+"), *path)
		if err := report.PlotDecisions(*png, title, lines, sum.SLOSeconds); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "picture: %s\n", *png)
	}
	return nil
}

// readDecisions reads the log: its decisions, the first malformed ones'
// errors and how many there were.
func readDecisions(path string) ([]decisionlog.Line, []error, int, error) {
	r := io.Reader(os.Stdin)
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, nil, 0, fmt.Errorf("decision log: %w", err)
		}
		defer f.Close()
		r = f
	}
	lines, errs, malformed := decisionlog.Scan(r)
	return lines, errs, malformed, nil
}
