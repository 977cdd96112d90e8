// Package signin is the site's sign-in through the identity provider: the
// OAuth 2 authorization-code flow with PKCE, run by our server so the
// browser never sees the client secret or the PKCE verifier (decision
// 0166). GET /auth/login?return_to=<path>&site_state=<value> sends the
// browser to the provider; GET /auth/callback takes the provider's answer,
// exchanges the code, checks the ID token and its nonce, and sends the
// browser back to
// <return_to>#token=<token>&expires_at=<unix seconds>&site_state=<value>,
// or to <return_to>#auth_error=<reason> when the sign-in failed. The site
// takes the token only when site_state is the one-time value it kept
// before sending the browser here (decision 0288).
package signin

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"github.com/seatghor/seatghor/server/auth"
	"github.com/seatghor/seatghor/server/auth/idp"
	"github.com/seatghor/seatghor/server/keyset"
)

// The paths of the sign-in on the public port.
const (
	LoginPath    = "/auth/login"
	CallbackPath = "/auth/callback"
)

// The reasons of #auth_error=<reason>, what the site tells the buyer.
const (
	// ReasonAccessDenied: the buyer declined at the provider.
	ReasonAccessDenied = "access_denied"
	// ReasonProviderError: the provider answered with another error.
	ReasonProviderError = "provider_error"
	// ReasonBadState: the callback's state is not the one this browser's
	// sign-in started with (a forged or replayed callback, or a sign-in
	// older than StateTTL).
	ReasonBadState = "bad_state"
	// ReasonUnavailable: the provider could not be reached.
	ReasonUnavailable = "provider_unavailable"
	// ReasonExchangeFailed: the provider refused to exchange the code.
	ReasonExchangeFailed = "exchange_failed"
	// ReasonInvalidToken: the provider's ID token failed verification (or
	// its nonce is not ours), or no token it gave is one the API accepts.
	ReasonInvalidToken = "invalid_token"
)

// StateTTL is how long a sign-in may take at the provider.
const StateTTL = 10 * time.Minute

// Config is what the sign-in needs.
type Config struct {
	// Provider is the identity provider; its RedirectURL must be
	// CallbackPath on this site (an https one makes the state cookie
	// Secure).
	Provider *idp.Provider
	// Keys are the token keys; the state cookie's keys derive from them.
	Keys *keyset.Set
	// Now is the clock of the state's expiry; default time.Now.
	Now func() time.Time
	Log *slog.Logger
}

// Handler serves LoginPath and CallbackPath.
type Handler struct {
	cfg    Config
	seal   *sealer
	secure bool
	mux    *http.ServeMux
}

// New returns the sign-in's handler.
func New(cfg Config) (*Handler, error) {
	if cfg.Provider == nil || cfg.Keys == nil {
		return nil, errors.New("sign-in needs a provider and the token keys")
	}
	u, err := url.Parse(cfg.Provider.RedirectURL())
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.Path != CallbackPath {
		return nil, fmt.Errorf("SEATGHOR_OIDC_REDIRECT_URL=%q: want the absolute URL of %s on this site, e.g. https://tickets.example%s",
			cfg.Provider.RedirectURL(), CallbackPath, CallbackPath)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	s, err := newSealer(cfg.Keys)
	if err != nil {
		return nil, err
	}
	h := &Handler{cfg: cfg, seal: s, secure: u.Scheme == "https", mux: http.NewServeMux()}
	h.mux.HandleFunc("GET "+LoginPath, h.login)
	h.mux.HandleFunc("GET "+CallbackPath, h.callback)
	return h, nil
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Nothing of a sign-in may be cached or leak through a Referer.
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	h.mux.ServeHTTP(w, r)
}

// cookiePrefix starts the state cookies' names; the rest is the start of
// the state, so sign-ins in two tabs do not overwrite each other's.
const cookiePrefix = "seatghor_signin_"

func cookieName(state string) string { return cookiePrefix + state[:16] }

func (h *Handler) login(w http.ResponseWriter, r *http.Request) {
	returnTo, ok := localPath(r.URL.Query().Get("return_to"))
	if !ok {
		// Never a redirect to somewhere we do not own (an open redirect).
		http.Error(w, "return_to must be a path on this site, such as /tickets", http.StatusBadRequest)
		return
	}
	siteState := r.URL.Query().Get("site_state")
	if !siteStateRE.MatchString(siteState) {
		// Without it the site would not take the token: a sign-in it did
		// not start (decision 0288).
		http.Error(w, "site_state must be the site's one-time value (22 to 128 characters of base64url): start the sign-in from the site's sign-in page",
			http.StatusBadRequest)
		return
	}
	oc, err := h.cfg.Provider.OAuth2(r.Context())
	if err != nil {
		h.fail(w, r, returnTo, ReasonUnavailable, err)
		return
	}
	st := loginState{State: random(), Nonce: random(), Verifier: oauth2.GenerateVerifier(), ReturnTo: returnTo,
		SiteState: siteState, Expires: h.cfg.Now().Add(StateTTL).Unix()}
	name := cookieName(st.State)
	value, err := h.seal.seal(name, st)
	if err != nil {
		h.fail(w, r, returnTo, ReasonUnavailable, err)
		return
	}
	// SameSite=Lax: the cookie comes back on the provider's top-level
	// redirect to the callback, and on nothing another site posts.
	http.SetCookie(w, &http.Cookie{Name: name, Value: value, Path: CallbackPath, MaxAge: int(StateTTL.Seconds()),
		HttpOnly: true, Secure: h.secure, SameSite: http.SameSiteLaxMode})
	http.Redirect(w, r, oc.AuthCodeURL(st.State, oauth2.S256ChallengeOption(st.Verifier),
		oauth2.SetAuthURLParam("nonce", st.Nonce)), http.StatusFound)
}

func (h *Handler) callback(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	st, err := h.takeState(w, r, q.Get("state"))
	if err != nil {
		h.fail(w, r, "/", ReasonBadState, err) // no state: we do not know where the buyer was
		return
	}
	if e := q.Get("error"); e != "" {
		reason := ReasonProviderError
		if e == ReasonAccessDenied {
			reason = ReasonAccessDenied
		}
		h.fail(w, r, st.ReturnTo, reason, fmt.Errorf("provider: %s: %s", e, q.Get("error_description")))
		return
	}
	token, expires, reason, err := h.exchange(r.Context(), q.Get("code"), st)
	if err != nil {
		h.fail(w, r, st.ReturnTo, reason, err)
		return
	}
	// site_state comes from the sealed cookie this browser brought, never
	// from the callback's query: the server gives back only what this
	// browser itself sent to LoginPath (decision 0288).
	frag := url.Values{"token": {token}, "expires_at": {strconv.FormatInt(expires.Unix(), 10)}, "site_state": {st.SiteState}}
	http.Redirect(w, r, st.ReturnTo+"#"+frag.Encode(), http.StatusFound)
}

// takeState opens the state cookie the callback's state names, checks
// the state is that one, and deletes the cookie: a state is used once.
func (h *Handler) takeState(w http.ResponseWriter, r *http.Request, state string) (loginState, error) {
	if len(state) < 16 {
		return loginState{}, errBadState
	}
	name := cookieName(state)
	c, err := r.Cookie(name)
	if err != nil {
		return loginState{}, fmt.Errorf("%w: no cookie", errBadState)
	}
	http.SetCookie(w, &http.Cookie{Name: name, Path: CallbackPath, MaxAge: -1, HttpOnly: true, Secure: h.secure,
		SameSite: http.SameSiteLaxMode})
	st, err := h.seal.open(name, c.Value, h.cfg.Now())
	if err != nil {
		return loginState{}, err
	}
	if subtle.ConstantTimeCompare([]byte(st.State), []byte(state)) != 1 {
		return loginState{}, fmt.Errorf("%w: another state", errBadState)
	}
	return st, nil
}

// exchange trades the code (with the PKCE verifier) for the provider's
// tokens, checks the ID token and its nonce, and returns the token the
// API accepts: the ID token, or the access token when the API's audience
// is not our client id (decision 0166). On failure it says the reason.
func (h *Handler) exchange(ctx context.Context, code string, st loginState) (string, time.Time, string, error) {
	if code == "" {
		return "", time.Time{}, ReasonProviderError, errors.New("the callback has no code")
	}
	p := h.cfg.Provider
	oc, err := p.OAuth2(ctx)
	if err != nil {
		return "", time.Time{}, ReasonUnavailable, err
	}
	tok, err := oc.Exchange(p.HTTPContext(ctx), code, oauth2.VerifierOption(st.Verifier))
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) {
			return "", time.Time{}, ReasonExchangeFailed, err
		}
		return "", time.Time{}, ReasonUnavailable, err
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return "", time.Time{}, ReasonInvalidToken, errors.New("the token response has no id_token")
	}
	if _, _, err := p.VerifyIDToken(ctx, raw, st.Nonce); err != nil {
		return "", time.Time{}, reasonOf(err), err
	}
	_, exp, err := p.Verify(ctx, raw)
	if err == nil {
		return raw, exp, "", nil
	}
	if errors.Is(err, auth.ErrInvalidToken) && tok.AccessToken != "" {
		_, exp, aerr := p.Verify(ctx, tok.AccessToken)
		if aerr == nil {
			return tok.AccessToken, exp, "", nil
		}
	}
	return "", time.Time{}, reasonOf(err), fmt.Errorf("no token of the provider's is one the API accepts: %w", err)
}

func reasonOf(err error) string {
	if errors.Is(err, auth.ErrVerifierUnavailable) {
		return ReasonUnavailable
	}
	return ReasonInvalidToken
}

// fail sends the browser to returnTo#auth_error=<reason> and logs why.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, returnTo, reason string, err error) {
	h.cfg.Log.LogAttrs(r.Context(), slog.LevelWarn, "sign-in failed", slog.String("reason", reason), slog.Any("err", err))
	http.Redirect(w, r, returnTo+"#"+url.Values{"auth_error": {reason}}.Encode(), http.StatusFound)
}

// localPath accepts return_to when it is a path on this site ("" is "/"):
// absolute, not scheme- or host-relative ("//evil.example",
// "/\evil.example", which browsers read as another host), no control
// characters, no fragment of its own (the sign-in adds one).
func localPath(s string) (string, bool) {
	if s == "" {
		return "/", true
	}
	if len(s) > 2048 || !strings.HasPrefix(s, "/") || strings.HasPrefix(s, "//") || strings.ContainsAny(s, `\#`) {
		return "", false
	}
	for _, c := range s {
		if c < 0x20 || c == 0x7f {
			return "", false
		}
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil {
		return "", false
	}
	return s, true
}

// siteStateRE is the site's one-time value: at least 128 bits in
// base64url, bounded so the cookie stays small.
var siteStateRE = regexp.MustCompile(`^[A-Za-z0-9_-]{22,128}$`)

// random returns 32 random bytes, base64url: a state or a nonce.
func random() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24)
	return base64.RawURLEncoding.EncodeToString(b)
}
