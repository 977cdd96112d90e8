package tripindex

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/keyword"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/standard"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search/query"

	"github.com/seatghor/seatghor/server/search"
)

// embeddedDir names the index directory; a new name (a changed mapping)
// starts an empty index, which OpenEmbedded reports as created so the
// caller replays the outbox into it.
const embeddedDir = "trips-v3"

// Embedded is the dev-mode trip index: bleve with the scorch index on local
// disk (NewMemOnly is the old upsidedown index, about 30× slower). It lives
// in one process: the API and the projector of `seatghor dev` share it.
type Embedded struct {
	path string
	// mu guards idx: Reset swaps it while searches hold the read lock.
	mu  sync.RWMutex
	idx bleve.Index
}

var _ TripIndex = (*Embedded)(nil)

// OpenEmbedded opens the index under dir, creating it if needed; created
// tells that it started empty.
func OpenEmbedded(dir string) (e *Embedded, created bool, err error) {
	path := filepath.Join(dir, embeddedDir)
	e = &Embedded{path: path}
	if _, err := os.Stat(path); err == nil {
		// The root file is locked by the process that has it open; wait
		// for it briefly rather than forever (bolt's default).
		e.idx, err = bleve.OpenUsing(path, map[string]any{"bolt_timeout": "2s", "scorchMergePlanOptions": mergePlan})
		if err != nil {
			return nil, false, fmt.Errorf("open trip index %s: %w", path, err)
		}
		return e, false, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, false, fmt.Errorf("create trip index: %w", err)
	}
	if e.idx, err = bleve.NewUsing(path, newMapping(), scorch.Name, scorch.Name, map[string]any{"scorchMergePlanOptions": mergePlan}); err != nil {
		return nil, false, fmt.Errorf("create trip index %s: %w", path, err)
	}
	return e, true, nil
}

// mergePlan lets scorch keep up to 50 segments a tier before it merges
// them (its default is 10; decision 0271). An on-sale on 3,000 buses
// rewrites a document per hold, a new segment per batch, and merging them
// back at the default pace took a third of `seatghor dev`'s CPU; searches
// read a few more segments instead.
var mergePlan = map[string]any{"MaxSegmentsPerTier": 50, "SegmentsPerMergeTask": 10}

// newMapping: one analysed text field for the words of every searchable
// attribute, numbers for filters and sorts, keywords for the cities, and
// the document itself stored for the answer.
func newMapping() mapping.IndexMapping {
	text := bleve.NewTextFieldMapping()
	text.Analyzer = standard.Name
	text.Store, text.IncludeInAll, text.IncludeTermVectors, text.DocValues = false, false, false, false
	num := bleve.NewNumericFieldMapping()
	num.Store, num.IncludeInAll = false, false
	kw := bleve.NewTextFieldMapping()
	kw.Analyzer = keyword.Name
	kw.Store, kw.IncludeInAll, kw.IncludeTermVectors, kw.DocValues = false, false, false, false
	stored := bleve.NewTextFieldMapping()
	stored.Index, stored.Store, stored.IncludeInAll, stored.DocValues = false, true, false, false

	doc := bleve.NewDocumentStaticMapping()
	doc.AddFieldMappingsAt("text", text)
	for _, f := range []string{"id", "kind", "starts_at", "local_day", "lowest_price_minor", "seats_available"} {
		doc.AddFieldMappingsAt(f, num)
	}
	doc.AddFieldMappingsAt("origin_key", kw)
	doc.AddFieldMappingsAt("destination_key", kw)
	doc.AddFieldMappingsAt("doc", stored)
	m := bleve.NewIndexMapping()
	m.DefaultMapping = doc
	m.DefaultAnalyzer = standard.Name
	return m
}

// Put implements TripIndex.
func (e *Embedded) Put(_ context.Context, trips []search.Trip) error {
	if len(trips) == 0 {
		return nil
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	b := e.idx.NewBatch()
	for _, t := range trips {
		d := toDocument(t)
		raw, err := json.Marshal(d)
		if err != nil {
			return err
		}
		if err := b.Index(strconv.FormatInt(d.ID, 10), map[string]any{
			"text":               strings.Join([]string{d.Title, d.Origin, d.Destination, d.Venue, d.Operator, d.Aliases}, " \n "),
			"id":                 float64(d.ID),
			"kind":               float64(d.Kind),
			"starts_at":          float64(d.StartsAt),
			"local_day":          float64(d.LocalDay),
			"lowest_price_minor": float64(d.Price),
			"seats_available":    float64(d.Seats),
			"origin_key":         d.OriginKey,
			"destination_key":    d.DestinationKey,
			"doc":                string(raw),
		}); err != nil {
			return fmt.Errorf("index trip %d: %w", d.ID, err)
		}
	}
	// scorch makes a batch searchable before Batch returns.
	if err := e.idx.Batch(b); err != nil {
		return fmt.Errorf("index %d trips: %w", len(trips), err)
	}
	return nil
}

// Search implements TripIndex.
func (e *Embedded) Search(ctx context.Context, q search.Query) (search.Result, error) {
	return run(ctx, q, e.find)
}

func (e *Embedded) find(_ context.Context, r request) (search.Result, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	q := r.Query
	var must []query.Query
	hasText := false
	if r.text != "" {
		tokens := e.idx.Mapping().AnalyzerNamed(standard.Name).Analyze([]byte(r.text))
		for i, tok := range tokens {
			word := string(tok.Term)
			alts := []query.Query{wordQuery(word)}
			if i == len(tokens)-1 {
				// The last word may still be typed: match it as a prefix too,
				// as Meilisearch does.
				p := bleve.NewPrefixQuery(word)
				p.SetField("text")
				alts = append(alts, p)
			}
			must = append(must, bleve.NewDisjunctionQuery(alts...))
			hasText = true
		}
	}
	if r.originKey != "" {
		must = append(must, keyQuery("origin_key", r.originKey))
	}
	if r.destinationKey != "" {
		must = append(must, keyQuery("destination_key", r.destinationKey))
	}
	if q.Kind != 0 {
		must = append(must, numRange("kind", new(float64(q.Kind)), new(float64(q.Kind)), true))
	}
	if !q.StartsAfter.IsZero() || !q.StartsBefore.IsZero() {
		var lo, hi *float64
		if !q.StartsAfter.IsZero() {
			lo = new(float64(q.StartsAfter.UnixMilli()))
		}
		if !q.StartsBefore.IsZero() {
			hi = new(float64(q.StartsBefore.UnixMilli()))
		}
		must = append(must, numRange("starts_at", lo, hi, false))
	}
	if q.Day != 0 {
		must = append(must, numRange("local_day", new(float64(q.Day)), new(float64(q.Day)), true))
	}
	if q.MinPriceMinor != nil || q.MaxPriceMinor != nil {
		var lo, hi *float64
		if q.MinPriceMinor != nil {
			lo = new(float64(*q.MinPriceMinor))
		}
		if q.MaxPriceMinor != nil {
			hi = new(float64(*q.MaxPriceMinor))
		}
		must = append(must, numRange("lowest_price_minor", lo, hi, true))
	}
	if q.MinSeatsAvailable > 0 {
		must = append(must, numRange("seats_available", new(float64(q.MinSeatsAvailable)), nil, true))
	}
	var root query.Query = bleve.NewMatchAllQuery()
	if len(must) > 0 {
		root = bleve.NewConjunctionQuery(must...)
	}
	if r.notRoute != nil {
		b := bleve.NewBooleanQuery()
		b.AddMust(root)
		b.AddMustNot(bleve.NewConjunctionQuery(keyQuery("origin_key", r.notRoute[0]), keyQuery("destination_key", r.notRoute[1])))
		root = b
	}
	req := bleve.NewSearchRequestOptions(root, q.PageSize(), q.Offset, false)
	req.Fields = []string{"doc"}
	switch {
	case q.Sort == search.SortPrice:
		req.SortBy([]string{"lowest_price_minor", "starts_at", "id"})
	case q.Sort == search.SortRelevance && hasText && !r.byTime:
		req.SortBy([]string{"-_score", "starts_at", "id"})
	default:
		req.SortBy([]string{"starts_at", "id"})
	}
	res, err := e.idx.Search(req)
	if err != nil {
		return search.Result{}, fmt.Errorf("search trips: %w", err)
	}
	out := search.Result{EstimatedTotal: int64(res.Total), Trips: make([]search.Trip, 0, len(res.Hits))}
	for _, h := range res.Hits {
		raw, ok := h.Fields["doc"].(string)
		if !ok {
			return search.Result{}, fmt.Errorf("search trips: hit %s has no document", h.ID)
		}
		var d document
		if err := json.Unmarshal([]byte(raw), &d); err != nil {
			return search.Result{}, fmt.Errorf("search trips: decode hit %s: %w", h.ID, err)
		}
		out.Trips = append(out.Trips, d.trip())
	}
	return out, nil
}

// wordQuery matches a query word with Meilisearch's typo allowance.
func wordQuery(word string) query.Query {
	if n := typos(word); n > 0 {
		f := bleve.NewFuzzyQuery(word)
		f.SetField("text")
		f.SetFuzziness(n)
		return f
	}
	t := bleve.NewTermQuery(word)
	t.SetField("text")
	return t
}

// keyQuery matches a place key (placeKey) exactly.
func keyQuery(field, value string) query.Query {
	t := bleve.NewTermQuery(value)
	t.SetField(field)
	return t
}

// numRange bounds field; lo is inclusive, hi inclusive when hiIncl.
func numRange(field string, lo, hi *float64, hiIncl bool) query.Query {
	q := bleve.NewNumericRangeInclusiveQuery(lo, hi, new(true), new(hiIncl))
	q.SetField(field)
	return q
}

// Reset implements TripIndex: the index is dropped and created empty.
func (e *Embedded) Reset(context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.idx.Close(); err != nil {
		return fmt.Errorf("reset trip index: %w", err)
	}
	if err := os.RemoveAll(e.path); err != nil {
		return fmt.Errorf("reset trip index: %w", err)
	}
	idx, err := bleve.New(e.path, newMapping())
	if err != nil {
		return fmt.Errorf("reset trip index: %w", err)
	}
	e.idx = idx
	return nil
}

// Close implements TripIndex.
func (e *Embedded) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.idx.Close(); err != nil && !errors.Is(err, bleve.ErrorIndexClosed) {
		return err
	}
	return nil
}
