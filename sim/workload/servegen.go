package workload

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ServeGenOptions select and shape a ServeGen replay.
type ServeGenOptions struct {
	// Clients keeps only these client ids (the <client> of
	// chunk-<client>-trace.csv). Empty keeps all.
	Clients []int
	// TopClients, when > 0, keeps only the N clients with the highest mean
	// rate inside the Start/Duration window (after Clients).
	TopClients int
	// Start skips trace time before it; arrivals are offsets from Start.
	Start time.Duration
	// Duration bounds the replay; 0 runs to the end of the trace.
	Duration time.Duration
	// Seed makes the replay deterministic: the same files, options and
	// seed give the same requests.
	Seed int64
	// RateFactor multiplies every client's rate (0 means 1). Cheaper than
	// thinning with Scale: the generator simply draws fewer arrivals.
	RateFactor float64
	// Input and Output are the token-length laws (the rate CSVs carry
	// none). Zero values mean AzureConversationInput/Output.
	Input, Output TokenLaw
}

// ServeGen inter-arrival laws. The rate CSVs name them as in ServeGen's
// construct.py ("Gamma", "Weibull"); param1 is the shape and param2 the
// scale in scipy's convention (for Gamma, 1/sqrt(param1) equals the iat_cv
// column to 4 digits on m-large).
const (
	lawExponential uint8 = iota
	lawGamma
	lawWeibull
)

// sgWindow is one active (rate > 0) window of one client.
type sgWindow struct {
	start, end float64 // seconds, trace time
	rate       float64 // requests per second
	shape      float64 // law shape (ignored for exponential)
	law        uint8
}

type sgClient struct {
	id      int
	windows []sgWindow
}

var chunkTraceName = regexp.MustCompile(`(?:^|/)chunk-(\d+)-trace\.csv$`)

// OpenServeGen replays ServeGen per-client rate CSVs: path is a .tar.gz
// holding data/<category>/<model>/chunk-<client>-trace.csv files (as
// released), a directory holding such files (searched recursively), or one
// such CSV.
//
// Each row is window_start_s, rate_rps, iat_cv, iat_distribution, param1,
// param2; a window lasts until the next row's start (the last one as long
// as the one before, 600 s in the release). Arrivals follow ServeGen's own
// construct.py (_sample_iats / generate_workload): a client's window of
// length L and rate r gets n ≈ r·L requests whose gaps are drawn from
// the fitted law (Gamma or Weibull, param1 = shape, param2 = scale as in
// scipy) and then normalised so that they fill the window; the scale
// cancels, the shape sets the burstiness. Two deliberate differences:
// construct.py takes ceil(r·L) gaps, normalises them and drops the last
// arrival (it lands exactly on the window's end), so a window gets
// ceil(r·L)−1 requests, none when r·L ≤ 1; here n+1 gaps are drawn and
// the first n arrivals kept, with n = r·L rounded up or down at random
// (unbiased: E[n] = r·L, exact when r·L is whole, as in the release where
// rates are counts/600). This keeps small and rate-scaled windows honest.
// An empty distribution or rate 0 means no arrivals; "Exponential" is
// accepted, and an unknown law name (an error upstream)
// is replayed as exponential with a warning. Random numbers differ from
// numpy's: the same semantics, not the same requests.
//
// Clients' streams are merged in time order through a heap of per-client
// generators. Memory holds the active windows' rate table (about 100 k
// windows, 2.5 MB for the 14-day m-large release) and each client's
// current window of arrivals (at most ceil(r·L) floats per client, about
// 3 MB in m-large's busiest window), never the whole trace.
func OpenServeGen(path string, opts ServeGenOptions) (Source, error) {
	if opts.RateFactor < 0 || math.IsNaN(opts.RateFactor) || math.IsInf(opts.RateFactor, 0) {
		return nil, fmt.Errorf("servegen: rate factor %v must be a finite number >= 0", opts.RateFactor)
	}
	if opts.Start < 0 || opts.Duration < 0 {
		return nil, fmt.Errorf("servegen: start %v and duration %v must be >= 0", opts.Start, opts.Duration)
	}
	clients, err := loadServeGen(path, opts)
	if err != nil {
		return nil, err
	}
	if len(clients) == 0 {
		return nil, fmt.Errorf("servegen %s: no chunk-<client>-trace.csv files with matching clients", path)
	}
	clients = pickClients(clients, opts)
	factor := opts.RateFactor
	if factor == 0 {
		factor = 1
	}
	for _, c := range clients {
		for _, w := range c.windows {
			if n := w.rate * factor * (w.end - w.start); n > maxWindowRequests {
				return nil, fmt.Errorf("servegen %s: client %d's window at %v s would hold %.3g requests (more than %g): lower RateFactor",
					path, c.id, w.start, n, float64(maxWindowRequests))
			}
		}
	}
	return newServeGenSource(clients, opts), nil
}

// maxWindowRequests bounds one client's window (its arrivals are held in
// memory while they are replayed): 5e7 arrivals is 400 MB. m-large's
// busiest window holds 2.8e5.
const maxWindowRequests = 5e7

func loadServeGen(path string, opts ServeGenOptions) ([]sgClient, error) {
	loader := sgLoader{opts: opts, unknownLaws: map[string]int{}}
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("servegen: %w", err)
	}
	switch {
	case info.IsDir():
		err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() || !chunkTraceName.MatchString(filepath.ToSlash(p)) {
				return nil
			}
			return loader.loadFile(p)
		})
	case strings.HasSuffix(path, ".tar.gz") || strings.HasSuffix(path, ".tgz"):
		err = loader.loadTarGz(path)
	default:
		err = loader.loadFile(path)
	}
	if err != nil {
		return nil, err
	}
	for name, n := range loader.unknownLaws {
		slog.Warn("servegen: unknown inter-arrival law, using exponential", "law", name, "windows", n)
	}
	slices.SortFunc(loader.clients, func(a, b sgClient) int { return a.id - b.id })
	return loader.clients, nil
}

type sgLoader struct {
	opts        ServeGenOptions
	clients     []sgClient
	unknownLaws map[string]int
}

func (l *sgLoader) wantClient(id int) bool {
	return len(l.opts.Clients) == 0 || slices.Contains(l.opts.Clients, id)
}

func (l *sgLoader) loadFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("servegen: %w", err)
	}
	defer f.Close()
	return l.loadCSV(path, filepath.ToSlash(path), f)
}

func (l *sgLoader) loadTarGz(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("servegen: %w", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return fmt.Errorf("servegen %s: gunzip: %w", path, err)
	}
	defer zr.Close()
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("servegen %s: tar: %w", path, err)
		}
		if h.Typeflag != tar.TypeReg || !chunkTraceName.MatchString(h.Name) {
			continue
		}
		if err := l.loadCSV(path+":"+h.Name, h.Name, tr); err != nil {
			return err
		}
	}
}

// loadCSV parses one client's rate CSV. where names it in errors.
func (l *sgLoader) loadCSV(where, name string, in io.Reader) error {
	m := chunkTraceName.FindStringSubmatch(name)
	if m == nil {
		return fmt.Errorf("servegen %s: file name is not chunk-<client>-trace.csv: %w", where, ErrMalformed)
	}
	id, err := strconv.Atoi(m[1])
	if err != nil {
		return fmt.Errorf("servegen %s: client id: %w", where, err)
	}
	if !l.wantClient(id) {
		return nil
	}
	rows, err := parseServeGenCSV(where, in)
	if err != nil {
		return err
	}
	c := sgClient{id: id}
	lo := l.opts.Start.Seconds()
	hi := math.Inf(1)
	if l.opts.Duration > 0 {
		hi = lo + l.opts.Duration.Seconds()
	}
	for i, r := range rows {
		end := r.start + 600
		if i+1 < len(rows) {
			end = rows[i+1].start
		} else if i > 0 {
			end = r.start + (r.start - rows[i-1].start)
		}
		if r.rate <= 0 || r.lawName == "" || end <= lo || r.start >= hi {
			continue
		}
		w := sgWindow{start: max(r.start, lo), end: min(end, hi), rate: r.rate, shape: r.param1}
		switch strings.ToLower(r.lawName) {
		case "gamma":
			w.law = lawGamma
		case "weibull":
			w.law = lawWeibull
		case "exponential", "poisson":
			w.law = lawExponential
		default:
			l.unknownLaws[r.lawName]++
			w.law = lawExponential
		}
		if w.law != lawExponential && !(r.param1 > 0) {
			return fmt.Errorf("servegen %s:%d: %s shape %v must be > 0: %w", where, r.line, r.lawName, r.param1, ErrMalformed)
		}
		c.windows = append(c.windows, w)
	}
	for _, have := range l.clients {
		if have.id == id {
			return fmt.Errorf("servegen %s: client %d appears twice", where, id)
		}
	}
	l.clients = append(l.clients, c)
	return nil
}

type sgRow struct {
	line           int
	start, rate    float64
	lawName        string
	param1, param2 float64
}

// parseServeGenCSV reads rows "window_start_s,rate_rps,iat_cv,law,param1,param2"
// (no header), checking that window starts increase.
func parseServeGenCSV(where string, in io.Reader) ([]sgRow, error) {
	r := newCSVReader(in, 6)
	var rows []sgRow
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return rows, nil
		}
		if err != nil {
			return nil, csvError("servegen "+where, err)
		}
		line, _ := r.FieldPos(0)
		var row sgRow
		row.line = line
		nums := [5]float64{}
		for i, idx := range []int{0, 1, 2, 4, 5} {
			v, err := strconv.ParseFloat(strings.TrimSpace(rec[idx]), 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				return nil, fmt.Errorf("servegen %s:%d: column %d %q is not a finite number >= 0: %w", where, line, idx+1, rec[idx], ErrMalformed)
			}
			nums[i] = v
		}
		row.start, row.rate, row.param1, row.param2 = nums[0], nums[1], nums[3], nums[4]
		row.lawName = strings.TrimSpace(rec[3])
		if row.start > maxTraceSeconds {
			return nil, fmt.Errorf("servegen %s:%d: window start %v s out of range: %w", where, line, row.start, ErrMalformed)
		}
		if n := len(rows); n > 0 && row.start <= rows[n-1].start {
			return nil, fmt.Errorf("servegen %s:%d: window start %v s does not follow %v s: %w", where, line, row.start, rows[n-1].start, ErrMalformed)
		}
		rows = append(rows, row)
	}
}

// pickClients applies TopClients: the busiest clients inside the window.
func pickClients(clients []sgClient, opts ServeGenOptions) []sgClient {
	if opts.TopClients <= 0 || opts.TopClients >= len(clients) {
		return clients
	}
	load := func(c sgClient) float64 {
		s := 0.0
		for _, w := range c.windows {
			s += w.rate * (w.end - w.start)
		}
		return s
	}
	slices.SortStableFunc(clients, func(a, b sgClient) int {
		la, lb := load(a), load(b)
		switch {
		case la > lb:
			return -1
		case la < lb:
			return 1
		}
		return a.id - b.id
	})
	clients = clients[:opts.TopClients]
	slices.SortFunc(clients, func(a, b sgClient) int { return a.id - b.id })
	return clients
}

// sgGen generates one client's arrivals window by window, the way
// ServeGen's construct.py does (see OpenServeGen).
type sgGen struct {
	id      int
	windows []sgWindow
	wi      int
	rng     *rand.Rand
	factor  float64
	next    float64   // next arrival, seconds of trace time; +Inf when done
	times   []float64 // the current window's arrivals (reused between windows)
	ti      int
}

// enter generates the arrivals of the first window at or after wi that
// has any: n ≈ rate·factor·length arrivals placed by n+1 gaps drawn from
// the window's law and normalised to the window's length.
func (g *sgGen) enter() {
	for ; g.wi < len(g.windows); g.wi++ {
		w := g.windows[g.wi]
		length := w.end - w.start
		// Unbiased rounding: E[n] = rate·factor·length exactly, and a
		// whole expected count (the release's rates are count/600) is kept
		// as it is.
		x := w.rate * g.factor * length
		if r := math.Round(x); math.Abs(x-r) < 1e-6 {
			x = r
		}
		n := int(math.Floor(x))
		if frac := x - float64(n); frac > 0 && g.rng.Float64() < frac {
			n++
		}
		if n <= 0 || length <= 0 {
			continue
		}
		g.times = slices.Grow(g.times[:0], n)[:n]
		sum := 0.0
		for i := range n {
			sum += g.gap(w)
			g.times[i] = sum
		}
		total := sum + g.gap(w)
		for i := range g.times {
			if total > 0 && !math.IsInf(total, 1) {
				g.times[i] = w.start + length*(g.times[i]/total)
			} else { // all gaps 0 (or overflow): spread evenly
				g.times[i] = w.start + length*float64(i+1)/float64(n+1)
			}
		}
		g.ti = 0
		g.next = g.times[0]
		g.wi++
		return
	}
	g.next = math.Inf(1)
}

// gap draws one inter-arrival gap of w's law with scale 1 (the scale
// cancels in the normalisation).
func (g *sgGen) gap(w sgWindow) float64 {
	switch w.law {
	case lawGamma:
		return gammaRand(g.rng, w.shape)
	case lawWeibull:
		return math.Exp(math.Log(g.rng.ExpFloat64()) / w.shape)
	default:
		return g.rng.ExpFloat64()
	}
}

// advance moves past the current arrival.
func (g *sgGen) advance() {
	g.ti++
	if g.ti < len(g.times) {
		g.next = g.times[g.ti]
		return
	}
	g.enter()
}

type serveGenSource struct {
	heap    []*sgGen // min-heap on next, ties by client id
	origin  float64
	rng     *rand.Rand
	in, out sampler
}

func newServeGenSource(clients []sgClient, opts ServeGenOptions) *serveGenSource {
	factor := opts.RateFactor
	if factor == 0 {
		factor = 1
	}
	inLaw, outLaw := opts.Input, opts.Output
	if inLaw == (TokenLaw{}) {
		inLaw = AzureConversationInput
	}
	if outLaw == (TokenLaw{}) {
		outLaw = AzureConversationOutput
	}
	s := &serveGenSource{
		origin: opts.Start.Seconds(),
		rng:    newRand(opts.Seed, 1<<40),
		in:     inLaw.sampler(),
		out:    outLaw.sampler(),
	}
	for _, c := range clients {
		g := &sgGen{id: c.id, windows: c.windows, rng: newRand(opts.Seed, uint64(c.id)), factor: factor}
		g.enter()
		if !math.IsInf(g.next, 1) {
			s.heap = append(s.heap, g)
		}
	}
	for i := len(s.heap)/2 - 1; i >= 0; i-- {
		s.down(i)
	}
	return s
}

func (s *serveGenSource) less(i, j int) bool {
	a, b := s.heap[i], s.heap[j]
	return a.next < b.next || (a.next == b.next && a.id < b.id)
}

func (s *serveGenSource) down(i int) {
	n := len(s.heap)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && s.less(r, l) {
			m = r
		}
		if !s.less(m, i) {
			return
		}
		s.heap[i], s.heap[m] = s.heap[m], s.heap[i]
		i = m
	}
}

func (s *serveGenSource) Next() (Request, bool, error) {
	if len(s.heap) == 0 {
		return Request{}, false, nil
	}
	g := s.heap[0]
	t := g.next
	g.advance()
	if math.IsInf(g.next, 1) {
		last := len(s.heap) - 1
		s.heap[0] = s.heap[last]
		s.heap = s.heap[:last]
	}
	if len(s.heap) > 0 {
		s.down(0)
	}
	return Request{
		Arrival:      time.Duration((t - s.origin) * float64(time.Second)),
		InputTokens:  s.in.draw(s.rng),
		OutputTokens: s.out.draw(s.rng),
	}, true, nil
}

func (s *serveGenSource) Close() error { return nil }
