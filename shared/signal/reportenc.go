package signal

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"
	"unicode/utf8"
)

// appendReport writes r exactly as json.Marshal would, without reflection:
// metric is a fresh process per pod, and building encoding/json's per-type
// caches for Report, Pod, GPU and Histogram on every run cost more than the
// encoding itself. The rare per-resource Fleet goes through json.Marshal.
// The values must be finite (Validate checks that first).
func appendReport(b []byte, r *Report) ([]byte, error) {
	b = append(b, `{"v":`...)
	b = strconv.AppendInt(b, int64(r.Version), 10)
	b = append(b, `,"scrapeTime":`...)
	var err error
	if b, err = appendTime(b, r.ScrapeTime); err != nil {
		return nil, err
	}
	if len(r.Pods) > 0 {
		b = append(b, `,"pods":[`...)
		for i := range r.Pods {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = appendPod(b, &r.Pods[i]); err != nil {
				return nil, err
			}
		}
		b = append(b, ']')
	}
	if r.Fleet != nil {
		f, err := json.Marshal(r.Fleet)
		if err != nil {
			return nil, err
		}
		b = append(b, `,"fleet":`...)
		b = append(b, f...)
	}
	return append(b, '}'), nil
}

func appendPod(b []byte, p *Pod) ([]byte, error) {
	var err error
	b = append(b, `{"name":`...)
	b = appendString(b, p.Name)
	b = optString(b, "namespace", p.Namespace)
	b = optString(b, "node", p.Node)
	b = optString(b, "phase", p.Phase)
	b = append(b, `,"ready":`...)
	b = strconv.AppendBool(b, p.Ready)
	if p.Terminating {
		b = append(b, `,"terminating":true`...)
	}
	for _, t := range []struct {
		key string
		t   *time.Time
	}{{"createdAt", p.CreatedAt}, {"startedAt", p.StartedAt}, {"readyAt", p.ReadyAt}} {
		if t.t != nil {
			b = appendKey(b, t.key)
			if b, err = appendTime(b, *t.t); err != nil {
				return nil, err
			}
		}
	}
	b = optFloat(b, "startupSeconds", p.StartupSeconds)
	b = optFloat(b, "ageSeconds", p.AgeSeconds)
	b = append(b, `,"scrapeTime":`...)
	if b, err = appendTime(b, p.ScrapeTime); err != nil {
		return nil, err
	}
	b = optString(b, "server", p.Server)
	b = optString(b, "error", p.Error)
	b = optFloat(b, "waiting", p.Waiting)
	b = optFloat(b, "running", p.Running)
	b = optFloat(b, "kvCacheUsage", p.KVCacheUsage)
	if g := p.GPU; g != nil {
		b = append(b, `,"gpu":{`...)
		n := len(b)
		b = optFloat(b, "utilization", g.Utilization)
		b = optFloat(b, "smActive", g.SMActive)
		b = optString(b, "field", g.Field)
		b = optString(b, "source", g.Source)
		if g.Count != 0 {
			b = appendKey(b, "count")
			b = strconv.AppendInt(b, int64(g.Count), 10)
		}
		b = optString(b, "error", g.Error)
		if len(b) > n {
			// The first member was written with a leading comma.
			copy(b[n:], b[n+1:])
			b = b[:len(b)-1]
		}
		b = append(b, '}')
	}
	b = optHistogram(b, "ttft", p.TTFT)
	b = optHistogram(b, "e2e", p.E2E)
	b = optHistogram(b, "queueTime", p.QueueTime)
	b = optHistogram(b, "interToken", p.InterToken)
	b = optFloat(b, "requestsTotal", p.RequestsTotal)
	b = optFloat(b, "promptTokensTotal", p.PromptTokensTotal)
	b = optFloat(b, "generationTokensTotal", p.GenerationTokensTotal)
	b = optFloat(b, "preemptionsTotal", p.PreemptionsTotal)
	if len(p.Notes) > 0 {
		b = append(b, `,"notes":[`...)
		for i, n := range p.Notes {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, n)
		}
		b = append(b, ']')
	}
	return append(b, '}'), nil
}

// appendKey writes ,"key": (keys here never need escaping).
func appendKey(b []byte, key string) []byte {
	b = append(b, ',', '"')
	b = append(b, key...)
	return append(b, '"', ':')
}

func optString(b []byte, key, v string) []byte {
	if v == "" {
		return b
	}
	return appendString(appendKey(b, key), v)
}

func optFloat(b []byte, key string, v *float64) []byte {
	if v == nil {
		return b
	}
	return appendFloat(appendKey(b, key), *v)
}

func optHistogram(b []byte, key string, h *Histogram) []byte {
	if h == nil {
		return b
	}
	b = appendKey(b, key)
	if h.Buckets == nil {
		b = append(b, `{"b":null`...)
	} else {
		b = append(b, `{"b":[`...)
		for i, bk := range h.Buckets {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"le":`...)
			b = appendFloat(b, bk.UpperBound)
			b = append(b, `,"c":`...)
			b = appendFloat(b, bk.Count)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = append(b, `,"sum":`...)
	b = appendFloat(b, h.Sum)
	b = append(b, `,"count":`...)
	b = appendFloat(b, h.Count)
	return append(b, '}')
}

func appendTime(b []byte, t time.Time) ([]byte, error) {
	j, err := t.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("encoding report: %w", err)
	}
	return append(b, j...), nil
}

// AppendJSONFloat appends f as encoding/json writes a float64 (f must be
// finite), for other hand-written encoders.
func AppendJSONFloat(b []byte, f float64) []byte { return appendFloat(b, f) }

// AppendJSONString appends s quoted as json.Marshal writes a string.
func AppendJSONString(b []byte, s string) []byte { return appendString(b, s) }

// appendFloat formats like encoding/json: shortest representation, 'e'
// notation below 1e-6 and from 1e21, and a two-digit negative exponent
// shortened (1e-07 → 1e-7).
func appendFloat(b []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// appendString quotes s like encoding/json with HTML escaping (the
// json.Marshal default): <, > and & as \u003c.., control characters,
// invalid UTF-8 as \ufffd, and U+2028/U+2029 escaped.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
