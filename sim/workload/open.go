package workload

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Open picks a loader by name: "synthetic" or "synthetic:demo" (the
// built-in demo workload), a directory or a *.tar.gz/*.tgz (ServeGen), a
// *.jsonl[.gz] (Mooncake), or a *.csv[.gz] recognised by its header (Azure
// LLM 2023/2024, BurstGPT) or by its name (a ServeGen
// chunk-<client>-trace.csv). seed drives the generated workloads
// (synthetic, ServeGen); file replays ignore it.
func Open(spec string, seed int64) (Source, error) {
	switch spec {
	case "synthetic", "synthetic:demo":
		return Synthetic(DemoOptions(seed)), nil
	}
	if strings.HasPrefix(spec, "synthetic:") {
		return nil, fmt.Errorf("workload %q: unknown synthetic preset (have: synthetic:demo)", spec)
	}
	info, err := os.Stat(spec)
	if err != nil {
		return nil, fmt.Errorf("workload %q: %w", spec, err)
	}
	plain := strings.TrimSuffix(spec, ".gz")
	switch {
	case info.IsDir(), strings.HasSuffix(spec, ".tar.gz"), strings.HasSuffix(spec, ".tgz"):
		return OpenServeGen(spec, ServeGenOptions{Seed: seed})
	case strings.HasSuffix(plain, ".jsonl"):
		return OpenMooncake(spec)
	case strings.HasSuffix(plain, ".csv"):
		if chunkTraceName.MatchString("/" + info.Name()) {
			return OpenServeGen(spec, ServeGenOptions{Seed: seed})
		}
		header, err := firstLine(spec)
		if err != nil {
			return nil, err
		}
		rec := strings.Split(header, ",")
		switch {
		case headerMatches(rec, azureHeader):
			return OpenAzure(spec)
		case headerMatches(rec, burstGPTHeader):
			return OpenBurstGPT(spec, BurstGPTOptions{})
		}
		return nil, fmt.Errorf("workload %q: header %q is neither Azure (%s) nor BurstGPT (%s)",
			spec, header, strings.Join(azureHeader, ","), strings.Join(burstGPTHeader, ","))
	}
	return nil, fmt.Errorf("workload %q: unknown kind (want synthetic[:demo], a ServeGen .tar.gz or directory, a Mooncake .jsonl, or an Azure/BurstGPT .csv)", spec)
}

// IsServeGen reports whether Open would read spec as ServeGen rate CSVs:
// a directory, a *.tar.gz/*.tgz, or a chunk-<client>-trace.csv file.
func IsServeGen(spec string) bool {
	if strings.HasSuffix(spec, ".tar.gz") || strings.HasSuffix(spec, ".tgz") {
		return true
	}
	if chunkTraceName.MatchString("/" + filepath.Base(spec)) {
		return true
	}
	info, err := os.Stat(spec)
	return err == nil && info.IsDir()
}

func firstLine(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("workload: %w", err)
	}
	defer f.Close()
	var in io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			return "", fmt.Errorf("workload %s: gunzip: %w", path, err)
		}
		defer zr.Close()
		in = zr
	}
	line, err := bufio.NewReader(in).ReadString('\n')
	if err != nil && line == "" {
		return "", fmt.Errorf("workload %s: read header: %w", path, err)
	}
	return strings.TrimRight(line, "\r\n"), nil
}
