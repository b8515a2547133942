package main

import (
	"testing"

	"github.com/inferscale/inferscale/internal/testenv"
)

// The shipped binary links no test or simulator helper.
func TestLinksNoTestOrSimulatorCode(t *testing.T) {
	const mod = "github.com/inferscale/inferscale/"
	testenv.ForbidDeps(t, "./evaluate", mod+"internal", mod+"sim")
}
