package source

import (
	"context"
	"errors"
	"fmt"

	"github.com/inferscale/inferscale/shared/expo"
	"github.com/inferscale/inferscale/shared/podinfo"
	"github.com/inferscale/inferscale/shared/preset"
	"github.com/inferscale/inferscale/shared/signal"
)

// Direct scrapes a pod's inference server at http://<podIP>:<port><path>
// and maps the families with a preset (fixed, or detected per scrape).
type Direct struct {
	Scraper *Scraper
	// Port is the metrics port; PortName, when set, names a container port
	// that wins over Port where the pod declares it.
	Port     int
	PortName string
	Path     string
	// Preset is the fixed mapping; nil means detect among Presets.
	Preset  *preset.Preset
	Presets []*preset.Preset
}

// Read fills pod from the pod's server. Any failure is recorded in
// pod.Error and the function returns normally: one bad pod never aborts
// the tick. A pod without an IP (Pending) is not scraped and not an error.
func (d *Direct) Read(ctx context.Context, in *podinfo.Info, pod *signal.Pod) {
	if !in.PodIP.IsValid() {
		pod.Notes = append(pod.Notes, "no pod IP yet; not scraped")
		return
	}
	fams, err := d.fetch(ctx, in)
	if err != nil {
		pod.Error = err.Error()
		return
	}
	p := d.Preset
	if p == nil {
		p, err = preset.Detect(d.Presets, fams.Has)
		if err != nil {
			pod.Error = fmt.Sprintf("%v (%d families; set the server key or a customMapping)", err, len(fams))
			return
		}
	}
	p.Apply(fams, pod)
}

// wanted is the set of families the mapping (or detection) can use.
func (d *Direct) wanted() expo.Wanted {
	if d.Preset != nil {
		return preset.Wanted(d.Preset)
	}
	return preset.Wanted(d.Presets...)
}

func (d *Direct) fetch(ctx context.Context, in *podinfo.Info) (expo.Families, error) {
	port := d.Port
	if d.PortName != "" {
		if p, ok := in.Ports[d.PortName]; ok {
			port = p
		}
	}
	u, err := URL(in.PodIP, port, d.Path)
	if err != nil {
		return nil, fmt.Errorf("metrics URL: %w", err)
	}
	fams, err := d.Scraper.Fetch(ctx, u, d.wanted())
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("scraping %s: timed out: %w", u, err)
		}
		return nil, err
	}
	return fams, nil
}
