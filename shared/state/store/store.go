// Package store keeps the evaluate state between CPA ticks (each tick is
// a fresh process): in a file of the CPA pod (flock, temporary file and
// rename, size-limited read), in a ConfigMap (optimistic concurrency on
// resourceVersion), or nowhere. The state model and its encoding are
// package state's.
package store

import (
	"context"
	"errors"

	"github.com/inferscale/inferscale/shared/state"
)

// Txn is one read-decide-write cycle on a store. While a Txn is open no
// other evaluate process can open one on the same store (file backend) or
// its Save fails on a conflict (ConfigMap backend).
type Txn interface {
	// State is the loaded state: fresh when there was none or it was unusable.
	State() *state.State
	// Warning says why the stored state was discarded, or is nil.
	Warning() error
	// Save writes st. It may be called at most once.
	Save(ctx context.Context, st *state.State) error
	// Close releases the lock without writing if Save was not called.
	Close() error
}

// loaded is what every stored transaction holds: the state it read, why a
// stored one was discarded, and whether Save has run.
type loaded struct {
	st    *state.State
	warn  error
	saved bool
}

func (l *loaded) State() *state.State { return l.st }
func (l *loaded) Warning() error      { return l.warn }

// encodeOnce marks the transaction saved and encodes st; a second call is
// an error.
func (l *loaded) encodeOnce(st *state.State) ([]byte, error) {
	if l.saved {
		return nil, errors.New("state already saved in this transaction")
	}
	l.saved = true
	return state.Encode(st)
}

// Store opens transactions on persisted state.
type Store interface {
	Begin(ctx context.Context) (Txn, error)
}

// Memory keeps nothing between processes (stateBackend=none): every run
// starts fresh, so the policy never scales down and cooldowns do not
// hold. For tests and experiments only.
type Memory struct{}

type memTxn struct{ st *state.State }

// Begin returns a fresh state.
func (Memory) Begin(context.Context) (Txn, error) { return &memTxn{st: state.New()}, nil }

func (t *memTxn) State() *state.State                      { return t.st }
func (t *memTxn) Warning() error                           { return nil }
func (t *memTxn) Save(context.Context, *state.State) error { return nil }
func (t *memTxn) Close() error                             { return nil }
