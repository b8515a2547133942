//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
)

// The whole test runs in a private network namespace: every port it opens (the operator's hard-coded :8000, CPA's
// REST API on :5000, Prometheus, the control plane) is invisible to the host and to a concurrent run, and the
// namespace disappears with its last process. Inside it, two local routes stand in for what a cluster network
// gives a pod: pod IPs in podNetwork are local addresses (kwok hands them out from the nodes' podCIDRs, and the
// emulated vLLM servers bind them), and the `kubernetes` Service's cluster IP is local too (the apiserver listens on
// it, as kube-proxy would forward it), so the pods' in-cluster config is the one a kubelet injects.
const (
	netnsEnv    = "INFERSCALE_E2E_NETNS"
	podNetwork  = "10.244.0.0/16"
	serviceCIDR = "10.0.0.0/24"
	apiServerIP = "10.0.0.1"     // the first address of serviceCIDR: the `kubernetes` Service
	nodeIP      = "10.244.254.1" // every kwok node's InternalIP, where kwok serves the kubelet API
)

func TestMain(m *testing.M) {
	if os.Getenv(netnsEnv) == "" {
		if os.Geteuid() != 0 {
			// Tests skip (or fail under CI) with the reason; nothing else needs the namespace.
			os.Exit(m.Run())
		}
		os.Exit(reexecInNetns())
	}
	if err := setUpNetwork(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: private network namespace: %v\n", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// reexecInNetns runs this test binary again, with the same arguments, in a new network namespace and returns its
// exit status. The child dies with this process (Pdeathsig).
func reexecInNetns() int {
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		return 1
	}
	cmd := exec.Command("unshare", append([]string{"--net", "--", self}, os.Args[1:]...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), netnsEnv+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Run(); err != nil {
		if exit, ok := err.(*exec.ExitError); ok {
			return exit.ExitCode()
		}
		fmt.Fprintf(os.Stderr, "e2e: unshare --net (util-linux): %v\n", err)
		return 1
	}
	return 0
}

// setUpNetwork brings the namespace's loopback up and makes the pod network and the API server's Service IP local.
func setUpNetwork() error {
	for _, args := range [][]string{
		{"link", "set", "lo", "up"},
		{"route", "add", "local", podNetwork, "dev", "lo"},
		{"route", "add", "local", apiServerIP + "/32", "dev", "lo"},
	} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			return fmt.Errorf("ip %v (iproute2): %w: %s", args, err, out)
		}
	}
	return nil
}
