package main

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// binary is the exporter executable built once for these tests.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "exporter-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "exporter")
	build := exec.Command("go", "build", "-o", binary, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building exporter: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func command(args []string, env ...string) *exec.Cmd {
	cmd := exec.Command(binary, args...)
	cmd.Env = append([]string{"configPath=/nonexistent/config.yaml"}, env...)
	return cmd
}

// --help and --version answer and exit 0; a bad flag or argument exits 2
// and bad settings exit 1, each with one line on stderr, before serving.
func TestFlagsAndBadSettings(t *testing.T) {
	for _, c := range []struct {
		args           []string
		env            []string
		code           int
		stdout, stderr string
	}{
		{args: []string{"--help"}, stdout: "usage: exporter [-listen host:port]"},
		{args: []string{"-h"}, stdout: "-listen"},
		{args: []string{"--version"}, stdout: "exporter "},
		{args: []string{"--bogus"}, code: 2, stderr: "-bogus"},
		{args: []string{"metrics"}, code: 2, stderr: `unexpected argument "metrics"`},
		{args: []string{"--listen", "127.0.0.1:0"}, env: []string{"stateBackend=bogus"}, code: 1, stderr: "stateBackend"},
		{args: []string{"--listen", "127.0.0.1:0"}, env: []string{"stateBackend=configmap"}, code: 1, stderr: "not running in a cluster"},
		{args: []string{"--listen", "256.0.0.1:http"}, code: 1, stderr: "listening"},
	} {
		var o, e bytes.Buffer
		cmd := command(c.args, c.env...)
		cmd.Stdout, cmd.Stderr = &o, &e
		err := cmd.Run()
		code := 0
		if x, ok := err.(*exec.ExitError); ok {
			code = x.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != c.code || !strings.Contains(o.String(), c.stdout) || !strings.Contains(e.String(), c.stderr) {
			t.Errorf("exporter %q %v: exit %d, stdout %q, stderr %q; want %d, %q, %q", c.args, c.env, code, o.String(), e.String(), c.code, c.stdout, c.stderr)
		}
		if c.code != 0 && strings.Count(strings.TrimSpace(e.String()), "\n") > 0 {
			t.Errorf("exporter %q: more than one line on stderr: %q", c.args, e.String())
		}
	}
}

// The binary serves the state of its settings' store and stops on
// SIGTERM with exit 0.
func TestServesTheStateAndStopsOnSIGTERM(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	golden, err := filepath.Abs("../shared/export/testdata/state.json")
	if err != nil {
		t.Fatal(err)
	}
	var e bytes.Buffer
	cmd := command([]string{"--listen", addr}, "stateBackend=file", "stateFile="+golden)
	cmd.Stderr = &e
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var body string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		body = string(b)
		break
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, e.String())
	}
	for _, s := range []string{"inferscale_state_up 1", "inferscale_target_replicas 5", `inferscale_decision_info{decided_by="sizing",mode="active"} 1`} {
		if !strings.Contains(body, s) {
			t.Errorf("scrape lacks %q:\n%s\nstderr: %s", s, body, e.String())
		}
	}
}
