//go:build unix

package inferscale

import (
	"os/exec"
	"syscall"
)

// ownGroup runs cmd in its own process group and makes cancellation kill
// the whole group, so that a stage's children cannot outlive a timeout.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
