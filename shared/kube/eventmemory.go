package kube

import (
	"math"
	"time"
)

// MaxEventCount is the highest count the recorder writes: an Event's count
// is an int32, and one more than its maximum wraps to -2147483648.
const MaxEventCount = math.MaxInt32 - 1

// clean drops every record of a persisted memory that no recorder writes
// (issue 15, N15: a spam bucket of -1e300 tokens silenced its reason for
// good; a count at the int32 maximum sent "count": -2147483648): a nil
// record; a bucket whose tokens are not within [0, SpamBurst] or dated
// after now; a logged event whose count is outside [1, MaxEventCount] or
// whose times are after now or out of order; a message list longer than
// AggregateMaxEvents or dated after now. A dropped record only costs
// precision (the bucket starts full, the event is created or read anew),
// and each table is cut to MaxMemoryEntries.
func (m *EventMemory) clean(now time.Time) {
	for k, b := range m.Spam {
		if b == nil || math.IsNaN(b.Tokens) || b.Tokens < 0 || b.Tokens > SpamBurst || b.At.After(now) {
			delete(m.Spam, k)
		}
	}
	for k, l := range m.Logged {
		if l == nil || l.Count < 1 || l.Count > MaxEventCount || l.Last.After(now) || l.First.After(l.Last) {
			delete(m.Logged, k)
		}
	}
	for k, s := range m.Similar {
		if s == nil || len(s.Messages) > AggregateMaxEvents || s.Last.After(now) {
			delete(m.Similar, k)
		}
	}
	evictOldest(m.Spam, func(r *SpamRecord) time.Time { return r.At })
	evictOldest(m.Logged, func(r *LoggedEvent) time.Time { return r.Last })
	evictOldest(m.Similar, func(r *SimilarRecord) time.Time { return r.Last })
}

// nextCount is the count after count, saturating at MaxEventCount.
func nextCount(count int32) int32 { return min(max(count, 0), MaxEventCount-1) + 1 }

// apiCount is a count the API returned, within [1, MaxEventCount].
func apiCount(c int64) int32 { return int32(min(max(c, 1), MaxEventCount)) }
