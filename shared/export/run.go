package export

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/inferscale/inferscale/shared/decide/knobs"
	"github.com/inferscale/inferscale/shared/settings"
)

// DefaultListen is the exporter's default address (its containerPort in
// deploy/overlays/exporter).
const DefaultListen = ":9102"

// readTimeout bounds one API request for the state ConfigMap.
const readTimeout = 5 * time.Second

// Process is what an exporter run gets from its process.
type Process struct {
	// Listen is the address to serve on (host:port).
	Listen string
	// Lookup reads the environment (os.LookupEnv): the same settings as
	// evaluate (the operator gives every container of the CPA pod the
	// CustomPodAutoscaler's config), of which it uses the state's place
	// and CPA's interval.
	Lookup  settings.LookupFunc
	Version string
	Log     *slog.Logger
	// Ready, when set, gets the address served on once listening.
	Ready func(addr string)
}

// Interval is CPA's interval between ticks: its interval config entry
// (milliseconds; the operator gives every container of the pod the
// config), else tickInterval, evaluate's knob for the same.
func Interval(lookup settings.LookupFunc, tickInterval time.Duration) time.Duration {
	if v, ok := lookup("interval"); ok {
		if ms, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && ms > 0 {
			return time.Duration(ms) * time.Millisecond
		}
	}
	return tickInterval
}

// Run reads the settings as evaluate does, then serves the state's
// series until ctx ends. Bad settings are an error before it listens.
func Run(ctx context.Context, p Process) error {
	src, err := settings.Load(p.Lookup)
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	ev, err := knobs.Read(src)
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	r, err := Open(ev.Store, func(k string) string { v, _ := p.Lookup(k); return v }, readTimeout)
	if err != nil {
		return fmt.Errorf("opening the state (stateBackend=%s): %w", ev.Store.Backend, err)
	}
	h, err := Handler(NewCollector(r, Options{Interval: Interval(p.Lookup, ev.Policy.TickInterval), Version: p.Version, Log: p.Log}))
	if err != nil {
		return err
	}
	var lc net.ListenConfig
	l, err := lc.Listen(ctx, "tcp", p.Listen)
	if err != nil {
		return fmt.Errorf("listening: %w", err)
	}
	p.Log.Info("serving the state's series", "addr", l.Addr().String(), "path", MetricsPath, "stateBackend", ev.Store.Backend)
	if p.Ready != nil {
		p.Ready(l.Addr().String())
	}
	return Serve(ctx, l, h)
}
