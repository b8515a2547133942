package workload

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/tidwall/gjson"
)

// maxLineBytes bounds one JSON line (Mooncake lines carry hash_ids lists;
// the longest in the FAST'25 release is under 8 KiB).
const maxLineBytes = 16 << 20

// OpenMooncake streams a Mooncake trace (JSON lines
// {"timestamp": ms, "input_length": n, "output_length": n, "hash_ids": [...]}).
// timestamp is milliseconds from the trace start and is used as the Arrival
// as it is. hash_ids (prefix-cache block ids) are validated as JSON but not
// used. Blank lines are skipped. Rows out of order by up to
// DefaultReorderWindow rows are sorted back; further ones are an error.
func OpenMooncake(path string) (Source, error) {
	in, closers, err := openInput(path)
	if err != nil {
		return nil, err
	}
	return newOrderedSource(path, mooncakeRows(path, in), false, closers...), nil
}

func mooncakeRows(path string, in io.Reader) rowFunc {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64<<10), maxLineBytes)
	line := 0
	return func() (Request, int, bool, error) {
		for sc.Scan() {
			line++
			b := bytes.TrimSpace(sc.Bytes())
			if len(b) == 0 {
				continue
			}
			req, err := parseMooncakeLine(b)
			if err != nil {
				return Request{}, line, false, fmt.Errorf("%s:%d: %w: %w", path, line, err, ErrMalformed)
			}
			return req, line, true, nil
		}
		if err := sc.Err(); err != nil {
			return Request{}, line + 1, false, fmt.Errorf("%s:%d: read: %w", path, line+1, err)
		}
		return Request{}, line, false, nil
	}
}

func parseMooncakeLine(b []byte) (Request, error) {
	if !gjson.ValidBytes(b) {
		return Request{}, fmt.Errorf("not valid JSON")
	}
	doc := gjson.ParseBytes(b)
	if !doc.IsObject() {
		return Request{}, fmt.Errorf("not a JSON object")
	}
	f := doc.Get("timestamp")
	if f.Type != gjson.Number {
		return Request{}, fmt.Errorf("timestamp missing or not a number")
	}
	ms := f.Float()
	if ms < 0 || math.IsNaN(ms) || ms > maxTraceSeconds*1000 {
		return Request{}, fmt.Errorf("timestamp %v ms out of range", ms)
	}
	in, err := jsonCount(doc, "input_length")
	if err != nil {
		return Request{}, err
	}
	out, err := jsonCount(doc, "output_length")
	if err != nil {
		return Request{}, err
	}
	return Request{Arrival: time.Duration(ms * float64(time.Millisecond)), InputTokens: in, OutputTokens: out}, nil
}

func jsonCount(doc gjson.Result, key string) (int, error) {
	f := doc.Get(key)
	if f.Type != gjson.Number {
		return 0, fmt.Errorf("%s missing or not a number", key)
	}
	v := f.Float()
	if v < 0 || v != math.Trunc(v) || v > math.MaxInt32 {
		return 0, fmt.Errorf("%s %v is not a non-negative integer", key, v)
	}
	return int(v), nil
}
