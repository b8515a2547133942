package fleet

import (
	"github.com/inferscale/inferscale/shared/signal"
	"time"
)

// applyFleet fills the view from a per-resource fleet report where the
// per-pod readings did not.
func applyFleet(v *View, f *signal.Fleet, staleAfter time.Duration) {
	if f.ReadyPods != nil && v.Ready == 0 {
		v.Ready = *f.ReadyPods
	}
	if f.StartingPods != nil && v.Starting == 0 {
		v.Starting = *f.StartingPods
	}
	if f.Waiting != nil {
		v.Waiting = *f.Waiting
	}
	if f.Running != nil {
		v.Running = *f.Running
	}
	if f.KVCacheMean != nil {
		v.KVMean = ptr(*f.KVCacheMean)
	}
	if f.KVCacheMax != nil {
		v.KVMax = ptr(*f.KVCacheMax)
	}
	if f.GPUUtilMean != nil && v.GPUUtil == nil {
		v.GPUUtil = ptr(*f.GPUUtilMean)
		v.GPUUtilEWMA = ptr(*f.GPUUtilMean)
	}
	if q, ok := f.TTFTQuantiles["0.95"]; ok {
		v.TTFTP95 = ptr(q)
	}
	if q, ok := f.TTFTQuantiles["0.99"]; ok {
		v.TTFTP99 = ptr(q)
	}
	if q, ok := f.E2EQuantiles["0.95"]; ok {
		v.E2EP95 = ptr(q)
	}
	if q, ok := f.E2EQuantiles["0.99"]; ok {
		v.E2EP99 = ptr(q)
	}
	if f.ArrivalRate != nil {
		v.ArrivalRate = ptr(*f.ArrivalRate)
	}
	if f.Waiting == nil || len(f.Errors) > 0 {
		v.Missing++
		v.MissingNames = append(v.MissingNames, "fleet")
	}
	if f.StalenessSeconds != nil && staleAfter > 0 && *f.StalenessSeconds > staleAfter.Seconds() {
		v.Missing++
		v.MissingNames = append(v.MissingNames, "fleet(stale)")
	}
}
