// Package site serves the buyer's site and the gate page: the TypeScript
// app built into clients/web/dist (committed and embedded by clients/web, so
// the binary needs no Node.js), the sign-in configuration the app reads at
// start, and in dev the dev sign-in that mints tokens (decision 0160).
//
// The site owns a few top-level paths (Routes); everything else goes to
// the API handler it wraps, so /v1/, the Connect paths /seatghor.*, the
// webhooks, /livez and /readyz are untouched.
package site

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"regexp"
	"strings"
	"time"

	"github.com/seatghor/seatghor/clients/web"
	"github.com/seatghor/seatghor/server/auth"
)

// Options says which sign-ins the site offers.
type Options struct {
	// DevSignIn mounts POST /auth/dev-token: anyone picks a name and a
	// role and gets a token. Only `seatghor dev` sets it.
	DevSignIn bool
	// OIDCSignIn makes the site's "Sign in" go to
	// /auth/login?return_to=…&site_state=<the tab's one-time value>, served
	// by the OIDC handler (not this package); it redirects back to
	// <return_to>#token=<JWT>&expires_at=<unix seconds>&site_state=<value>
	// (decision 0288).
	OIDCSignIn bool
	// TestPayments offers the sandbox gateway's test tokens (tok_success…)
	// beside the approval page: dev only.
	TestPayments bool
	// PhoneSignIn offers the sign-in by SMS code and guest checkout
	// (decisions 0436, 0437): where the API sends SMS.
	PhoneSignIn bool
	// Tokens mints the dev tokens; required with DevSignIn.
	Tokens *auth.Tokens
	// DevTokenTTL is how long a dev token lasts; default 12 hours.
	DevTokenTTL time.Duration
}

// Routes are the site's pages: every one answers with index.html and the
// app routes in the browser (history API).
var Routes = []string{"/{$}", "/search", "/show/", "/wait/", "/order/", "/t/", "/tickets", "/signin", "/gate", "/manifest/", "/find", "/counter", "/console", "/console/"}

// asset is one built file, ready to serve.
type asset struct {
	body, gz    []byte
	contentType string
	etag        string
}

// Wrap returns a handler that serves the site's paths and passes every
// other request to api.
func Wrap(api http.Handler, opts Options) (http.Handler, error) {
	if opts.DevSignIn && opts.Tokens == nil {
		return nil, errors.New("site: DevSignIn needs Tokens")
	}
	if opts.DevTokenTTL <= 0 {
		opts.DevTokenTTL = 12 * time.Hour
	}
	assets, err := loadAssets()
	if err != nil {
		return nil, err
	}
	index, ok := assets["index.html"]
	if !ok {
		return nil, errors.New("site: dist/index.html is missing (run make web)")
	}
	mux := http.NewServeMux()
	mux.Handle("/", api)
	page := func(w http.ResponseWriter, r *http.Request) { serveAsset(w, r, index) }
	for _, p := range Routes {
		mux.HandleFunc("GET "+p, page)
	}
	for _, dir := range []string{"assets", "icons"} {
		mux.HandleFunc("GET /"+dir+"/{file}", func(w http.ResponseWriter, r *http.Request) {
			a, ok := assets[dir+"/"+r.PathValue("file")]
			if !ok {
				http.NotFound(w, r)
				return
			}
			serveAsset(w, r, a)
		})
	}
	// The web app's manifest and its service worker (decision 0397), at
	// the top so that the worker's scope is the whole site. The worker is
	// revalidated like every asset (no-cache; browsers also check it at
	// least daily whatever it says), so a deploy reaches phones at their
	// next visit.
	for _, name := range []string{"manifest.webmanifest", "sw.js"} {
		a, ok := assets[name]
		if !ok {
			return nil, fmt.Errorf("site: dist/%s is missing (run make web)", name)
		}
		mux.HandleFunc("GET /"+name, func(w http.ResponseWriter, r *http.Request) { serveAsset(w, r, a) })
	}
	cfg, err := json.Marshal(map[string]bool{"devSignIn": opts.DevSignIn, "oidcSignIn": opts.OIDCSignIn,
		"testPayments": opts.TestPayments, "phoneSignIn": opts.PhoneSignIn})
	if err != nil {
		return nil, err
	}
	mux.HandleFunc("GET /auth/config.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-cache")
		_, _ = w.Write(cfg)
	})
	if opts.DevSignIn {
		mux.Handle("POST /auth/dev-token", devToken{opts.Tokens, opts.DevTokenTTL})
	}
	return mux, nil
}

// loadAssets reads dist/ once and gzips every file, so a request costs no
// compression.
func loadAssets() (map[string]asset, error) {
	out := map[string]asset{}
	dist, err := web.Dist()
	if err != nil {
		return nil, fmt.Errorf("site: embedded assets: %w", err)
	}
	err = fs.WalkDir(dist, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := fs.ReadFile(dist, p)
		if err != nil {
			return err
		}
		var buf bytes.Buffer
		zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		if err != nil {
			return err
		}
		if _, err := zw.Write(body); err != nil {
			return err
		}
		if err := zw.Close(); err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		ct := mime.TypeByExtension(path.Ext(p))
		// Not in Go's built-in table; the system's may lack them too.
		switch {
		case ct != "":
		case path.Ext(p) == ".woff2":
			ct = "font/woff2"
		case path.Ext(p) == ".webmanifest":
			ct = "application/manifest+json"
		}
		if ct == "" {
			ct = "application/octet-stream"
		}
		out[p] = asset{body: body, gz: buf.Bytes(), contentType: ct,
			etag: `"` + hex.EncodeToString(sum[:12]) + `"`}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("site: read embedded assets: %w", err)
	}
	return out, nil
}

// serveAsset answers with a (the gzip form when the browser takes it); the
// asset names carry no hash, so browsers revalidate by ETag every time.
func serveAsset(w http.ResponseWriter, r *http.Request, a asset) {
	h := w.Header()
	h.Set("Content-Type", a.contentType)
	h.Set("Cache-Control", "no-cache")
	h.Set("ETag", a.etag)
	h.Set("Vary", "Accept-Encoding")
	h.Set("X-Content-Type-Options", "nosniff")
	if match := r.Header.Get("If-None-Match"); match != "" && strings.Contains(match, a.etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	body := a.body
	if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
		h.Set("Content-Encoding", "gzip")
		body = a.gz
	}
	h.Set("Content-Length", fmt.Sprint(len(body)))
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

// devToken mints a token for a name and a role picked on the dev sign-in
// page: dev only, where anyone may be anyone.
type devToken struct {
	tokens *auth.Tokens
	ttl    time.Duration
}

// devUserID is what a dev name becomes: a user id like the demo's
// ("rumana", "demo-gate").
var devUserID = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)

func (d devToken) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Name string `json:"name"`
		Role string `json:"role"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4096)).Decode(&req); err != nil {
		jsonError(w, http.StatusBadRequest, "the body must be JSON: {\"name\": …, \"role\": …}")
		return
	}
	user := strings.ToLower(strings.TrimSpace(req.Name))
	if !devUserID.MatchString(user) {
		jsonError(w, http.StatusBadRequest, "name: 1 to 64 of a-z, 0-9, '.', '_', '-', starting with a letter or digit")
		return
	}
	if req.Role == "" {
		req.Role = string(auth.RoleUser)
	}
	role, err := auth.ParseRole(req.Role)
	if err != nil || role == auth.RolePartner {
		jsonError(w, http.StatusBadRequest, "role: user, operator or admin")
		return
	}
	tok, err := d.tokens.Mint(user, role, d.ttl)
	if err != nil {
		jsonError(w, http.StatusInternalServerError, "could not mint a token")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(map[string]string{"token": tok, "userId": user})
}

func jsonError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
}
