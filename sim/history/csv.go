package history

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/inferscale/inferscale/sim/workload"
)

// WriteAzureCSV writes requests in the Azure LLM inference trace format
// (TIMESTAMP,ContextTokens,GeneratedTokens, naive UTC), which `simulate
// run -trace FILE` replays.
func WriteAzureCSV(w io.Writer, start time.Time, reqs []workload.Request) error {
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"TIMESTAMP", "ContextTokens", "GeneratedTokens"}); err != nil {
		return fmt.Errorf("writing workload: %w", err)
	}
	for _, r := range reqs {
		ts := start.UTC().Add(r.Arrival).Format("2006-01-02 15:04:05.0000000")
		if err := cw.Write([]string{ts, strconv.Itoa(r.InputTokens), strconv.Itoa(r.OutputTokens)}); err != nil {
			return fmt.Errorf("writing workload: %w", err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("writing workload: %w", err)
	}
	return nil
}
