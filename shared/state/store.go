package state

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// Txn is one read-decide-write cycle on a store. While a Txn is open no
// other evaluate process can open one on the same store (file backend) or
// its Save fails on a conflict (ConfigMap backend).
type Txn interface {
	// State is the loaded state: fresh when there was none or it was unusable.
	State() *State
	// Warning says why the stored state was discarded, or is nil.
	Warning() error
	// Save writes st. It may be called at most once.
	Save(ctx context.Context, st *State) error
	// Close releases the lock without writing if Save was not called.
	Close() error
}

// Store opens transactions on persisted state.
type Store interface {
	Begin(ctx context.Context) (Txn, error)
}

// check rejects states that break the invariants the policy relies on.
func (s *State) check() error {
	for i := 1; i < len(s.Pods); i++ {
		if s.Pods[i-1].Name >= s.Pods[i].Name {
			return errors.New("state pods are not sorted by name")
		}
	}
	for _, p := range s.Pods {
		for _, h := range []*Hist{p.TTFT, p.E2E} {
			if h != nil && len(h.LE) != len(h.C) {
				return errors.New("state histogram has unequal bounds and counts")
			}
		}
	}
	for _, r := range s.Recommendations {
		if r.Replicas < 0 {
			return errors.New("state has a negative recommendation")
		}
	}
	if len(s.Startups) > MaxStartups || len(s.Rates) > MaxRates || len(s.Recommendations) > MaxRecommendations || len(s.HourlyPeaks) > MaxHourlyPeaks {
		return errors.New("state history is longer than this build keeps")
	}
	return nil
}

// FileStore keeps state in a JSON file. Writes go to a temporary file that
// is renamed over the old one, so a reader sees the old or the new state,
// never half of one; an flock on Path+".lock" serialises concurrent
// evaluate processes (CPA ticks and API calls). There is deliberately no
// fsync (it costs more than the whole decision): after a power loss the
// file may be empty, which reads as corrupt and means a fresh start, and a
// fresh start never scales down.
type FileStore struct {
	Path string
}

type fileTxn struct {
	path  string
	lock  *os.File
	st    *State
	warn  error
	saved bool
}

// Begin takes the lock (waiting for other holders) and reads the file.
func (f FileStore) Begin(ctx context.Context) (Txn, error) {
	if f.Path == "" {
		return nil, errors.New("state file path is empty")
	}
	lock, err := os.OpenFile(f.Path+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening state lock: %w", err)
	}
	if err := flock(ctx, lock); err != nil {
		lock.Close()
		return nil, err
	}
	t := &fileTxn{path: f.Path, lock: lock}
	b, err := os.ReadFile(f.Path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		t.st = New()
	case err != nil:
		t.st, t.warn = New(), fmt.Errorf("state file %s unreadable, starting fresh: %w", f.Path, err)
	default:
		st, derr := Decode(b)
		if derr != nil {
			t.st, t.warn = New(), fmt.Errorf("state file %s discarded, starting fresh: %w", f.Path, derr)
		} else {
			t.st = st
		}
	}
	return t, nil
}

// flock takes an exclusive lock on f, polling without blocking so that
// ctx can end the wait without leaving a goroutine on the descriptor.
func flock(ctx context.Context, f *os.File) error {
	fd := int(f.Fd())
	wait := time.Millisecond
	for {
		err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, syscall.EWOULDBLOCK), errors.Is(err, syscall.EINTR):
		default:
			return fmt.Errorf("locking state file: %w", err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the state lock: %w", ctx.Err())
		case <-time.After(wait):
		}
		wait = min(2*wait, 20*time.Millisecond)
	}
}

func (t *fileTxn) State() *State  { return t.st }
func (t *fileTxn) Warning() error { return t.warn }

func (t *fileTxn) Save(_ context.Context, st *State) error {
	if t.saved {
		return errors.New("state already saved in this transaction")
	}
	t.saved = true
	b, err := Encode(st)
	if err != nil {
		return err
	}
	dir := filepath.Dir(t.path)
	tmp, err := os.CreateTemp(dir, filepath.Base(t.path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("writing state: %w", err)
	}
	name := tmp.Name()
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		os.Remove(name)
		return fmt.Errorf("writing state: %w", err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(name)
		return fmt.Errorf("closing state: %w", err)
	}
	if err := os.Rename(name, t.path); err != nil {
		os.Remove(name)
		return fmt.Errorf("replacing state file: %w", err)
	}
	return nil
}

func (t *fileTxn) Close() error {
	if t.lock == nil {
		return nil
	}
	err := t.lock.Close() // closing the descriptor releases the flock
	t.lock = nil
	if err != nil {
		return fmt.Errorf("releasing state lock: %w", err)
	}
	return nil
}

// MemoryStore keeps nothing between processes (stateBackend=none): every
// run starts fresh, so the policy never scales down and cooldowns do not
// hold. For tests and experiments only.
type MemoryStore struct{}

type memTxn struct{ st *State }

// Begin returns a fresh state.
func (MemoryStore) Begin(context.Context) (Txn, error) { return &memTxn{st: New()}, nil }

func (t *memTxn) State() *State                      { return t.st }
func (t *memTxn) Warning() error                     { return nil }
func (t *memTxn) Save(context.Context, *State) error { return nil }
func (t *memTxn) Close() error                       { return nil }
