package knobs

import (
	"fmt"
	"strings"
	"time"
	_ "time/tzdata" // schedule floors name IANA time zones; the image may have none

	"github.com/robfig/cron/v3"
	"sigs.k8s.io/yaml"

	"github.com/inferscale/inferscale/shared/policy"
)

// scheduleFloor is one scheduleFloors entry as written.
type scheduleFloor struct {
	Start    string `json:"start"`
	End      string `json:"end"`
	Replicas int    `json:"replicas"`
	Timezone string `json:"timezone,omitempty"`
}

// ParseScheduleFloors reads a YAML or JSON list of {start, end, replicas,
// timezone} with five-field cron expressions, like KEDA's cron trigger.
func ParseScheduleFloors(raw string) ([]policy.ScheduleFloor, error) {
	var entries []scheduleFloor
	if err := yaml.UnmarshalStrict([]byte(raw), &entries); err != nil {
		return nil, fmt.Errorf("want a list of {start, end, replicas, timezone}: %w", err)
	}
	parser := cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow)
	floors := make([]policy.ScheduleFloor, 0, len(entries))
	for i, e := range entries {
		if e.Replicas < 0 {
			return nil, fmt.Errorf("entry %d: replicas %d is negative", i, e.Replicas)
		}
		tz := ""
		if e.Timezone != "" {
			if _, err := time.LoadLocation(e.Timezone); err != nil {
				return nil, fmt.Errorf("entry %d: timezone %q: %w", i, e.Timezone, err)
			}
			tz = "CRON_TZ=" + e.Timezone + " "
		}
		start, err := parser.Parse(tz + strings.TrimSpace(e.Start))
		if err != nil {
			return nil, fmt.Errorf("entry %d: start %q: %w", i, e.Start, err)
		}
		end, err := parser.Parse(tz + strings.TrimSpace(e.End))
		if err != nil {
			return nil, fmt.Errorf("entry %d: end %q: %w", i, e.End, err)
		}
		floors = append(floors, policy.ScheduleFloor{Start: start, End: end, Replicas: e.Replicas})
	}
	return floors, nil
}
