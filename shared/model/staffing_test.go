package model

import (
	"math"
	"testing"
)

func TestHeadroomIsSquareRootStaffing(t *testing.T) {
	for _, c := range []struct{ n, r, want float64 }{
		{10, 4, 3}, {4, 4, 0}, {2, 4, -1}, {110, 100, 1},
	} {
		if got := Headroom(c.n, c.r); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("Headroom(%g, %g) = %g, want %g", c.n, c.r, got, c.want)
		}
	}
	if !math.IsInf(Headroom(3, 0), 1) {
		t.Error("no load must be infinite headroom")
	}
}
