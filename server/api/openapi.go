package api

import (
	"bytes"
	"net/http"
	"time"

	"github.com/seatghor/seatghor/gen/openapi"
)

// openAPI serves the OpenAPI description of the REST routes
// (gen/openapi/openapi.yaml, generated from proto/ by scripts/generate.sh).
// It is the same for every caller and changes only with the binary: anyone
// may read it, caches may keep it a while, and If-Modified-Since is answered
// against the process's start.
func openAPI() http.Handler {
	started := time.Now()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/yaml")
		w.Header().Set("Cache-Control", "public, max-age=300")
		http.ServeContent(w, r, "openapi.yaml", started, bytes.NewReader(openapi.YAML))
	})
}
