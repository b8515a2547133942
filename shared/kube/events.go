package kube

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// Event types (core/v1).
const (
	EventNormal  = "Normal"
	EventWarning = "Warning"
)

// Reasons of the scale events (as the HPA records them); the Warning
// reasons are the policy's (policy.Warn*).
const (
	ReasonScaledUp   = "ScaledUp"
	ReasonScaledDown = "ScaledDown"
)

// The event recorder's defaults, client-go's (tools/record/events_cache.go).
const (
	// AggregateMaxEvents distinct messages of one reason within
	// AggregateInterval are combined into one event.
	AggregateMaxEvents = 10
	AggregateInterval  = 10 * time.Minute
	// SpamBurst events may be recorded at once per object and reason; the
	// budget refills at SpamQPS (one every five minutes).
	SpamBurst = 25
	SpamQPS   = 1.0 / 300
	// MaxMessageBytes bounds a message (the events API's note limit).
	MaxMessageBytes = 1024
	// MaxMemoryEntries bounds each table of EventMemory.
	MaxMemoryEntries = 64
)

// ObjectRef is the object an Event is about (core/v1 ObjectReference).
type ObjectRef struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace"`
	Name       string `json:"name"`
	UID        string `json:"uid,omitempty"`
}

// ObjectRefFromTarget reads the reference from a scale target's JSON (the
// `resource` CPA passes to evaluate).
func ObjectRefFromTarget(target []byte) (ObjectRef, error) {
	r := ObjectRef{
		APIVersion: gjson.GetBytes(target, "apiVersion").String(),
		Kind:       gjson.GetBytes(target, "kind").String(),
		Namespace:  gjson.GetBytes(target, "metadata.namespace").String(),
		Name:       gjson.GetBytes(target, "metadata.name").String(),
		UID:        gjson.GetBytes(target, "metadata.uid").String(),
	}
	if err := r.validate(); err != nil {
		return ObjectRef{}, fmt.Errorf("scale target: %w", err)
	}
	return r, nil
}

func (r ObjectRef) validate() error {
	if r.Kind == "" || r.Name == "" || r.Namespace == "" || r.APIVersion == "" {
		return fmt.Errorf("object reference %s/%s %s/%s: apiVersion, kind, namespace and name are required", r.APIVersion, r.Kind, r.Namespace, r.Name)
	}
	return nil
}

// Event is what to record.
type Event struct {
	Type    string // EventNormal or EventWarning
	Reason  string // UpperCamelCase, e.g. ReasonScaledUp
	Message string // one line; longer than MaxMessageBytes is cut
}

// EventMemory is what the recorder remembers between ticks: client-go keeps
// it in process memory; evaluate is a fresh process per tick, so the caller
// persists it (for example in inferscale's state) and passes it back. It is
// bounded (MaxMemoryEntries per table) and keyed by hashes. A lost memory
// only costs precision: the API still deduplicates by name (see Record).
type EventMemory struct {
	// Similar is per aggregation key (object, type, reason): the distinct
	// messages seen within AggregateInterval of the last one.
	Similar map[string]*SimilarRecord `json:"similar,omitempty"`
	// Spam is per object and reason: the token bucket.
	Spam map[string]*SpamRecord `json:"spam,omitempty"`
	// Logged is per event name: what the API holds.
	Logged map[string]*LoggedEvent `json:"logged,omitempty"`
}

// SimilarRecord tracks messages of one aggregation key.
type SimilarRecord struct {
	Messages []string  `json:"messages"` // hashes, oldest first
	Last     time.Time `json:"last"`
}

// SpamRecord is a token bucket.
type SpamRecord struct {
	Tokens float64   `json:"tokens"`
	At     time.Time `json:"at"`
}

// LoggedEvent is an Event object the recorder wrote.
type LoggedEvent struct {
	Count int32     `json:"count"`
	First time.Time `json:"first"`
	Last  time.Time `json:"last"`
}

// Actions Record took.
const (
	ActionCreated  = "created"
	ActionPatched  = "patched"
	ActionFiltered = "filtered" // dropped by the spam filter
)

// RecordResult says what Record did.
type RecordResult struct {
	Action string
	// Name of the Event object; Count its count after the call.
	Name  string
	Count int32
	// Aggregated is true when the event was combined with similar ones.
	Aggregated bool
}

// EventRecorder records Events on objects the way client-go's event
// recorder does (tools/record: dedupe, aggregation, spam filter), but from
// a process that lives one tick.
type EventRecorder struct {
	c *Client
	// Component is source.component and reportingComponent ("inferscale").
	Component string
	// Instance is reportingInstance (the autoscaler's pod name); optional.
	Instance string
}

// NewEventRecorder builds a recorder writing through c.
func NewEventRecorder(c *Client, component, instance string) *EventRecorder {
	if component == "" {
		component = "inferscale"
	}
	return &EventRecorder{c: c, Component: component, Instance: instance}
}

// Record records ev on obj at now, correlating with mem (nil: a fresh
// memory, so only the API-side dedupe applies).
//
//   - Aggregation: the AggregateMaxEvents-th distinct message of one
//     (object, type, reason) within AggregateInterval of the previous one
//     goes into one event "(combined from similar events): <message>".
//   - Spam filter: SpamBurst events per (object, reason), refilled at
//     SpamQPS; beyond that the event is dropped (ActionFiltered, no error).
//     client-go's key has no reason; keeping it means a flood of scale
//     events never silences an alert.
//   - Dedupe: the Event's name is derived from its key (object, type,
//     reason, message), so a repeat PATCHes count and lastTimestamp
//     (strategic merge) instead of creating an object. Without memory of
//     it, Record creates it, and on AlreadyExists reads and patches it.
//
// RBAC: events create and patch (get when the memory was lost), in the
// object's namespace. An error is for the caller to log: it must never fail
// the tick.
func (r *EventRecorder) Record(ctx context.Context, obj ObjectRef, ev Event, now time.Time, mem *EventMemory) (RecordResult, error) {
	if err := obj.validate(); err != nil {
		return RecordResult{}, fmt.Errorf("recording event: %w", err)
	}
	if ev.Type != EventNormal && ev.Type != EventWarning {
		return RecordResult{}, fmt.Errorf("recording event: type %q: want Normal or Warning", ev.Type)
	}
	if ev.Reason == "" || len(ev.Reason) > 128 || strings.ContainsAny(ev.Reason, " \t\n") {
		return RecordResult{}, fmt.Errorf("recording event: reason %q: want one UpperCamelCase word", ev.Reason)
	}
	if mem == nil {
		mem = &EventMemory{}
	}
	now = now.UTC().Truncate(time.Second)
	mem.clean(now)
	msg := oneLine(ev.Message)
	aggKey := hashKey(r.Component, r.Instance, obj.APIVersion, obj.Kind, obj.Namespace, obj.Name, obj.UID, ev.Type, ev.Reason)

	key, aggregated := mem.aggregate(aggKey, hashKey(msg), now)
	if aggregated {
		msg = cut("(combined from similar events): " + msg)
	}
	if !mem.allow(aggKey, now) {
		return RecordResult{Action: ActionFiltered, Aggregated: aggregated}, nil
	}
	name := eventName(obj.Name, key)
	res, err := r.send(ctx, obj, ev, msg, name, now, mem.Logged[name])
	res.Aggregated = aggregated
	if err != nil {
		return res, fmt.Errorf("recording event %s %s on %s %s/%s: %w", ev.Type, ev.Reason, obj.Kind, obj.Namespace, obj.Name, err)
	}
	mem.remember(name, res.Count, now)
	return res, nil
}

// aggregate notes the message and returns the dedupe key, and whether the
// event is to be combined with similar ones (client-go's EventAggregate).
func (m *EventMemory) aggregate(aggKey, msgKey string, now time.Time) (string, bool) {
	if m.Similar == nil {
		m.Similar = map[string]*SimilarRecord{}
	}
	rec := m.Similar[aggKey]
	if rec == nil || now.Sub(rec.Last) > AggregateInterval {
		rec = &SimilarRecord{}
		m.Similar[aggKey] = rec
	}
	if !slices.Contains(rec.Messages, msgKey) {
		rec.Messages = append(rec.Messages, msgKey)
	}
	rec.Last = now
	evictOldest(m.Similar, func(r *SimilarRecord) time.Time { return r.Last })
	if len(rec.Messages) < AggregateMaxEvents {
		return hashKey(aggKey, msgKey), false
	}
	rec.Messages = rec.Messages[1:] // do not grow past the threshold
	return aggKey, true
}

// allow takes a token from the (object, reason) bucket.
func (m *EventMemory) allow(key string, now time.Time) bool {
	if m.Spam == nil {
		m.Spam = map[string]*SpamRecord{}
	}
	b := m.Spam[key]
	if b == nil {
		b = &SpamRecord{Tokens: SpamBurst, At: now}
		m.Spam[key] = b
	}
	if dt := now.Sub(b.At).Seconds(); dt > 0 {
		b.Tokens = min(SpamBurst, b.Tokens+dt*SpamQPS)
	}
	b.At = now
	evictOldest(m.Spam, func(r *SpamRecord) time.Time { return r.At })
	if b.Tokens < 1 {
		return false
	}
	b.Tokens--
	return true
}

func (m *EventMemory) remember(name string, count int32, now time.Time) {
	if m.Logged == nil {
		m.Logged = map[string]*LoggedEvent{}
	}
	l := m.Logged[name]
	if l == nil || count == 1 {
		l = &LoggedEvent{First: now}
		m.Logged[name] = l
	}
	l.Count, l.Last = count, now
	evictOldest(m.Logged, func(r *LoggedEvent) time.Time { return r.Last })
}

// send patches a known event (creating it when it expired) or creates a new
// one (patching it when it already exists).
func (r *EventRecorder) send(ctx context.Context, obj ObjectRef, ev Event, msg, name string, now time.Time, known *LoggedEvent) (RecordResult, error) {
	if known != nil {
		n, err := r.patchEvent(ctx, obj.Namespace, name, nextCount(known.Count), msg, now)
		if err == nil {
			return RecordResult{Action: ActionPatched, Name: name, Count: n}, nil
		}
		if !IsNotFound(err) {
			return RecordResult{Name: name}, err
		}
		// Expired (events live an hour by default): start again.
	}
	err := r.createEvent(ctx, obj, ev, msg, name, now)
	if err == nil {
		return RecordResult{Action: ActionCreated, Name: name, Count: 1}, nil
	}
	if !IsConflict(err) {
		return RecordResult{Name: name}, err
	}
	count, err := r.eventCount(ctx, obj.Namespace, name)
	if err != nil {
		return RecordResult{Name: name}, fmt.Errorf("event exists and cannot be read: %w", err)
	}
	n, err := r.patchEvent(ctx, obj.Namespace, name, nextCount(count), msg, now)
	if err != nil {
		return RecordResult{Name: name}, err
	}
	return RecordResult{Action: ActionPatched, Name: name, Count: n}, nil
}

// eventJSON is the part of a core/v1 Event inferscale writes.
type eventJSON struct {
	APIVersion         string      `json:"apiVersion"`
	Kind               string      `json:"kind"`
	Metadata           eventMeta   `json:"metadata"`
	InvolvedObject     ObjectRef   `json:"involvedObject"`
	Reason             string      `json:"reason"`
	Message            string      `json:"message"`
	Type               string      `json:"type"`
	Source             eventSource `json:"source"`
	FirstTimestamp     string      `json:"firstTimestamp"`
	LastTimestamp      string      `json:"lastTimestamp"`
	Count              int32       `json:"count"`
	ReportingComponent string      `json:"reportingComponent,omitempty"`
	ReportingInstance  string      `json:"reportingInstance,omitempty"`
}

type eventMeta struct {
	Name      string            `json:"name"`
	Namespace string            `json:"namespace"`
	Labels    map[string]string `json:"labels,omitempty"`
}

type eventSource struct {
	Component string `json:"component"`
}

func eventsPath(ns, name string) string {
	p := "/api/v1/namespaces/" + url.PathEscape(ns) + "/events"
	if name != "" {
		p += "/" + url.PathEscape(name)
	}
	return p
}

func (r *EventRecorder) createEvent(ctx context.Context, obj ObjectRef, ev Event, msg, name string, now time.Time) error {
	ts := now.Format(time.RFC3339)
	body, err := encodeJSON(eventJSON{
		APIVersion: "v1", Kind: "Event",
		Metadata:       eventMeta{Name: name, Namespace: obj.Namespace, Labels: map[string]string{"app.kubernetes.io/managed-by": "inferscale"}},
		InvolvedObject: obj, Reason: ev.Reason, Message: msg, Type: ev.Type,
		Source:         eventSource{Component: r.Component},
		FirstTimestamp: ts, LastTimestamp: ts, Count: 1,
		ReportingComponent: r.Component, ReportingInstance: r.Instance,
	})
	if err != nil {
		return fmt.Errorf("encoding event: %w", err)
	}
	_, err = r.c.Do(ctx, http.MethodPost, eventsPath(obj.Namespace, ""), "application/json", body)
	return err
}

// patchEvent sets count, lastTimestamp and message (client-go's patch) and
// returns the count the API answered.
func (r *EventRecorder) patchEvent(ctx context.Context, ns, name string, count int32, msg string, now time.Time) (int32, error) {
	body, err := encodeJSON(map[string]any{"count": count, "lastTimestamp": now.Format(time.RFC3339), "message": msg})
	if err != nil {
		return 0, fmt.Errorf("encoding event patch: %w", err)
	}
	b, err := r.c.Do(ctx, http.MethodPatch, eventsPath(ns, name), "application/strategic-merge-patch+json", body)
	if err != nil {
		return 0, err
	}
	if c := gjson.GetBytes(b, "count"); c.Exists() {
		return apiCount(c.Int()), nil
	}
	return count, nil
}

func (r *EventRecorder) eventCount(ctx context.Context, ns, name string) (int32, error) {
	b, err := r.c.Do(ctx, http.MethodGet, eventsPath(ns, name), "", nil)
	if err != nil {
		return 0, err
	}
	c := gjson.GetBytes(b, "count")
	if !c.Exists() {
		return 1, nil // the API omits count for events created without one
	}
	return apiCount(c.Int()), nil
}

// encodeJSON is json.Marshal without HTML escaping (messages hold ">").
func encodeJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// eventName is <object>.<16 hex of the key>: a valid name that is the
// same for every repeat of the event.
func eventName(object, key string) string {
	if len(object) > 200 {
		object = strings.TrimRight(object[:200], ".-")
	}
	return object + "." + key[:16]
}

// hashKey joins parts unambiguously and hashes them (64-bit FNV-1a, hex).
func hashKey(parts ...string) string {
	h := fnv.New64a()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:%s;", len(p), p)
	}
	return fmt.Sprintf("%016x", h.Sum64())
}

// oneLine folds whitespace runs (newlines included) to single spaces and
// cuts the message to MaxMessageBytes.
func oneLine(s string) string { return cut(strings.Join(strings.Fields(s), " ")) }

func cut(s string) string {
	if len(s) <= MaxMessageBytes {
		return s
	}
	const ell = "…"
	i := MaxMessageBytes - len(ell)
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + ell
}

// evictOldest keeps m within MaxMemoryEntries by dropping the oldest entries.
func evictOldest[T any](m map[string]*T, at func(*T) time.Time) {
	for len(m) > MaxMemoryEntries {
		oldest, first := "", true
		for k, v := range m {
			if first || at(v).Before(at(m[oldest])) || (at(v).Equal(at(m[oldest])) && k < oldest) {
				oldest, first = k, false
			}
		}
		delete(m, oldest)
	}
}
