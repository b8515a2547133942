package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/inferscale/inferscale/shared/state"
)

// File keeps state in a JSON file. Writes go to a temporary file that is
// renamed over the old one, so a reader sees the old or the new state,
// never half of one; an flock on Path+".lock" serialises concurrent
// evaluate processes (CPA ticks and API calls). There is deliberately no
// fsync: after a power loss the file may be empty, which reads as corrupt
// and means a fresh start, and a fresh start never scales down.
type File struct {
	Path string
}

type fileTxn struct {
	path string
	lock *os.File
	loaded
}

// Begin takes the lock (waiting for other holders) and reads the file.
func (f File) Begin(ctx context.Context) (Txn, error) {
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
	removeOrphans(f.Path, time.Now())
	t := &fileTxn{path: f.Path, lock: lock}
	t.st, t.warn = readFile(f.Path)
	return t, nil
}

// orphanAge is how old a temporary state file must be to be an orphan: a
// Save renames its file within milliseconds.
const orphanAge = time.Minute

// removeOrphans deletes the temporary files a process killed between
// writing and renaming left behind. It runs under the lock, so no Save is
// under way, and it only touches regular files named as Save names them
// (path + ".tmp-" + digits) that are older than orphanAge. It is best
// effort: a file it cannot remove is left for the next tick.
func removeOrphans(path string, now time.Time) {
	prefix := filepath.Base(path) + ".tmp-"
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		return
	}
	for _, e := range entries {
		suffix, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok || suffix == "" || strings.Trim(suffix, "0123456789") != "" || !e.Type().IsRegular() {
			continue
		}
		if info, err := e.Info(); err == nil && now.Sub(info.ModTime()) > orphanAge {
			os.Remove(filepath.Join(filepath.Dir(path), e.Name()))
		}
	}
}

// readFile reads the state file: fresh when there is none, fresh with a
// warning when it is unreadable or unusable.
func readFile(path string) (*state.State, error) {
	fh, err := os.Open(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return state.New(), nil
	case err != nil:
		return state.New(), fmt.Errorf("state file %s unreadable, starting fresh: %w", path, err)
	}
	defer fh.Close()
	st, err := state.Read(fh)
	if err != nil {
		return state.New(), fmt.Errorf("state file %s discarded, starting fresh: %w", path, err)
	}
	return st, nil
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

func (t *fileTxn) Save(_ context.Context, st *state.State) error {
	b, err := t.encodeOnce(st)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(t.path), filepath.Base(t.path)+".tmp-*")
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
