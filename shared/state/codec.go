package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
)

// Encode renders st as compact JSON with the current schema version. It
// refuses to write more than Decode reads (MaxStateBytes); a state kept
// by Record is always far below that.
func Encode(st *State) ([]byte, error) {
	c := *st
	c.Version = Version
	b, err := json.Marshal(&c)
	if err != nil {
		return nil, fmt.Errorf("encoding state: %w", err)
	}
	if len(b) > MaxStateBytes {
		return nil, fmt.Errorf("state would be %d bytes, above the %d-byte limit", len(b), MaxStateBytes)
	}
	return b, nil
}

// Decode parses a state document strictly: one JSON object of this schema
// version, no unknown field, no trailing data, the invariants the policy
// relies on. Any problem is an error; callers start fresh and warn. A
// component holding a number out of range (sanitize) is reset on its own
// and named in Repairs: the rest of the state is kept.
func Decode(b []byte) (*State, error) {
	if len(b) > MaxStateBytes {
		return nil, fmt.Errorf("state is %d bytes, above the %d-byte limit", len(b), MaxStateBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	st := &State{}
	err := dec.Decode(st)
	if err == nil {
		if _, terr := dec.Token(); !errors.Is(terr, io.EOF) {
			err = errors.New("data after the JSON document")
		}
	}
	if err != nil || st.Version != Version {
		// A state of another schema is named as such, not by the first
		// field this build does not know.
		if verr := checkVersion(b); verr != nil {
			return nil, verr
		}
		return nil, fmt.Errorf("state does not match schema %d: %w", Version, err)
	}
	if err := st.check(); err != nil {
		return nil, err
	}
	st.Repairs = st.sanitize()
	return st, nil
}

// checkVersion explains why a document is no state of this schema: not
// JSON, no "v", or another "v".
func checkVersion(b []byte) error {
	var probe struct {
		Version json.RawMessage `json:"v"`
	}
	if err := json.Unmarshal(b, &probe); err != nil {
		return fmt.Errorf("state is not valid JSON: %w", err)
	}
	if v := string(probe.Version); v != fmt.Sprint(Version) {
		if v == "" {
			v = "missing"
		}
		return fmt.Errorf("state schema version %s is not %d", v, Version)
	}
	return nil
}

// Read decodes a state document from r, reading at most MaxStateBytes+1
// bytes: a larger document is refused without being read whole.
func Read(r io.Reader) (*State, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxStateBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading state: %w", err)
	}
	if len(b) > MaxStateBytes {
		return nil, fmt.Errorf("state is larger than the %d-byte limit", MaxStateBytes)
	}
	return Decode(b)
}

// check rejects states that break the invariants the policy relies on.
func (s *State) check() error {
	for i := 1; i < len(s.Pods); i++ {
		if s.Pods[i-1].Name >= s.Pods[i].Name {
			return errors.New("state pods are not sorted by name")
		}
	}
	for _, p := range s.Pods {
		hists := []*Hist{p.TTFT, p.E2E, p.ITL}
		if p.Service != nil {
			hists = append(hists, p.Service.Queue, p.Service.Prompts, p.Service.Outputs)
		}
		for _, h := range hists {
			if h != nil && len(h.LE) != len(h.C) {
				return errors.New("state histogram has unequal bounds and counts")
			}
		}
	}
	for _, r := range s.Recommendations {
		if r.Replicas < 0 {
			return errors.New("state has a negative recommendation")
		}
	}
	if len(s.Events) > MaxEventsBytes || len(s.Advisory) > MaxAdvisory {
		return errors.New("state event memory or advisory history is longer than this build keeps")
	}
	if s.Target != nil && !s.Target.valid() {
		return errors.New("state target has a field longer than a Kubernetes name")
	}
	if len(s.Marked) > MaxPods || !sort.StringsAreSorted(s.Marked) {
		return errors.New("state marked pods are too many or not sorted")
	}
	if len(s.Startups) > MaxStartups || len(s.Rates) > MaxRates || len(s.Recommendations) > MaxRecommendations || len(s.HourlyPeaks) > MaxHourlyPeaks {
		return errors.New("state history is longer than this build keeps")
	}
	return nil
}
