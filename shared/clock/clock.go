// Package clock gives both binaries the current time, honouring the
// INFERSCALE_NOW override (RFC 3339 or Unix seconds) used for replay and tests.
package clock

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// EnvNow is the environment variable that overrides the clock.
const EnvNow = "INFERSCALE_NOW"

// Now returns the time from the override value v, or time.Now() when v is
// empty. lookup is usually os.Getenv.
func Now(lookup func(string) string) (time.Time, error) {
	v := strings.TrimSpace(lookup(EnvNow))
	if v == "" {
		return time.Now(), nil
	}
	return Parse(v)
}

// Parse reads an RFC 3339 time or Unix seconds (fractions allowed).
func Parse(v string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 || f > 1e11 {
		return time.Time{}, fmt.Errorf("%s=%q: want RFC 3339 or Unix seconds", EnvNow, v)
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(math.Round(frac*1e9))).UTC(), nil
}
