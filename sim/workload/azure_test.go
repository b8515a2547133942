package workload

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestAzureCodeTrace(t *testing.T) {
	src, err := OpenAzure(tracePath(t, "azure_llm_2023/AzureLLMInferenceTrace_code.csv"))
	if err != nil {
		t.Fatal(err)
	}
	reqs := drain(t, src)
	// 8,820 lines with the header, the last without a newline: 8,819 requests.
	if len(reqs) != 8819 {
		t.Fatalf("got %d requests, want 8819", len(reqs))
	}
	checkOrdered(t, reqs)
	if first := reqs[0]; first != (Request{Arrival: 0, InputTokens: 4808, OutputTokens: 10}) {
		t.Errorf("first request %+v", first)
	}
	// 2023-11-16 18:17:03.9799600 -> 19:14:19.9280160
	wantLast := Request{Arrival: 57*time.Minute + 15*time.Second + 948056*time.Microsecond, InputTokens: 549, OutputTokens: 173}
	if last := reqs[len(reqs)-1]; last != wantLast {
		t.Errorf("last request %+v, want %+v", last, wantLast)
	}
	if reqs[1].Arrival != 52*time.Millisecond {
		t.Errorf("second arrival %v, want 52ms", reqs[1].Arrival)
	}
	st, err := Stats(FromRequests(reqs))
	if err != nil {
		t.Fatal(err)
	}
	if st.MeanInput < 2047 || st.MeanInput > 2049 || st.MeanOutput < 27.8 || st.MeanOutput > 28 {
		t.Errorf("mean tokens in %.1f out %.1f, want ≈2048 and ≈27.9", st.MeanInput, st.MeanOutput)
	}
	// README: 0–632 requests/min.
	if st.PeakPerMinute != 632 {
		t.Errorf("peak %d req/min, want 632", st.PeakPerMinute)
	}
}

func TestAzure2024Format(t *testing.T) {
	p := writeTemp(t, "week.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n"+
		"2024-05-10 00:00:00.009930+00:00,2162,5\n"+
		"2024-05-10 00:00:01.509930+00:00,1020,129\n"+
		"2024-05-10 00:00:02+00:00,7,8\n"+
		"2024-05-10 00:00:03.0000000,9,10\n")
	reqs := drain(t, mustOpenAzure(t, p))
	want := []Request{{0, 2162, 5, false}, {1500 * time.Millisecond, 1020, 129, false}, {1990070 * time.Microsecond, 7, 8, false}, {2990070 * time.Microsecond, 9, 10, false}}
	if fmt.Sprint(reqs) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v", reqs, want)
	}
}

func mustOpenAzure(t *testing.T, p string) Source {
	t.Helper()
	src, err := OpenAzure(p)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func TestAzureReordersWithinWindow(t *testing.T) {
	p := writeTemp(t, "swap.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n"+
		"2023-11-16 18:00:01.0000000,1,1\n"+
		"2023-11-16 18:00:00.5000000,2,2\n"+
		"2023-11-16 18:00:02.0000000,3,3\n")
	reqs := drain(t, mustOpenAzure(t, p))
	want := []Request{{0, 2, 2, false}, {500 * time.Millisecond, 1, 1, false}, {1500 * time.Millisecond, 3, 3, false}}
	if fmt.Sprint(reqs) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v (sorted, rebased on the earliest)", reqs, want)
	}
}

func TestAzureOutOfOrderBeyondWindow(t *testing.T) {
	var b strings.Builder
	b.WriteString("TIMESTAMP,ContextTokens,GeneratedTokens\n")
	base := time.Date(2023, 11, 16, 18, 0, 0, 0, time.UTC)
	for i := range DefaultReorderWindow + 10 {
		fmt.Fprintf(&b, "%s,1,1\n", base.Add(time.Duration(i+1)*time.Second).Format("2006-01-02 15:04:05.0000000"))
	}
	b.WriteString("2023-11-16 18:00:00.0000000,1,1\n")
	p := writeTemp(t, "late.csv", b.String())
	_, err := All(mustOpenAzure(t, p))
	wantErr(t, err, fmt.Sprintf("late.csv:%d:", DefaultReorderWindow+12), "out of order")
}

func TestAzureBadInput(t *testing.T) {
	const h = "TIMESTAMP,ContextTokens,GeneratedTokens\n"
	cases := []struct {
		name, content string
		frags         []string
	}{
		{"timestamp", h + "2023-11-16 18:00:00.0,1,1\nyesterday,1,1\n", []string{"bad.csv:3:", "TIMESTAMP"}},
		{"negative", h + "2023-11-16 18:00:00.0,-4,1\n", []string{"bad.csv:2:", "ContextTokens", "negative"}},
		{"notnumber", h + "2023-11-16 18:00:00.0,4,many\n", []string{"bad.csv:2:", "GeneratedTokens"}},
		{"fields", h + "2023-11-16 18:00:00.0,4\n", []string{"bad.csv:2:"}},
		{"quote", h + "2023-11-16 18:00:00.0,\"4,1\n", []string{"bad.csv:2:"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "bad.csv")
			if err := os.WriteFile(p, []byte(c.content), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := All(mustOpenAzure(t, p))
			wantErr(t, err, c.frags...)
		})
	}
	for name, content := range map[string]string{
		"empty":  "",
		"header": "Timestamp,Model,Request tokens\n",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := OpenAzure(writeTemp(t, "bad.csv", content))
			wantErr(t, err, "bad.csv:1:")
		})
	}
	if _, err := OpenAzure(filepath.Join(t.TempDir(), "missing.csv")); err == nil {
		t.Error("missing file: no error")
	}
}

func FuzzAzure(f *testing.F) {
	f.Add([]byte("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03.9799600,4808,10\n2023-11-16 18:17:04.0319600,3180,8\n"))
	f.Add([]byte("TIMESTAMP,ContextTokens,GeneratedTokens\n2024-05-10 00:00:00.009930+00:00,2162,5\n"))
	f.Add([]byte("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:04.0,1,1\n2023-11-16 18:17:03.0,1,1\n"))
	f.Add([]byte("\ufeffTIMESTAMP,ContextTokens,GeneratedTokens\r\n\"x\",1,\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rows, err := azureRows("fuzz.csv", strings.NewReader(string(data)))
		if err != nil {
			return
		}
		fuzzCheck(t, newOrderedSource("fuzz.csv", rows, true))
	})
}

// fuzzCheck drains a parser's source: it must not panic, must emit
// non-negative ordered arrivals and token counts, and stop on an error.
func fuzzCheck(t *testing.T, src Source) {
	var last time.Duration
	for i := 0; i < 100000; i++ {
		r, ok, err := src.Next()
		if err != nil || !ok {
			return
		}
		if r.Arrival < last || r.Arrival < 0 || r.InputTokens < 0 || r.OutputTokens < 0 {
			t.Fatalf("bad request %+v after arrival %v", r, last)
		}
		last = r.Arrival
	}
}
