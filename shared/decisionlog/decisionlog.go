// Package decisionlog is the format of inferscale's decision log: one JSON
// object per evaluate tick, written on one line to stderr, which CPA's
// `logStderr: true` forwards to the pod log. The first key is fixed
// ("inferscale":"decision/v1") so that Parse finds the objects anywhere in
// `kubectl logs` output: behind klog prefixes, `--timestamps` prefixes,
// several to a multi-line stderr dump, between unrelated lines.
//
// The package is pure (std lib only): Write formats one Line, Parse scans a
// log for them and reports malformed ones without failing the rest.
package decisionlog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// Version is the value of the first key of every line this package writes.
const Version = "decision/v1"

// Modes of evaluate.
const (
	// Active: the target is returned to CPA, which applies it.
	Active = "active"
	// Advisory: the target is computed and logged, the current count returned.
	Advisory = "advisory"
)

// Line is one decision.
type Line struct {
	// Inferscale is Version; Write sets it.
	Inferscale string    `json:"inferscale"`
	Time       time.Time `json:"time"`
	Mode       string    `json:"mode"`
	// Role is the pool's role in a prefill/decode deployment (absent:
	// unified).
	Role string `json:"role,omitempty"`
	// Current is spec.replicas as evaluate saw it; Target what it decided.
	Current int      `json:"current"`
	Target  int      `json:"target"`
	Reasons []string `json:"reasons"`
	Alerts  []string `json:"alerts"`
	Rules   []Rule   `json:"rules"`
	Fleet   Fleet    `json:"fleet"`
	// SLOSeconds is the TTFT objective the policy ran with.
	SLOSeconds float64   `json:"sloSeconds"`
	Forecast   *Forecast `json:"forecast,omitempty"`
	Capacity   *Capacity `json:"capacity,omitempty"`
	// Plan is what policy v2's plan keeps this tick and why (absent:
	// policy v1, or no demand reading).
	Plan *Plan `json:"plan,omitempty"`
	// Victims are the pods a scale-down would remove first (drain-aware).
	Victims []string `json:"victims,omitempty"`
	// MinReplicas and MaxReplicas are the bounds the policy ran with (0:
	// not known, a line written before they were logged).
	MinReplicas int `json:"minReplicas,omitempty"`
	MaxReplicas int `json:"maxReplicas,omitempty"`
	// AlertReasons are the Event reasons of the alerts (e.g.
	// MaxReplicasReached), once each, in the order raised.
	AlertReasons []string `json:"alertReasons,omitempty"`
	// Ratio is the ratio guard's reading, with ratioMin set (P/D pools).
	Ratio *Ratio `json:"ratio,omitempty"`
	// Build is the version of the evaluate binary that wrote the line
	// (empty: not known, e.g. the simulator's fast mode).
	Build string `json:"build,omitempty"`
}

// Rule is one rule's reading.
type Rule struct {
	Name string `json:"name"`
	// Value is nil (JSON null) when the signal is unavailable.
	Value     *float64 `json:"value"`
	Threshold float64  `json:"threshold"`
	Over      bool     `json:"over"`
	Proposal  int      `json:"proposal"`
}

// Fleet is the fleet as the tick saw it.
type Fleet struct {
	Ready       int      `json:"ready"`
	Starting    int      `json:"starting"`
	Missing     int      `json:"missing"`
	Waiting     float64  `json:"waiting"`
	Running     float64  `json:"running"`
	KVMean      *float64 `json:"kvMean,omitempty"`
	TTFTP95     *float64 `json:"ttftP95,omitempty"`
	ITLP95      *float64 `json:"itlP95,omitempty"` // with an inter-token objective
	ArrivalRate *float64 `json:"arrivalRate,omitempty"`
}

// Ratio is the ratio guard at one tick: the other pool, the replicas it
// asked for (nil: unread, Error says why) and the floor that makes.
type Ratio struct {
	Peer         string `json:"peer,omitempty"`
	PeerReplicas *int   `json:"peerReplicas,omitempty"`
	Floor        int    `json:"floor"`
	Error        string `json:"error,omitempty"`
}

// Forecast is policy v2's demand forecast over the horizon.
type Forecast struct {
	Level          float64 `json:"level"`
	Trend          float64 `json:"trend"`
	Upper          float64 `json:"upper"`
	Quantile       float64 `json:"quantile"`
	HorizonSeconds float64 `json:"horizonSeconds"`
}

// Plan is policy v2's sizing at one tick: the demand it staffs, the
// headroom, the need now and what the hold keeps. A fleet held above Need
// is held by the hold's window (the largest need of its last HoldSeconds)
// or, where Floor is the larger, by the floor of a reactive scale-up the
// plan was short for.
type Plan struct {
	// DemandPods is R, the forecast's bound (and backlog) in pods of work
	// at the ceiling; Beta the learned headroom (Need = ⌈R + β√R⌉, and
	// at least the surge reserve over R).
	DemandPods float64 `json:"demandPods"`
	Beta       float64 `json:"beta"`
	Need       int     `json:"need"`
	// Hold is the lowest a scale-down may go; Floor the part of it a
	// reactive scale-up keeps (0: none).
	Hold  int `json:"hold"`
	Floor int `json:"floor,omitempty"`
	// BudgetSpent is the share of the recent requests load pushed past
	// the objective (absent: too few requests to say), against the miss
	// budget 1 − sloAttainment.
	BudgetSpent *float64 `json:"budgetSpent,omitempty"`
}

// Capacity sources.
const (
	CapacityPrior      = "prior"
	CapacityPartly     = "partly fitted"
	CapacityFitted     = "fitted"
	CapacitySaturation = "saturation"
	CapacityConfigured = "configured"
)

// Capacity is policy v2's one-pod service capacity and where it came from.
type Capacity struct {
	PerPod float64 `json:"perPod"`
	Source string  `json:"source"`
	// Series are the server's series the model was fitted from (none on
	// the prior).
	Series []string `json:"series,omitempty"`
	// Model is the iteration-time model the ceiling was read from, and
	// WorkPerRequest the GPU-seconds it prices one request of the mix at:
	// what the fit has learned of the pods, to set against the engine.
	Model          *Model  `json:"model,omitempty"`
	WorkPerRequest float64 `json:"workPerRequest,omitempty"`
}

// Model is the service model's step time α + β·prompt tokens + γs·running
// sequences + γkv·KV usage, in seconds (shared/model.Params).
type Model struct {
	Alpha    float64 `json:"alpha"`
	Beta     float64 `json:"beta"`
	GammaSeq float64 `json:"gammaSeq"`
	GammaKV  float64 `json:"gammaKv"`
}

// The bounds of a decision line: the years a clock of a running
// autoscaler reads (durations between them fit a time.Duration), and
// CPA's most replicas.
const (
	MinYear     = 1970
	MaxYear     = 2200
	MaxReplicas = 1_000_000
)

func count(n int) bool { return n >= 0 && n <= MaxReplicas }

// Validate reports what makes l not a v1 decision.
func (l *Line) Validate() error {
	var errs []error
	if l.Inferscale != Version {
		errs = append(errs, fmt.Errorf("inferscale %q: want %q", l.Inferscale, Version))
	}
	if y := l.Time.UTC().Year(); l.Time.IsZero() || y < MinYear || y > MaxYear {
		errs = append(errs, fmt.Errorf("time is missing or out of range (years %d to %d)", MinYear, MaxYear))
	}
	if l.Mode != Active && l.Mode != Advisory {
		errs = append(errs, fmt.Errorf("mode %q: want %q or %q", l.Mode, Active, Advisory))
	}
	if !count(l.Current) || !count(l.Target) {
		errs = append(errs, fmt.Errorf("current %d / target %d: want 0 to %d", l.Current, l.Target, MaxReplicas))
	}
	if !count(l.Fleet.Ready) || !count(l.Fleet.Starting) || !count(l.Fleet.Missing) {
		errs = append(errs, fmt.Errorf("fleet counts %d/%d/%d: want 0 to %d", l.Fleet.Ready, l.Fleet.Starting, l.Fleet.Missing, MaxReplicas))
	}
	if !(l.SLOSeconds >= 0) {
		errs = append(errs, fmt.Errorf("sloSeconds %g: want ≥ 0", l.SLOSeconds))
	}
	for i, r := range l.Rules {
		if r.Name == "" {
			errs = append(errs, fmt.Errorf("rules[%d]: empty name", i))
		}
	}
	if p := l.Plan; p != nil {
		if !(p.DemandPods >= 0) || !(p.Beta >= 0) || !count(p.Need) || !count(p.Hold) || !count(p.Floor) {
			errs = append(errs, fmt.Errorf("plan %g pods, β %g, need %d, hold %d, floor %d: want numbers ≥ 0, counts up to %d",
				p.DemandPods, p.Beta, p.Need, p.Hold, p.Floor, MaxReplicas))
		}
	}
	if c := l.Capacity; c != nil {
		switch c.Source {
		case CapacityPrior, CapacityPartly, CapacityFitted, CapacitySaturation, CapacityConfigured:
		default:
			errs = append(errs, fmt.Errorf("capacity.source %q: want prior, partly fitted, fitted, saturation or configured", c.Source))
		}
		if m := c.Model; (m != nil && !(m.Alpha >= 0 && m.Beta >= 0 && m.GammaSeq >= 0 && m.GammaKV >= 0)) || !(c.WorkPerRequest >= 0) {
			errs = append(errs, fmt.Errorf("capacity.model %+v, workPerRequest %g: want numbers ≥ 0", c.Model, c.WorkPerRequest))
		}
	}
	return errors.Join(errs...)
}

// Write writes l as one newline-terminated JSON line (Version set, nil
// reason and alert lists as []). Non-finite numbers are an error: JSON has
// none, and a line must never be half written.
func Write(w io.Writer, l Line) error {
	l.Inferscale = Version
	l.Time = l.Time.UTC()
	if l.Reasons == nil {
		l.Reasons = []string{}
	}
	if l.Alerts == nil {
		l.Alerts = []string{}
	}
	if l.Rules == nil {
		l.Rules = []Rule{}
	}
	if err := l.Validate(); err != nil {
		return fmt.Errorf("decision line: %w", err)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(l); err != nil {
		return fmt.Errorf("decision line: %w", err)
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("writing decision line: %w", err)
	}
	return nil
}

// F returns a pointer to v, or nil when v is NaN or infinite (an absent
// reading), for the optional fields.
func F(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// marker starts every decision object; Parse looks for it.
var marker = []byte(`{"inferscale":"decision/`)

// MaxLineBytes bounds one log line; longer lines are skipped with an error.
const MaxLineBytes = 1 << 20

// MaxFailuresPerLine bounds the malformed objects tried in one line: each
// try may read to the end of the line, so nested unterminated markers made
// the scan quadratic (4 lines of 1 MiB: 103 s). The rest of such a line is
// skipped with an error.
const MaxFailuresPerLine = 8

// MaxErrors bounds the errors Scan keeps (the first ones); it counts the
// rest. 2 M malformed lines held 1.35 GB of errors.
const MaxErrors = 100

// Parse scans r line by line and returns every decision object found
// anywhere in a line (behind prefixes, several per line), in order.
// Anything else is skipped. Each malformed or invalid object gives an error
// naming its line (the first MaxErrors of them, then one that says how many
// more); the scan goes on. A read error ends the scan (and is the last
// error).
func Parse(r io.Reader) ([]Line, []error) {
	out, errs, n := Scan(r)
	if more := n - len(errs); more > 0 {
		errs = append(errs, fmt.Errorf("%d more malformed decisions", more))
	}
	return out, errs
}

// Scan is Parse that returns the first MaxErrors errors and how many there
// were in all.
func Scan(r io.Reader) (lines []Line, first []error, malformed int) {
	note := func(es ...error) {
		malformed += len(es)
		first = append(first, es[:min(len(es), max(0, MaxErrors-len(first)))]...)
	}
	br := bufio.NewReaderSize(r, 64<<10)
	for n := 1; ; n++ {
		line, tooLong, err := readLine(br)
		switch {
		case tooLong:
			note(fmt.Errorf("line %d: longer than %d bytes: skipped", n, MaxLineBytes))
		case len(line) > 0:
			ls, es := scanLine(line, n)
			lines = append(lines, ls...)
			if len(es) > 0 {
				note(es...)
			}
		}
		if err == io.EOF {
			return lines, first, malformed
		}
		if err != nil {
			note(fmt.Errorf("reading the log at line %d: %w", n, err))
			return lines, first, malformed
		}
	}
}

// readLine reads one line without its line ending, keeping at most
// MaxLineBytes of it (tooLong says the rest was dropped).
func readLine(br *bufio.Reader) (line []byte, tooLong bool, err error) {
	for {
		frag, err := br.ReadSlice('\n')
		if len(line)+len(frag) <= MaxLineBytes+1 {
			line = append(line, frag...)
		} else {
			tooLong = true
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
		if len(line) > MaxLineBytes {
			tooLong = true
		}
		return line, tooLong, err
	}
}

// scanLine decodes every marked object in one line.
func scanLine(line []byte, n int) ([]Line, []error) {
	var out []Line
	var errs []error
	for off := 0; off < len(line); {
		i := bytes.Index(line[off:], marker)
		if i < 0 {
			break
		}
		start := off + i
		l, used, err := decodeAt(line[start:])
		if err != nil {
			errs = append(errs, fmt.Errorf("line %d, column %d: %w", n, start+1, err))
			if len(errs) == MaxFailuresPerLine {
				errs = append(errs, fmt.Errorf("line %d: %d malformed decisions: the rest of the line is skipped", n, MaxFailuresPerLine))
				break
			}
			off = start + len(marker)
			continue
		}
		out = append(out, l)
		off = start + used
	}
	return out, errs
}

// decodeAt decodes the object at the start of b and returns how many bytes
// it took.
func decodeAt(b []byte) (Line, int, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return Line{}, 0, fmt.Errorf("malformed decision: %w", err)
	}
	var l Line
	if err := json.Unmarshal(raw, &l); err != nil {
		return Line{}, 0, fmt.Errorf("malformed decision: %w", err)
	}
	if err := l.Validate(); err != nil {
		return Line{}, 0, fmt.Errorf("invalid decision: %w", err)
	}
	return l, int(dec.InputOffset()), nil
}

// Why says in one line what decided l: for a scale-up each rule over its
// threshold with its reading, threshold and proposal ("queue 4.2 > 3 →
// 6"); then the reasons, in the policy's order; then the alerts.
func (l Line) Why() string {
	var parts []string
	for _, r := range l.Rules {
		if !r.Over || l.Target <= l.Current {
			continue
		}
		v := "n/a"
		if r.Value != nil {
			v = strconv.FormatFloat(*r.Value, 'g', 3, 64)
		}
		p := fmt.Sprintf("%s %s > %s", r.Name, v, strconv.FormatFloat(r.Threshold, 'g', 3, 64))
		if r.Proposal > 0 {
			p += fmt.Sprintf(" → %d", r.Proposal)
		}
		parts = append(parts, p)
	}
	parts = append(parts, l.Reasons...)
	for _, a := range l.Alerts {
		parts = append(parts, "alert: "+a)
	}
	return strings.Join(parts, "; ")
}

// EventMessage is the message of the Kubernetes Event for a change of
// target, in the HPA's words ("New size: 6; reason: ...").
func (l Line) EventMessage() string {
	return fmt.Sprintf("New size: %d (from %d); reason: %s", l.Target, l.Current, l.Why())
}

// String is a one-line human summary of l.
func (l Line) String() string {
	return fmt.Sprintf("%s %s current %d target %d: %s", l.Time.UTC().Format(time.RFC3339), l.Mode, l.Current, l.Target,
		strings.Join(l.Reasons, "; "))
}
