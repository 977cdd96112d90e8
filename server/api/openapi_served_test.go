package api_test

import (
	"io"
	"net/http"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/gen/openapi"
	"github.com/seatghor/seatghor/internal/testkit/apptest"
	"github.com/seatghor/seatghor/server/auth"
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

// TestCatalogREST: the catalog's reads on REST (GET /v1/shows,
// GET /v1/shows/{show_id}), with the proto field names.
func TestCatalogREST(t *testing.T) {
	env := apptest.New(t, apptest.Options{})
	show := createShow(t, env, seatedShow("REST catalog", 2, 4))
	get := func(path string) string {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, env.URL+path, nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+env.Token(t, "rest-reader", auth.RoleUser))
		res, err := env.HTTP.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		body, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, res.StatusCode, "%s", body)
		return string(body)
	}
	id := strconv.FormatInt(show.GetShowId(), 10)
	one := get("/v1/shows/" + id)
	require.Contains(t, one, `"show_id":"`+id+`"`)
	require.Contains(t, one, `"title":"REST catalog"`)
	require.Contains(t, get("/v1/shows?page_size=10&kind=SHOW_KIND_CONCERT"), `"show_id":"`+id+`"`)
}
