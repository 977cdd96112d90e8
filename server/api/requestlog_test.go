package api_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"

	searchv1 "github.com/seatghor/seatghor/gen/seatghor/search/v1"
	"github.com/seatghor/seatghor/gen/seatghor/search/v1/searchv1connect"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/server/api"
)

// syncBuffer is a log sink the server's goroutines may write while the
// test reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// lines are the JSON log records written so far; each line must be JSON.
func (b *syncBuffer) lines(t *testing.T) []map[string]any {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(b.buf.Bytes()))
	for sc.Scan() {
		var rec map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &rec), "log line %q", sc.Text())
		out = append(out, rec)
	}
	return out
}

// linesOf are the records that carry request id id.
func (b *syncBuffer) linesOf(t *testing.T, id string) []map[string]any {
	var out []map[string]any
	for _, rec := range b.lines(t) {
		if rec["request_id"] == id {
			out = append(out, rec)
		}
	}
	return out
}

// accessLine waits for the access log line of request id and returns it
// with the request's other lines.
func accessLine(t *testing.T, logs *syncBuffer, id string) (access map[string]any, all []map[string]any) {
	t.Helper()
	require.Eventually(t, func() bool {
		for _, rec := range logs.linesOf(t, id) {
			if rec["msg"] == "request" {
				return true
			}
		}
		return false
	}, 10*time.Second, 5*time.Millisecond, "no access log line for %s", id)
	all = logs.linesOf(t, id)
	for _, rec := range all {
		if rec["msg"] == "request" {
			access = rec
		}
	}
	return access, all
}

// TestEveryRequestHasAnIDInItsResponseAndLogLines: a caller's sane
// X-Request-Id is kept, a missing or insane one is replaced by a new one;
// either way the response echoes it, every log line of the request
// carries it, and one access line at info says method, path, procedure,
// code, status and duration. The probes are not logged.
func TestEveryRequestHasAnIDInItsResponseAndLogLines(t *testing.T) {
	logs := &syncBuffer{}
	env := apptest.New(t, apptest.Options{Shards: 1,
		Log: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))})
	search := searchv1connect.NewTripSearchServiceClient(env.HTTP, env.URL)
	ctx := context.Background()

	call := func(sent string) string {
		req := connect.NewRequest(&searchv1.SearchTripsRequest{})
		if sent != "" {
			req.Header().Set(api.RequestIDHeader, sent)
		}
		// No trip index here: the call is refused, and the refusal is logged.
		_, err := search.SearchTrips(ctx, req)
		require.Equal(t, connect.CodeUnavailable, connect.CodeOf(err), "%v", err)
		var ce *connect.Error
		require.ErrorAs(t, err, &ce)
		return ce.Meta().Get(api.RequestIDHeader)
	}

	for _, tc := range []struct {
		name, sent string
		kept       bool
	}{
		{"sane id kept", "edge-7f3a.42:x_1", true},
		{"no id", "", false},
		{"insane id replaced", "bad id\"} {\"injected", false},
		{"too long replaced", strings.Repeat("a", 129), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := call(tc.sent)
			require.NotEmpty(t, id)
			if tc.kept {
				require.Equal(t, tc.sent, id)
			} else {
				require.NotEqual(t, tc.sent, id)
			}
			access, all := accessLine(t, logs, id)
			require.Equal(t, "INFO", access["level"])
			require.Equal(t, http.MethodPost, access["method"])
			require.Equal(t, searchv1connect.TripSearchServiceSearchTripsProcedure, access["path"])
			require.Equal(t, searchv1connect.TripSearchServiceSearchTripsProcedure, access["procedure"])
			require.Equal(t, "unavailable", access["code"])
			require.EqualValues(t, http.StatusServiceUnavailable, access["status"])
			require.Contains(t, access, "duration")
			// The refusal's own line carries the id too.
			require.Greater(t, len(all), 1, "only the access line carries %s: %v", id, logs.lines(t))
		})
	}

	t.Run("REST and gRPC", func(t *testing.T) {
		req, err := http.NewRequest(http.MethodGet, env.URL+"/v1/trips:search?query=x", nil)
		require.NoError(t, err)
		req.Header.Set(api.RequestIDHeader, "rest-1")
		resp, err := env.HTTP.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, "rest-1", resp.Header.Get(api.RequestIDHeader))
		access, _ := accessLine(t, logs, "rest-1")
		require.Equal(t, "/v1/trips:search", access["path"])
		require.Equal(t, searchv1connect.TripSearchServiceSearchTripsProcedure, access["procedure"])
		require.Equal(t, "unavailable", access["code"])

		grpc := searchv1connect.NewTripSearchServiceClient(env.H2C, env.URL, connect.WithGRPC())
		greq := connect.NewRequest(&searchv1.SearchTripsRequest{})
		greq.Header().Set(api.RequestIDHeader, "grpc-1")
		_, err = grpc.SearchTrips(ctx, greq)
		require.Equal(t, connect.CodeUnavailable, connect.CodeOf(err), "%v", err)
		access, _ = accessLine(t, logs, "grpc-1")
		require.EqualValues(t, http.StatusOK, access["status"]) // gRPC says its code in the trailers
		require.Equal(t, "unavailable", access["code"])
	})

	t.Run("two requests, two ids", func(t *testing.T) {
		require.NotEqual(t, call(""), call(""))
	})

	t.Run("probes are not logged", func(t *testing.T) {
		resp, err := env.HTTP.Get(env.URL + "/livez")
		require.NoError(t, err)
		resp.Body.Close()
		id := resp.Header.Get(api.RequestIDHeader)
		require.NotEmpty(t, id)
		// A later request's line is written after the probe's would be.
		access, _ := accessLine(t, logs, call(""))
		require.NotNil(t, access)
		require.Empty(t, logs.linesOf(t, id))
	})
}
