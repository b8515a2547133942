package bar

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/inferscale/inferscale/sim/engine"
	"github.com/inferscale/inferscale/sim/oracle"
	"github.com/inferscale/inferscale/sim/pd"
	"github.com/inferscale/inferscale/sim/runner"
)

// cacheVersion is the layout of a cache entry; bump it when Entry changes.
const cacheVersion = 1

// Entry is what a cell caches: results that do not depend on the policy.
type Entry struct {
	// Oracle is the oracle found for Target (or its reachable ceiling);
	// nil until searched.
	Oracle *OracleResult `json:"oracle,omitempty"`
	// OracleE2E maps an end-to-end target ("0.990") to the oracle held to
	// it as well as to the TTFT one.
	OracleE2E map[string]OracleResult `json:"oracleE2E,omitempty"`
	// Static maps a static fleet size to its replay.
	Static map[string]StaticResult `json:"static,omitempty"`

	// PDOracle is a P/D cell's oracle per pool; nil until searched.
	PDOracle *PDOracleResult `json:"pdOracle,omitempty"`
	// PDStatic maps a static pair, "P+D" pods, to its replay.
	PDStatic map[string]PDFigures `json:"pdStatic,omitempty"`
}

// PDOracleResult is a P/D cell's oracle per pool (Found false: none met
// the target).
type PDOracleResult struct {
	Found  bool    `json:"found"`
	Target float64 `json:"target"` // searched for (below Target when that is out of reach)
	PDFigures
}

// OracleResult is the part of an oracle replay the matrix reports.
type OracleResult struct {
	Found      bool    `json:"found"`
	Target     float64 `json:"target"`
	Attainment float64 `json:"attainment"`
	GPUHours   float64 `json:"gpuHours"`
	MeanFleet  float64 `json:"meanFleet"`
	// E2EAttainment is the share of its requests answered within the
	// end-to-end objective (kept for the oracle held to it).
	E2EAttainment float64 `json:"e2eAttainment,omitempty"`
}

// StaticResult is one static fleet's replay.
type StaticResult struct {
	Attainment float64 `json:"attainment"`
	GPUHours   float64 `json:"gpuHours"`
	// E2EAttainment is the share of requests within the end-to-end
	// objective; nil in an entry cached before it was kept (the fleet is
	// replayed again).
	E2EAttainment *float64 `json:"e2eAttainment,omitempty"`
}

// Cache stores entries as one JSON file per cell under Dir; an empty Dir
// keeps them in memory only.
type Cache struct {
	Dir string
	mu  sync.Mutex
	mem map[string]*Entry
}

// DefaultCacheDir is ~/.cache/inferscale-bar (the user cache directory).
func DefaultCacheDir() string {
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "inferscale-bar")
	}
	return filepath.Join(os.TempDir(), "inferscale-bar")
}

// Key identifies a cell's policy-independent results: its trace (a file's
// path, size and modification time), seed, engine configuration and the
// engine's and oracle's versions.
func Key(c Case, cfg engine.Config, s Settings) string {
	cfg.Progress = nil
	t := c.Trace()
	return hashKey(fmt.Sprintf("%s|%+v|%+v|%+v", traceFile(t), t, cfg, s))
}

// PDKey is Key for a P/D cell: its trace, output scale, both pools'
// engine configurations, the settings and how far its oracle is searched
// below the ceiling (PDOracleSteps).
func PDKey(c PDCase, pools pd.Pools, s PDSettings) string {
	pools.Prefill.Progress, pools.Decode.Progress = nil, nil
	t := c.Trace()
	return hashKey(fmt.Sprintf("pd|%s|%+v|%g|%+v|%+v|%g|%g|%+v|steps %d", traceFile(t), t, c.Workload.OutputScale,
		pools.Prefill, pools.Decode, pools.TransferPerToken, pools.SLO, s, PDOracleSteps))
}

// traceFile names a trace file by its path, size and modification time
// (a generated trace by its spec).
func traceFile(t runner.Trace) string {
	if st, err := os.Stat(t.Spec); err == nil {
		return fmt.Sprintf("%s|%d|%d", t.Spec, st.Size(), st.ModTime().UnixNano())
	}
	return t.Spec
}

// hashKey is the cache key of a cell described by desc, with the cache
// layout's and the engine's and oracle's versions.
func hashKey(desc string) string {
	h := sha256.New()
	fmt.Fprintf(h, "v%d|%s|%s|%s", cacheVersion, engine.Version, oracle.Version, desc)
	return hex.EncodeToString(h.Sum(nil))[:24]
}

// Load returns the entry for key (empty when there is none or it cannot
// be read: a cache never fails a run).
func (c *Cache) Load(key string) *Entry {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mem == nil {
		c.mem = map[string]*Entry{}
	}
	if e, ok := c.mem[key]; ok {
		return e
	}
	e := &Entry{}
	if c.Dir != "" {
		if b, err := os.ReadFile(filepath.Join(c.Dir, key+".json")); err == nil {
			if json.Unmarshal(b, e) != nil {
				e = &Entry{}
			}
		}
	}
	if e.Static == nil {
		e.Static = map[string]StaticResult{}
	}
	if e.PDStatic == nil {
		e.PDStatic = map[string]PDFigures{}
	}
	if e.OracleE2E == nil {
		e.OracleE2E = map[string]OracleResult{}
	}
	c.mem[key] = e
	return e
}

// Store writes the entry for key (temp file + rename).
func (c *Cache) Store(key string, e *Entry) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.Dir == "" {
		return nil
	}
	b, err := json.MarshalIndent(e, "", " ")
	if err != nil {
		return fmt.Errorf("bar cache: %w", err)
	}
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		return fmt.Errorf("bar cache: %w", err)
	}
	tmp, err := os.CreateTemp(c.Dir, key+".*.tmp")
	if err != nil {
		return fmt.Errorf("bar cache: %w", err)
	}
	_, werr := tmp.Write(b)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("bar cache: %w", err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(c.Dir, key+".json")); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("bar cache: %w", err)
	}
	return nil
}

// static returns the cached replay of an n-pod static fleet (one cached
// without its end-to-end attainment is not).
func (e *Entry) static(n int) (StaticResult, bool) {
	r, ok := e.Static[strconv.Itoa(n)]
	return r, ok && r.E2EAttainment != nil
}

func (e *Entry) setStatic(n int, r StaticResult) { e.Static[strconv.Itoa(n)] = r }

// Clear removes every cached entry under dir.
func Clear(dir string) error {
	err := os.RemoveAll(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("clearing the bar cache: %w", err)
	}
	return nil
}
