package workload

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// azureHeader is the first line of the Azure LLM inference traces (2023
// and the 2024 week-long release alike).
var azureHeader = []string{"TIMESTAMP", "ContextTokens", "GeneratedTokens"}

// azureLayouts are the TIMESTAMP spellings of the Azure releases: 2023 is
// naive UTC with 7 fractional digits ("2023-11-16 18:17:03.9799600"); the
// 2024 week-long trace appends a UTC offset ("+00:00").
var azureLayouts = []string{
	"2006-01-02 15:04:05.999999999",
	"2006-01-02 15:04:05.999999999Z07:00",
}

// OpenAzure streams an Azure LLM inference trace CSV
// (TIMESTAMP,ContextTokens,GeneratedTokens). Arrival is the offset from the
// earliest row; rows out of order by up to DefaultReorderWindow rows are
// sorted back, further ones are an error naming the line. A path ending in
// ".gz" is gunzipped.
func OpenAzure(path string) (Source, error) {
	in, closers, err := openInput(path)
	if err != nil {
		return nil, err
	}
	rows, err := azureRows(path, in)
	if err != nil {
		closeAll(closers)
		return nil, err
	}
	return newOrderedSource(path, rows, true, closers...), nil
}

func newCSVReader(in io.Reader, fields int) *csv.Reader {
	r := csv.NewReader(in)
	r.FieldsPerRecord = fields
	r.ReuseRecord = true
	r.TrimLeadingSpace = true
	return r
}

// readHeader reads the first record and checks it against want
// (case-insensitive, a UTF-8 byte-order mark tolerated).
func readHeader(path string, r *csv.Reader, want []string) error {
	fields := r.FieldsPerRecord
	r.FieldsPerRecord = -1
	rec, err := r.Read()
	r.FieldsPerRecord = fields
	if errors.Is(err, io.EOF) {
		return fmt.Errorf("%s:1: empty file, want header %q: %w", path, strings.Join(want, ","), ErrMalformed)
	}
	if err != nil {
		return fmt.Errorf("%s: header: %w: %w", path, err, ErrMalformed)
	}
	if !headerMatches(rec, want) {
		return fmt.Errorf("%s:1: header %q, want %q: %w", path, strings.Join(rec, ","), strings.Join(want, ","), ErrMalformed)
	}
	return nil
}

func headerMatches(rec, want []string) bool {
	if len(rec) != len(want) {
		return false
	}
	for i := range rec {
		got := strings.TrimSpace(strings.TrimPrefix(rec[i], "\ufeff"))
		if !strings.EqualFold(got, want[i]) {
			return false
		}
	}
	return true
}

func azureRows(path string, in io.Reader) (rowFunc, error) {
	r := newCSVReader(in, len(azureHeader))
	if err := readHeader(path, r, azureHeader); err != nil {
		return nil, err
	}
	layout := 0 // the spelling that parsed the previous row
	return func() (Request, int, bool, error) {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return Request{}, 0, false, nil
		}
		if err != nil {
			return Request{}, 0, false, csvError(path, err)
		}
		line, _ := r.FieldPos(0)
		ts, err := parseAzureTime(rec[0], &layout)
		if err != nil {
			return Request{}, line, false, fmt.Errorf("%s:%d: TIMESTAMP: %w: %w", path, line, err, ErrMalformed)
		}
		in, err := parseTokens(rec[1])
		if err != nil {
			return Request{}, line, false, fmt.Errorf("%s:%d: ContextTokens: %w: %w", path, line, err, ErrMalformed)
		}
		out, err := parseTokens(rec[2])
		if err != nil {
			return Request{}, line, false, fmt.Errorf("%s:%d: GeneratedTokens: %w: %w", path, line, err, ErrMalformed)
		}
		return Request{Arrival: ts, InputTokens: in, OutputTokens: out}, line, true, nil
	}, nil
}

// parseAzureTime returns the timestamp as nanoseconds since the Unix epoch,
// trying azureLayouts from *hint on and recording the one that worked.
func parseAzureTime(s string, hint *int) (time.Duration, error) {
	var firstErr error
	for i := range azureLayouts {
		k := (*hint + i) % len(azureLayouts)
		t, err := time.Parse(azureLayouts[k], s)
		if err == nil {
			*hint = k
			if t.Year() < 1970 || t.Year() > 2200 {
				return 0, fmt.Errorf("timestamp %q out of range", s)
			}
			return time.Duration(t.UnixNano()), nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return 0, firstErr
}

// parseTokens reads a non-negative token count.
func parseTokens(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("token count %q: %w", s, err)
	}
	if n < 0 {
		return 0, fmt.Errorf("negative token count %d", n)
	}
	return n, nil
}

// csvError turns an encoding/csv error (which carries its own line) into
// one naming the file.
func csvError(path string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s:%d: %w: %w", path, pe.Line, pe.Err, ErrMalformed)
	}
	return fmt.Errorf("%s: read: %w", path, err)
}
