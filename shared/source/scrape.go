// Package source reads inferscale's signals from where they live: the
// inference server's own /metrics (direct scrape), dcgm-exporter on the
// pod's node, DCGM itself (build tag dcgm), and Prometheus. One file per
// source; every source records its failures in the output instead of
// aborting the CPA tick.
package source

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/inferscale/inferscale/shared/expo"
)

// DefaultMaxBodyBytes bounds one /metrics response (a busy vLLM server
// with many models serves well under 1 MiB).
const DefaultMaxBodyBytes = 8 << 20

// Scraper GETs exposition bodies with a size limit. Timeouts come from
// the caller's context.
type Scraper struct {
	Client   *http.Client
	MaxBytes int64
}

// NewScraper returns a Scraper whose client dials only what it is given,
// keeps connections for concurrent scrapes, and ignores proxy variables
// (pod IPs are never reached through a proxy).
func NewScraper(timeout time.Duration, maxBytes int64, maxConns int) *Scraper {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBodyBytes
	}
	tr := &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: timeout}).DialContext,
		MaxIdleConns:        maxConns,
		MaxIdleConnsPerHost: maxConns,
		IdleConnTimeout:     30 * time.Second,
		DisableCompression:  false,
	}
	return &Scraper{
		Client: &http.Client{
			Transport: tr,
			Timeout:   timeout,
			// A metrics endpoint that redirects elsewhere is not followed:
			// only the pod's own address is ever requested.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		MaxBytes: maxBytes,
	}
}

// ValidatePath checks a configured metrics path: absolute, no scheme, host
// or fragment; a query is allowed (llama.cpp router mode needs ?model=).
func ValidatePath(p string) error {
	if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") {
		return fmt.Errorf("metrics path %q must start with a single /", p)
	}
	u, err := url.Parse(p)
	if err != nil {
		return fmt.Errorf("metrics path %q: %w", p, err)
	}
	if u.Scheme != "" || u.Host != "" || u.User != nil || u.Fragment != "" {
		return fmt.Errorf("metrics path %q must be a path (no scheme, host or fragment)", p)
	}
	return nil
}

// URL builds http://ip:port/path. ip must be a valid address (the pod's or
// its node's, never a label or annotation) and path must pass ValidatePath.
func URL(ip netip.Addr, port int, path string) (string, error) {
	if !ip.IsValid() {
		return "", errors.New("no IP address")
	}
	if port <= 0 || port > 65535 {
		return "", fmt.Errorf("port %d out of range", port)
	}
	if err := ValidatePath(path); err != nil {
		return "", err
	}
	u, _ := url.Parse(path)
	u.Scheme = "http"
	u.Host = net.JoinHostPort(ip.Unmap().String(), strconv.Itoa(port))
	return u.String(), nil
}

// Fetch GETs url and parses the exposition, keeping only the families in
// want (nil: all). Errors name the URL and say whether it was the
// connection, the status, the size or the body.
func (s *Scraper) Fetch(ctx context.Context, target string, want expo.Wanted) (expo.Families, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return nil, fmt.Errorf("building request for %s: %w", target, err)
	}
	req.Header.Set("Accept", expo.AcceptHeader)
	resp, err := s.Client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scraping: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		return nil, fmt.Errorf("scraping %s: HTTP %d", target, resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, s.MaxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("scraping %s: reading body: %w", target, err)
	}
	if int64(len(body)) > s.MaxBytes {
		return nil, fmt.Errorf("scraping %s: body larger than %d bytes", target, s.MaxBytes)
	}
	fams, err := expo.ParseWanted(ctx, body, resp.Header.Get("Content-Type"), want)
	if err != nil {
		return nil, fmt.Errorf("scraping %s: %w", target, err)
	}
	return fams, nil
}
