// Package idp verifies the tokens of an OpenID Connect identity provider
// (decision 0086): the provider is found by discovery from its issuer URL,
// its signing keys are fetched from its JWKS and cached (fetched again when
// a token names a key id not in the cache, at most once per few seconds),
// only RS256 and ES256 are
// accepted, the audience must be ours, and a valid token is the caller
// idp:<name>:<sub> with the role user. Discovery is lazy and retried, so a
// provider that is briefly down when the server starts does not stop it
// (decision 0165).
package idp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/seatghor/seatghor/server/auth"
)

// Config is an identity provider's settings (SEATGHOR_OIDC_*).
type Config struct {
	// Name is the <name> in the callers' ids idp:<name>:<sub>; default
	// "oidc". Changing it changes every caller's id.
	Name string
	// Issuer is the provider's issuer URL, exactly as its tokens' iss says;
	// discovery reads <Issuer>/.well-known/openid-configuration. Empty: no
	// identity provider.
	Issuer string
	// ClientID and ClientSecret are our registration at the provider, used
	// by the site's sign-in; an empty secret makes a public client (PKCE
	// alone protects the code).
	ClientID, ClientSecret string
	// RedirectURL is the site's sign-in callback, as registered with the
	// provider (SEATGHOR_OIDC_REDIRECT_URL): https://<site>/auth/callback.
	RedirectURL string
	// Audience is what a token's aud must contain for the API to accept
	// it; default ClientID (the ID tokens of the site's sign-in).
	Audience string
	// HTTPClient reaches the provider; default a client with a 10 s timeout.
	HTTPClient *http.Client
	// Now is the clock of expiry checks; default time.Now.
	Now func() time.Time
	// RetryAfter is how long after a failed discovery the next attempt may
	// start; default 2 s. Until then callers are told the provider is
	// unavailable without another request to it.
	RetryAfter time.Duration
	// KeysRefreshAfter is the least time between two fetches of the
	// provider's JWKS for tokens with an unknown key id; default 5 s.
	// Within it such a token is answered unavailable (not judged).
	KeysRefreshAfter time.Duration
}

// Enabled tells whether an identity provider is configured.
func (c Config) Enabled() bool { return c.Issuer != "" }

// namePattern keeps the provider's name free of the id's separator.
var namePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,31}$`)

// DefaultName is the provider's name when none is configured.
const DefaultName = "oidc"

// signingAlgs are the only algorithms a provider's token may use
// (decision 0086): asymmetric, so nobody holding a shared secret (the
// client secret, say) can mint one.
var signingAlgs = []string{oidc.RS256, oidc.ES256}

// Provider verifies one identity provider's tokens. It is safe for
// concurrent use.
type Provider struct {
	cfg Config

	mu sync.Mutex
	// disc is set once discovery has succeeded; then never changes.
	disc *discovered
	// failedAt and failure are the last failed discovery.
	failedAt time.Time
	failure  error
}

// discovered is what discovery yields: the endpoints and the verifiers,
// which share one cached JWKS.
type discovered struct {
	provider *oidc.Provider
	// api checks the API's bearer tokens (aud: Audience), login the ID
	// tokens of the site's sign-in (aud: ClientID).
	api, login *oidc.IDTokenVerifier
}

// New checks cfg and returns its provider; it does not reach the provider.
func New(cfg Config) (*Provider, error) {
	if cfg.Name == "" {
		cfg.Name = DefaultName
	}
	if !namePattern.MatchString(cfg.Name) {
		return nil, fmt.Errorf("SEATGHOR_OIDC_NAME=%q: want 1 to 32 of a-z 0-9 _ -, starting with a letter or digit", cfg.Name)
	}
	u, err := url.Parse(cfg.Issuer)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("SEATGHOR_OIDC_ISSUER=%q: want the provider's issuer URL, https://…", cfg.Issuer)
	}
	if cfg.ClientID == "" {
		return nil, errors.New("SEATGHOR_OIDC_ISSUER needs SEATGHOR_OIDC_CLIENT_ID")
	}
	if cfg.Audience == "" {
		cfg.Audience = cfg.ClientID
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.RetryAfter <= 0 {
		cfg.RetryAfter = 2 * time.Second
	}
	if cfg.KeysRefreshAfter <= 0 {
		cfg.KeysRefreshAfter = 5 * time.Second
	}
	return &Provider{cfg: cfg}, nil
}

// Issuer is the provider's issuer URL: the iss its tokens carry.
func (p *Provider) Issuer() string { return p.cfg.Issuer }

// discover returns the discovered provider, discovering it first if no
// attempt has succeeded yet. Concurrent callers wait for one attempt; after
// a failure, callers within RetryAfter get auth.ErrVerifierUnavailable at
// once, so a provider that is down is not asked once per request.
func (p *Provider) discover(ctx context.Context) (*discovered, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.disc != nil {
		return p.disc, nil
	}
	if p.failure != nil && time.Since(p.failedAt) < p.cfg.RetryAfter {
		return nil, fmt.Errorf("%w: %v", auth.ErrVerifierUnavailable, p.failure)
	}
	prov, err := oidc.NewProvider(oidc.ClientContext(ctx, p.cfg.HTTPClient), p.cfg.Issuer)
	var meta struct {
		JWKS string `json:"jwks_uri"`
	}
	if err == nil {
		if err = prov.Claims(&meta); err == nil && meta.JWKS == "" {
			err = errors.New("the discovery document has no jwks_uri")
		}
	}
	if err != nil {
		if ctx.Err() == nil { // a caller that gave up says nothing of the provider
			p.failedAt, p.failure = time.Now(), err
		}
		return nil, fmt.Errorf("%w: discovery: %v", auth.ErrVerifierUnavailable, err)
	}
	keys := &keySet{url: meta.JWKS, client: p.cfg.HTTPClient, refreshEvery: p.cfg.KeysRefreshAfter}
	p.disc = &discovered{
		provider: prov,
		api:      oidc.NewVerifier(p.cfg.Issuer, keys, &oidc.Config{ClientID: p.cfg.Audience, SupportedSigningAlgs: signingAlgs, Now: p.cfg.Now}),
		login:    oidc.NewVerifier(p.cfg.Issuer, keys, &oidc.Config{ClientID: p.cfg.ClientID, SupportedSigningAlgs: signingAlgs, Now: p.cfg.Now}),
	}
	p.failure = nil
	return p.disc, nil
}

// Check reports whether the provider has been discovered, trying again if
// not: the readiness probe's check (a provider that is down degrades the
// process, it does not take it out of service: decision 0165).
func (p *Provider) Check(ctx context.Context) error {
	_, err := p.discover(ctx)
	return err
}

// Verify checks a bearer token of the provider (signature by a key of its
// JWKS, RS256 or ES256, issuer, audience, expiry) and returns the caller
// and when the token expires. A provider not yet discoverable is
// auth.ErrVerifierUnavailable (the token was not judged); a bad token is
// auth.ErrInvalidToken.
func (p *Provider) Verify(ctx context.Context, token string) (auth.Principal, time.Time, error) {
	d, err := p.discover(ctx)
	if err != nil {
		return auth.Principal{}, time.Time{}, err
	}
	t, err := verify(ctx, d.api, token)
	if err != nil {
		return auth.Principal{}, time.Time{}, err
	}
	return p.principal(t)
}

// keyErrKey carries where the key set leaves its error: go-oidc reports
// it as text, and whether the keys were unavailable (not judged) or the
// token is bad must survive.
type keyErrKey struct{}

// verify runs v, answering auth.ErrVerifierUnavailable when the key set
// could not judge the token and auth.ErrInvalidToken for any other fault.
func verify(ctx context.Context, v *oidc.IDTokenVerifier, token string) (*oidc.IDToken, error) {
	var keyErr error
	t, err := v.Verify(context.WithValue(ctx, keyErrKey{}, &keyErr), token)
	switch {
	case err == nil:
		return t, nil
	case errors.Is(keyErr, auth.ErrVerifierUnavailable):
		return nil, keyErr
	default:
		return nil, fmt.Errorf("%w: %v", auth.ErrInvalidToken, err)
	}
}

// principal is the caller a verified token names.
func (p *Provider) principal(t *oidc.IDToken) (auth.Principal, time.Time, error) {
	if t.Subject == "" {
		return auth.Principal{}, time.Time{}, fmt.Errorf("%w: no subject", auth.ErrInvalidToken)
	}
	// Decision 0086: a provider's token makes a user, whatever roles or
	// groups its claims list; staff roles are granted in our database.
	return auth.Principal{UserID: "idp:" + p.cfg.Name + ":" + t.Subject, Role: auth.RoleUser}, t.Expiry, nil
}

// Authenticate is Verify as an auth.Verifier.
func (p *Provider) Authenticate(ctx context.Context, token string) (auth.Principal, error) {
	pr, _, err := p.Verify(ctx, token)
	return pr, err
}

// RedirectURL is the site's sign-in callback registered with the provider.
func (p *Provider) RedirectURL() string { return p.cfg.RedirectURL }

// OAuth2 returns the OAuth 2 client of the site's sign-in, with the
// provider's endpoints.
func (p *Provider) OAuth2(ctx context.Context) (*oauth2.Config, error) {
	d, err := p.discover(ctx)
	if err != nil {
		return nil, err
	}
	ep := d.provider.Endpoint()
	if p.cfg.ClientSecret == "" {
		// A public client names itself in the form; no Basic auth to try.
		ep.AuthStyle = oauth2.AuthStyleInParams
	}
	return &oauth2.Config{
		ClientID: p.cfg.ClientID, ClientSecret: p.cfg.ClientSecret, RedirectURL: p.cfg.RedirectURL,
		Endpoint: ep, Scopes: []string{oidc.ScopeOpenID},
	}, nil
}

// HTTPContext returns ctx carrying the client that reaches the provider,
// for the oauth2 package's requests (the code exchange).
func (p *Provider) HTTPContext(ctx context.Context) context.Context {
	return context.WithValue(ctx, oauth2.HTTPClient, p.cfg.HTTPClient)
}

// VerifyIDToken checks an ID token the token endpoint returned to the
// site's sign-in: as Verify does, but its audience is our client id, and
// its nonce must be the one the sign-in sent.
func (p *Provider) VerifyIDToken(ctx context.Context, raw, nonce string) (auth.Principal, time.Time, error) {
	d, err := p.discover(ctx)
	if err != nil {
		return auth.Principal{}, time.Time{}, err
	}
	t, err := verify(ctx, d.login, raw)
	if err != nil {
		return auth.Principal{}, time.Time{}, err
	}
	if nonce == "" || t.Nonce != nonce {
		return auth.Principal{}, time.Time{}, fmt.Errorf("%w: the nonce is not the sign-in's", auth.ErrInvalidToken)
	}
	return p.principal(t)
}
