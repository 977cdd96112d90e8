package api_test

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
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

// TestOpenAPIRequiredFieldsAreTheServers: the fields the description says
// a request cannot leave out are those the server refuses an empty request
// for. Every REST route is called as an admin with its path parameters set
// (to 1), no query and an empty JSON body: the fields the 400's BadRequest
// names among the described query parameters and body properties are
// exactly the required ones (none when the answer is something else).
func TestOpenAPIRequiredFieldsAreTheServers(t *testing.T) {
	env := apptest.New(t, apptest.Options{})
	token := env.Token(t, "openapi-admin", auth.RoleAdmin)
	doc, err := openapi3.NewLoader().LoadFromData(openapi.YAML)
	require.NoError(t, err)
	withRequired := 0
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			described := map[string]bool{}
			var required, fromPath []string
			for _, p := range op.Parameters {
				switch p.Value.In {
				case "path":
					path = strings.ReplaceAll(path, "{"+p.Value.Name+"}", "1")
					fromPath = append(fromPath, p.Value.Name)
				case "query":
					described[topField(p.Value.Name)] = true
					if p.Value.Required {
						required = append(required, p.Value.Name)
					}
				}
			}
			var body io.Reader
			if op.RequestBody != nil {
				schema := op.RequestBody.Value.Content.Get("application/json").Schema.Value
				for name := range schema.Properties {
					described[name] = !slices.Contains(fromPath, name)
				}
				required = append(required, schema.Required...)
				body = strings.NewReader("{}")
			}
			req, err := http.NewRequest(method, env.URL+path, body)
			require.NoError(t, err)
			req.Header.Set("Authorization", "Bearer "+token)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Idempotency-Key", "openapi-required-"+op.OperationID)
			res, err := env.HTTP.Do(req)
			require.NoError(t, err)
			answer, err := io.ReadAll(res.Body)
			res.Body.Close()
			require.NoError(t, err)
			var status struct {
				Details []struct {
					FieldViolations []struct {
						Field string `json:"field"`
					} `json:"field_violations"`
				} `json:"details"`
			}
			var named []string
			if res.StatusCode == http.StatusBadRequest {
				require.NoError(t, json.Unmarshal(answer, &status), "%s", answer)
				for _, d := range status.Details {
					for _, v := range d.FieldViolations {
						if f := topField(v.Field); described[f] && !slices.Contains(named, f) {
							named = append(named, f)
						}
					}
				}
			}
			require.ElementsMatch(t, required, named, "%s %s answered %d %s", method, path, res.StatusCode, answer)
			if len(required) > 0 {
				withRequired++
			}
		}
	}
	require.Positive(t, withRequired)
}

// topField is the request field a field path starts with: "seats" of
// "seats[0]", "amount" of "amount.amount_minor".
func topField(path string) string {
	if i := strings.IndexAny(path, ".["); i >= 0 {
		return path[:i]
	}
	return path
}
