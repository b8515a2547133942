package deploy

import (
	"testing"

	"github.com/inferscale/inferscale/internal/testenv"
)

// repoRoot is the module root.
func repoRoot(t *testing.T) string {
	t.Helper()
	return testenv.ModuleRoot(t)
}
