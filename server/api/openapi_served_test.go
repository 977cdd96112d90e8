package api_test

import (
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/gen/openapi"
	"github.com/seatghor/seatghor/server/apptest"
)

// TestOpenAPIServed: the public listener serves the REST routes' OpenAPI
// description at GET /openapi.yaml, to anyone (no token).
func TestOpenAPIServed(t *testing.T) {
	env := apptest.New(t, apptest.Options{})
	res, err := env.HTTP.Get(env.URL + "/openapi.yaml")
	require.NoError(t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, "application/yaml", res.Header.Get("Content-Type"))
	require.Equal(t, openapi.YAML, body)
}
