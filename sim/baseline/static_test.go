package baseline

import "testing"

func TestStatic(t *testing.T) {
	s, err := NewStatic(5)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Recommend(obsOf(t0, 1, 1, 10)); got != 5 {
		t.Errorf("got %d, want 5", got)
	}
	if got, _ := s.Recommend(obsOf(t0, 1, 1, 3)); got != 3 {
		t.Errorf("above max: got %d, want 3", got)
	}
	if _, err := NewStatic(-1); err == nil {
		t.Error("negative: want an error")
	}
}
