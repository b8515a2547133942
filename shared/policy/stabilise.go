package policy

import (
	"time"

	"github.com/inferscale/inferscale/shared/state"
)

// stabiliseUp and stabiliseDown are the stabilisation windows and
// cooldowns, as the HPA controller applies them apart from its replica
// calculator. Cooldowns run from scales that happened (the observed count
// changed), not from recommendations CPA may have clamped or held.

func stabiliseUp(d *Decision, st *state.State, c Config, current, rec int, lastUp *time.Time, now time.Time) int {
	if c.UpStabilization > 0 {
		lowest := rec
		for _, r := range st.Recommendations {
			if now.Sub(r.At) <= c.UpStabilization && r.Replicas < lowest {
				lowest = r.Replicas
			}
		}
		if lowest < rec {
			d.because("up-stabilisation window %s: lowest recent recommendation %d", c.UpStabilization, lowest)
			rec = max(lowest, current)
		}
	}
	if lastUp == nil || now.Sub(*lastUp) >= c.ScaleUpCooldown || now.Sub(*lastUp) < 0 {
		return rec
	}
	if d.Urgent {
		d.because("urgent (queue or SLO breach, corroborated): the scale-up cooldown %s does not apply", c.ScaleUpCooldown)
		return rec
	}
	if d.Signals > st.LastScaleUpSignals && d.Signals >= 2 {
		d.because("escalation: %d signals now against %d at the last scale-up, the cooldown %s does not hold it",
			d.Signals, st.LastScaleUpSignals, c.ScaleUpCooldown)
		return rec
	}
	d.because("scale-up to %d held: cooldown %s since the last scale-up %.0fs ago", rec, c.ScaleUpCooldown, now.Sub(*lastUp).Seconds())
	return current
}

func stabiliseDown(d *Decision, st *state.State, c Config, current, rec int, lastDown *time.Time, now time.Time) int {
	if c.DownStabilization > 0 {
		covered := false
		highest := rec
		for _, r := range st.Recommendations {
			age := now.Sub(r.At)
			if age >= c.DownStabilization {
				covered = true
			}
			if age <= c.DownStabilization && age >= 0 && r.Replicas > highest {
				highest = r.Replicas
			}
		}
		if !covered {
			d.because("no scale-down yet: less than the down-stabilisation window (%s) of history", c.DownStabilization)
			return current
		}
		if highest > rec {
			rec = min(highest, current)
			if rec == current {
				d.because("no scale-down: a recommendation of %d within the down-stabilisation window %s", highest, c.DownStabilization)
				return current
			}
			d.because("down-stabilisation window %s: highest recent recommendation %d", c.DownStabilization, highest)
		}
	}
	if lastDown != nil && now.Sub(*lastDown) < c.ScaleDownCooldown && now.Sub(*lastDown) >= 0 {
		d.because("scale-down to %d held: cooldown %s since the last scale-down %.0fs ago", rec, c.ScaleDownCooldown, now.Sub(*lastDown).Seconds())
		return current
	}
	return rec
}
