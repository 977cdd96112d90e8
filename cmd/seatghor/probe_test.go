package main

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestProbe(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/readyz" {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()

	tests := []struct {
		name  string
		args  []string
		fails bool
		usage bool
	}{
		{"live", []string{srv.URL + "/livez"}, false, false},
		{"not ready", []string{srv.URL + "/readyz"}, true, false},
		{"nobody listening", []string{"http://127.0.0.1:1/livez"}, true, false},
		{"no URL", nil, true, true},
		{"two URLs", []string{srv.URL, srv.URL}, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := runProbe(context.Background(), tt.args)
			if !tt.fails {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			require.Equal(t, tt.usage, errors.Is(err, errUsage), "%v", err)
		})
	}
}
