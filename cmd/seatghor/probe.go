package main

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

// runProbe asks one URL (a process's /livez or /readyz) and fails unless it
// answers 2xx within 3 seconds: the health check of images that have no
// shell or curl (deploy/compose.yaml).
func runProbe(ctx context.Context, args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("%w: probe needs one URL, e.g. seatghor probe http://127.0.0.1:9090/readyz", errUsage)
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, args[0], nil)
	if err != nil {
		return fmt.Errorf("%w: probe: %v", errUsage, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("probe %s: %w", args[0], err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("probe %s: %s", args[0], resp.Status)
	}
	return nil
}
