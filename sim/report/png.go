package report

import (
	"fmt"
	"os"

	"gonum.org/v1/plot/vg/vgimg"
)

func savePNG(img *vgimg.Canvas, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("writing picture: %w", err)
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("writing picture %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing picture %s: %w", path, err)
	}
	return nil
}
