package tripindex

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/meilisearch/meilisearch-go"

	"github.com/seatghor/seatghor/server/place"
	"github.com/seatghor/seatghor/server/search"
)

// MeiliConfig configures the Meilisearch adapter.
type MeiliConfig struct {
	// URL is the server's base URL (SEATGHOR_MEILI_URL).
	URL string
	// Key is the API key, or the master key (SEATGHOR_MEILI_KEY).
	Key string
	// Index is the index uid; default "trips".
	Index string
	// SearchTimeout bounds one search; default 1s, so a hung server turns
	// into a quick UNAVAILABLE.
	SearchTimeout time.Duration
	// WriteTimeout bounds a write including the wait for its task; default
	// 30s.
	WriteTimeout time.Duration
	// HTTPClient talks to the server; nil takes NewHTTPClient().
	HTTPClient *http.Client
}

// Meili is the production trip index: an index on a Meilisearch server.
type Meili struct {
	cfg MeiliConfig
	sm  meilisearch.ServiceManager
	idx meilisearch.IndexManager
	// mu serialises setup; ready is set once the index and its settings
	// exist, so a server that was down at start is set up when it returns.
	// creating and setting are the setup's tasks once submitted: a setup
	// cut short by its caller's deadline (a search's second) waits for the
	// same tasks next time instead of queueing new ones, so a slow server
	// after a restart is not flooded with index creations and settings
	// updates, each of which re-indexes every trip (found by `seatghor
	// chaos`, decision 0413).
	mu                sync.Mutex
	ready             bool
	creating, setting *meilisearch.TaskInfo
	// skipUntil (Unix nanoseconds): after a search found the server
	// unreachable, searches answer search.ErrUnavailable at once for a second
	// instead of each waiting for a timeout.
	skipUntil atomic.Int64
}

var _ TripIndex = (*Meili)(nil)

// NewMeili returns the adapter; it does not contact the server (the
// platform starts while Meilisearch is down, R-8.6).
func NewMeili(cfg MeiliConfig) (*Meili, error) {
	if cfg.URL == "" {
		return nil, errors.New("meilisearch: no URL")
	}
	if cfg.Index == "" {
		cfg.Index = "trips"
	}
	if cfg.SearchTimeout <= 0 {
		cfg.SearchTimeout = time.Second
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = 30 * time.Second
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = NewHTTPClient()
	}
	// No retries inside the client: the projector retries writes with its
	// own backoff, and a search must fail fast rather than sleep 1+2+3 s.
	sm := meilisearch.New(strings.TrimRight(cfg.URL, "/"), meilisearch.WithAPIKey(cfg.Key),
		meilisearch.WithCustomClient(cfg.HTTPClient), meilisearch.DisableRetries())
	return &Meili{cfg: cfg, sm: sm, idx: sm.Index(cfg.Index)}, nil
}

// NewHTTPClient returns the HTTP client for Meilisearch. It does not offer
// gzip (DisableCompression): Meilisearch then streams a compressed answer
// as a header segment and a body segment on a socket without TCP_NODELAY,
// Nagle holds the body until the header is acknowledged, and a keep-alive
// client delays that ACK by ~40 ms, so every larger search took ~44 ms
// instead of ~1 ms (decision 0050; BenchmarkMeiliClient measures it).
func NewHTTPClient() *http.Client {
	return &http.Client{Transport: &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   100,
		IdleConnTimeout:       90 * time.Second,
		ResponseHeaderTimeout: 30 * time.Second,
		DisableCompression:    true,
	}}
}

// The index settings: text in these attributes (in this order of weight),
// numbers and city keys for filters, and "sort" as the first ranking rule so
// that a requested sort is exhaustive (cheapest first means cheapest first,
// not cheapest among the best text matches), as in the embedded index.
var meiliSettings = meilisearch.Settings{
	RankingRules:         []string{"sort", "words", "typo", "proximity", "attribute", "exactness"},
	SearchableAttributes: []string{"title", "origin", "destination", "venue", "operator", "aliases"},
	FilterableAttributes: []string{"kind", "starts_at", "local_day", "lowest_price_minor", "seats_available", "origin_key",
		"destination_key", "pairs", "via_from", "via_to", "show_id"},
	SortableAttributes: []string{"starts_at", "lowest_price_minor", "show_id", "id"},
}

// meiliSynonyms are the gazetteer's spellings as one-way synonyms of each
// place's token, so that a query reaching Meilisearch unnormalised finds
// the place too (docs/decisions/0110).
func meiliSynonyms() map[string][]string {
	out := map[string][]string{}
	for _, p := range place.Default().Places() {
		for _, s := range append([]string{p.Name, p.Bengali}, p.Aliases...) {
			// Meilisearch may split "Cox's" at the apostrophe: both forms.
			for _, f := range []string{place.Fold(s), place.Fold(apostrophes.Replace(s))} {
				if f != "" && f != p.Token() {
					out[f] = []string{p.Token()}
				}
			}
		}
	}
	return out
}

var apostrophes = strings.NewReplacer("'", " ", "’", " ")

// ensure creates the index and applies its settings once.
func (m *Meili) ensure(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ready {
		return nil
	}
	if m.creating == nil {
		task, err := m.sm.CreateIndex(ctx, &meilisearch.IndexConfig{Uid: m.cfg.Index, PrimaryKey: "id"})
		if err != nil {
			return classify("create index", err)
		}
		m.creating = task
	}
	if err := m.wait(ctx, m.creating, meilisearch.APIErrCodeIndexAlreadyExists); err != nil {
		m.forget(&m.creating, err)
		return fmt.Errorf("create index: %w", err)
	}
	if m.setting == nil {
		settings := meiliSettings
		settings.Synonyms = meiliSynonyms()
		task, err := m.idx.UpdateSettings(ctx, &settings)
		if err != nil {
			return classify("index settings", err)
		}
		m.setting = task
	}
	if err := m.wait(ctx, m.setting); err != nil {
		m.forget(&m.setting, err)
		return fmt.Errorf("index settings: %w", err)
	}
	m.ready, m.creating, m.setting = true, nil, nil
	return nil
}

// forget drops a submitted setup task after waiting for it failed, unless
// the wait was only cut short (the server unreachable, or the caller's
// deadline): a task that ended badly, or that the server does not know,
// is submitted again next time.
func (m *Meili) forget(task **meilisearch.TaskInfo, err error) {
	if !errors.Is(err, search.ErrUnavailable) {
		*task = nil
	}
}

// wait waits for a task to end; a failure whose code is in ok is success.
func (m *Meili) wait(ctx context.Context, info *meilisearch.TaskInfo, ok ...meilisearch.APIErrCode) error {
	task, err := m.sm.WaitForTask(ctx, info.TaskUID, 10*time.Millisecond)
	if err != nil {
		return classify("wait for task", err)
	}
	if task.Status == meilisearch.TaskStatusFailed {
		for _, c := range ok {
			if task.Error.Code == c {
				return nil
			}
		}
		return fmt.Errorf("meilisearch task %d (%s) failed: %s: %s", task.UID, task.Type, task.Error.Code, task.Error.Message)
	}
	return nil
}

// Put implements TripIndex: the documents replace whole ones, and Put
// returns once Meilisearch has indexed them, so a failed task is retried by
// the projector and the index's queue cannot run away from the outbox.
func (m *Meili) Put(ctx context.Context, trips []search.Trip) error {
	if len(trips) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, m.cfg.WriteTimeout)
	defer cancel()
	if err := m.ensure(ctx); err != nil {
		return err
	}
	// A trip's stops and fares never change once it is published (a
	// withdrawn trip is deleted whole), so its documents replace their
	// like and leave none behind.
	docs := make([]document, 0, len(trips))
	for _, t := range trips {
		docs = append(docs, toDocuments(t)...)
	}
	task, err := m.idx.AddDocuments(ctx, docs, &meilisearch.DocumentOptions{PrimaryKey: new("id")})
	if err != nil {
		return m.classify("add trips", err)
	}
	if err := m.wait(ctx, task); err != nil {
		return fmt.Errorf("add %d trips: %w", len(docs), err)
	}
	return nil
}

// Search implements TripIndex.
func (m *Meili) Search(ctx context.Context, q search.Query) (search.Result, error) {
	return run(ctx, q, m.find)
}

func (m *Meili) find(ctx context.Context, q request) (search.Result, error) {
	if time.Now().UnixNano() < m.skipUntil.Load() {
		return search.Result{}, fmt.Errorf("%w: meilisearch failed less than a second ago", search.ErrUnavailable)
	}
	ctx, cancel := context.WithTimeout(ctx, m.cfg.SearchTimeout)
	defer cancel()
	res, err := m.search(ctx, q)
	var me *meilisearch.Error
	if errors.As(err, &me) && me.APIError.Code == meilisearch.APIErrCodeIndexNotFound {
		res, err = m.search(ctx, q) // created again, empty: the projector refills it after a rebuild
	}
	if errors.Is(err, search.ErrUnavailable) && ctx.Err() != context.Canceled {
		m.skipUntil.Store(time.Now().Add(time.Second).UnixNano())
	}
	return res, err
}

func (m *Meili) search(ctx context.Context, q request) (search.Result, error) {
	if err := m.ensure(ctx); err != nil {
		return search.Result{}, err
	}
	req := &meilisearch.SearchRequest{
		Offset: int64(q.Offset), Limit: int64(q.PageSize()), MatchingStrategy: meilisearch.All,
		Filter: meiliFilter(q),
	}
	switch {
	case q.Sort == search.SortPrice:
		req.Sort = []string{"lowest_price_minor:asc", "starts_at:asc", "show_id:asc", "id:asc"}
	case q.Sort == search.SortRelevance && q.text != "" && !q.byTime:
		// Relevance: no sort, so the text ranking rules decide.
	default:
		req.Sort = []string{"starts_at:asc", "show_id:asc", "id:asc"}
	}
	resp, err := m.idx.Search(ctx, q.text, req)
	if err != nil {
		return search.Result{}, m.classify("search trips", err)
	}
	var docs []document
	if err := resp.Hits.DecodeInto(&docs); err != nil {
		return search.Result{}, fmt.Errorf("search trips: decode hits: %w", err)
	}
	out := search.Result{EstimatedTotal: resp.EstimatedTotalHits, Trips: make([]search.Trip, 0, len(docs))}
	for _, d := range docs {
		out.Trips = append(out.Trips, d.trip())
	}
	return out, nil
}

// meiliFilter is q's filters in Meilisearch's filter syntax; nil when none.
func meiliFilter(q request) any {
	var f []string
	if q.originKey != "" {
		f = append(f, "origin_key = "+quote(q.originKey))
	}
	if q.destinationKey != "" {
		f = append(f, "destination_key = "+quote(q.destinationKey))
	}
	if q.notRoute != nil {
		f = append(f, "NOT pairs = "+quote(q.notRoute[0]+">"+q.notRoute[1]))
	}
	// A journey from or to an inner stop answers only a search naming
	// that stop (decision 0364); "!= true" keeps a document without the
	// flag.
	if fromFirst, toLast := q.wholeOnly(); fromFirst || toLast {
		if fromFirst {
			f = append(f, "via_from != true")
		}
		if toLast {
			f = append(f, "via_to != true")
		}
	}
	if q.Kind != 0 {
		f = append(f, "kind = "+strconv.Itoa(int(q.Kind)))
	}
	if !q.StartsAfter.IsZero() {
		f = append(f, "starts_at >= "+strconv.FormatInt(q.StartsAfter.UnixMilli(), 10))
	}
	if !q.StartsBefore.IsZero() {
		f = append(f, "starts_at < "+strconv.FormatInt(q.StartsBefore.UnixMilli(), 10))
	}
	if q.Day != 0 {
		f = append(f, "local_day = "+strconv.Itoa(q.Day))
	}
	if q.MinPriceMinor != nil {
		f = append(f, "lowest_price_minor >= "+strconv.FormatInt(*q.MinPriceMinor, 10))
	}
	if q.MaxPriceMinor != nil {
		f = append(f, "lowest_price_minor <= "+strconv.FormatInt(*q.MaxPriceMinor, 10))
	}
	if q.MinSeatsAvailable > 0 {
		f = append(f, "seats_available >= "+strconv.Itoa(q.MinSeatsAvailable))
	}
	if len(f) == 0 {
		return nil
	}
	return strings.Join(f, " AND ")
}

// quote makes s a filter string literal.
func quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// Delete implements TripIndex: the documents of the shows go, found by
// their show_id.
func (m *Meili) Delete(ctx context.Context, shows []int64) error {
	if len(shows) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, m.cfg.WriteTimeout)
	defer cancel()
	if err := m.ensure(ctx); err != nil {
		return err
	}
	ids := make([]string, len(shows))
	for i, id := range shows {
		ids[i] = strconv.FormatInt(id, 10)
	}
	task, err := m.idx.DeleteDocumentsByFilter(ctx, "show_id IN ["+strings.Join(ids, ", ")+"]", nil)
	if err != nil {
		return m.classify("delete trips", err)
	}
	if err := m.wait(ctx, task); err != nil {
		return fmt.Errorf("delete %d trips: %w", len(shows), err)
	}
	return nil
}

// Reset implements TripIndex: every document goes; the settings stay.
func (m *Meili) Reset(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, m.cfg.WriteTimeout)
	defer cancel()
	if err := m.ensure(ctx); err != nil {
		return err
	}
	task, err := m.idx.DeleteAllDocuments(ctx, nil)
	if err != nil {
		return m.classify("delete trips", err)
	}
	return m.wait(ctx, task)
}

// Close implements TripIndex.
func (m *Meili) Close() error {
	m.cfg.HTTPClient.CloseIdleConnections()
	return nil
}

// classify is the package's classify, and notices an index deleted behind
// the adapter's back: the next call creates it again with its settings.
func (m *Meili) classify(op string, err error) error {
	var me *meilisearch.Error
	if errors.As(err, &me) && me.APIError.Code == meilisearch.APIErrCodeIndexNotFound {
		m.mu.Lock()
		m.ready, m.creating, m.setting = false, nil, nil
		m.mu.Unlock()
	}
	return classify(op, err)
}

// classify marks the errors of an unreachable or failing server as
// search.ErrUnavailable; the rest (a bad request) are bugs and stay as they are.
func classify(op string, err error) error {
	var me *meilisearch.Error
	if errors.As(err, &me) {
		switch {
		case me.ErrCode == meilisearch.TimeoutError, me.ErrCode == meilisearch.CommunicationError,
			me.ErrCode == meilisearch.MaxRetriesExceeded, me.StatusCode >= 500, me.StatusCode == http.StatusTooManyRequests:
			return fmt.Errorf("%s: %w: %v", op, search.ErrUnavailable, err)
		}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s: %w: %v", op, search.ErrUnavailable, err)
	}
	return fmt.Errorf("%s: %w", op, err)
}
