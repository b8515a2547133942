package runner

import (
	"strings"
	"testing"

	"github.com/inferscale/inferscale/sim/engine"
)

// A bad policy list is refused as a whole, naming each bad spec, before
// any work; a good one passes.
func TestCheckRefusesBadSpecsBeforeAnyWork(t *testing.T) {
	cfg := engine.DefaultConfig()
	good, err := ParseSpecs("inferscale;hpa-queue;kpa;static;oracle")
	if err != nil {
		t.Fatal(err)
	}
	if err := Check(good, cfg, Options{Mode: Fast}); err != nil {
		t.Fatalf("good specs refused: %v", err)
	}
	bad, err := ParseSpecs("inferscale;bogus;hpa-queue:target=abc;inferscale:queueTarget=-1")
	if err != nil {
		t.Fatal(err)
	}
	err = Check(bad, cfg, Options{Mode: Fast})
	if err == nil {
		t.Fatal("bad specs accepted")
	}
	for _, want := range []string{`"bogus"`, "target", "queueTarget"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
	if err := Check(good[:1], cfg, Options{Mode: Faithful, BinDir: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "make build") {
		t.Errorf("faithful mode without binaries: %v", err)
	}
}
