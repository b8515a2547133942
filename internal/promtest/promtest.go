// Package promtest runs a real Prometheus for tests: it backfills an
// OpenMetrics file into TSDB blocks with `promtool tsdb
// create-blocks-from openmetrics` and serves them on loopback for the
// test's lifetime (and never longer than a bound). The Debian packages
// prometheus and promtool provide the binaries; without them the test is
// skipped (failed under CI=true).
package promtest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/inferscale/inferscale/internal/testenv"
)

// MaxLifetime bounds a started server, whatever the test does.
const MaxLifetime = 10 * time.Minute

func binary(tb testing.TB, name string) string {
	tb.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		testenv.SkipUnlessCI(tb, "%s is not installed (Debian package prometheus)", name)
	}
	return p
}

// Backfill turns an OpenMetrics file into TSDB blocks in a new directory.
func Backfill(tb testing.TB, openMetrics string) string {
	tb.Helper()
	promtool := binary(tb, "promtool")
	dir := filepath.Join(tb.TempDir(), "tsdb")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, promtool, "tsdb", "create-blocks-from", "openmetrics", "--quiet", openMetrics, dir).CombinedOutput()
	if err != nil {
		tb.Fatalf("promtool tsdb create-blocks-from openmetrics: %v\n%s", err, out)
	}
	return dir
}

// Serve starts Prometheus on the blocks in dataDir (no scraping) and
// returns its URL once it is ready.
func Serve(tb testing.TB, dataDir string) string {
	tb.Helper()
	bin := binary(tb, "prometheus")
	dir := tb.TempDir()
	cfg := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfg, []byte("global:\n  scrape_interval: 1h\n"), 0o644); err != nil {
		tb.Fatal(err)
	}
	addr := freeAddr(tb)
	ctx, cancel := context.WithTimeout(context.Background(), MaxLifetime)
	cmd := exec.CommandContext(ctx, bin, "--config.file="+cfg, "--storage.tsdb.path="+dataDir,
		"--storage.tsdb.retention.time=100y", "--web.listen-address="+addr, "--log.level=warn")
	logf, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		cancel()
		tb.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		cancel()
		tb.Fatalf("starting prometheus: %v", err)
	}
	tb.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		logf.Close()
	})
	url := "http://" + addr
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(url + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return url
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	log, _ := os.ReadFile(logf.Name())
	tb.Fatalf("prometheus on %s never became ready:\n%s", dataDir, log)
	return ""
}

func freeAddr(tb testing.TB) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	return fmt.Sprintf("127.0.0.1:%d", l.Addr().(*net.TCPAddr).Port)
}
