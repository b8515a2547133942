package workload

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/inferscale/inferscale/internal/testenv"
)

// samplePath is a committed excerpt of a public trace (testdata/traces,
// README there): present on every clone, so these tests never skip.
func samplePath(t testing.TB, name string) string {
	return filepath.Join(testenv.ModuleRoot(t), "testdata", "traces", name)
}

// The committed Azure excerpt: the trace's first 1,500 requests, their
// first and last exactly as the upstream file has them.
func TestAzureSample(t *testing.T) {
	src, err := Open(samplePath(t, "azure_code_2023_first1500.csv"), 0)
	if err != nil {
		t.Fatal(err)
	}
	reqs := drain(t, src)
	if len(reqs) != 1500 {
		t.Fatalf("got %d requests, want 1500", len(reqs))
	}
	checkOrdered(t, reqs)
	if first := reqs[0]; first != (Request{Arrival: 0, InputTokens: 4808, OutputTokens: 10}) {
		t.Errorf("first request %+v", first)
	}
	// 18:17:03.9799600 -> 18:27:08.1784300
	wantLast := Request{Arrival: 10*time.Minute + 4*time.Second + 198470*time.Microsecond, InputTokens: 1186, OutputTokens: 16}
	if last := reqs[len(reqs)-1]; last != wantLast {
		t.Errorf("last request %+v, want %+v", last, wantLast)
	}
	st, err := Stats(FromRequests(reqs))
	if err != nil {
		t.Fatal(err)
	}
	if st.MeanInput < 2075 || st.MeanInput > 2076.2 || st.MeanOutput < 27.2 || st.MeanOutput > 27.3 {
		t.Errorf("mean tokens in %.2f out %.2f, want ≈2075.6 and ≈27.26", st.MeanInput, st.MeanOutput)
	}
}

// The committed Mooncake excerpt: the trace's first 400 requests.
func TestMooncakeSample(t *testing.T) {
	src, err := Open(samplePath(t, "mooncake_conversation_first400.jsonl"), 0)
	if err != nil {
		t.Fatal(err)
	}
	reqs := drain(t, src)
	if len(reqs) != 400 {
		t.Fatalf("got %d requests, want 400", len(reqs))
	}
	checkOrdered(t, reqs)
	if first := reqs[0]; first != (Request{Arrival: 0, InputTokens: 6758, OutputTokens: 500}) {
		t.Errorf("first request %+v", first)
	}
	if last := reqs[len(reqs)-1]; last != (Request{Arrival: 141 * time.Second, InputTokens: 18203, OutputTokens: 359}) {
		t.Errorf("last request %+v", last)
	}
	st, err := Stats(FromRequests(reqs))
	if err != nil {
		t.Fatal(err)
	}
	if st.MeanInput < 14276 || st.MeanInput > 14277 || st.MeanOutput < 365 || st.MeanOutput > 365.5 {
		t.Errorf("mean tokens in %.2f out %.2f, want ≈14276.3 and ≈365.2", st.MeanInput, st.MeanOutput)
	}
}

// The committed ServeGen excerpt (three clients, all 14 days): an hour's
// arrivals match the CSV rates and a seed replays identically.
func TestServeGenSample(t *testing.T) {
	path := samplePath(t, "servegen_m-large_top3.tar.gz")
	start := 3*24*time.Hour + 12*time.Hour
	src, err := OpenServeGen(path, ServeGenOptions{Seed: 1, Start: start, Duration: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	st, err := Stats(src)
	if err != nil {
		t.Fatal(err)
	}
	want := expectedServeGen(t, path, start.Seconds(), (start + time.Hour).Seconds())
	if want < 100 || float64(st.Requests) != want {
		t.Errorf("got %d requests in the hour, the CSV rates give %.0f", st.Requests, want)
	}
	short := ServeGenOptions{Seed: 9, Start: start, Duration: time.Minute}
	if a, b := openServeGen(t, path, short), openServeGen(t, path, short); len(a) == 0 || !slices.Equal(a, b) {
		t.Errorf("same seed gave %d and %d requests or different ones", len(a), len(b))
	}
	whole, err := Open(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer whole.Close()
	if _, ok, err := whole.Next(); !ok || err != nil {
		t.Errorf("Open picks the ServeGen loader: ok=%v err=%v", ok, err)
	}
}
