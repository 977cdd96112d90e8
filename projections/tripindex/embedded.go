package tripindex

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/keyword"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/standard"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search/query"
	bolt "go.etcd.io/bbolt"

	"github.com/seatghor/seatghor/server/search"
)

// embeddedDir names the index directory; a new name (a changed mapping)
// starts an empty index, which OpenEmbedded reports as created so the
// caller replays the outbox into it. The seat counts live beside it, in
// the bolt file embeddedDir+".seats" (decision 0272).
const embeddedDir = "trips-v5"

// Embedded is the dev-mode trip index: bleve with the scorch index on local
// disk (NewMemOnly is the old upsidedown index, about 30× slower). It lives
// in one process: the API and the projector of `seatghor dev` share it.
//
// A trip's seats available are not in bleve (decision 0272): every hold
// changes them, and rewriting a document in bleve per hold was most of
// `dev`'s CPU on an on-sale of many buses. They are in a bolt file next to
// the index and in memory, with each trip's listing fingerprint; a Put
// whose listing is unchanged writes only the bolt file. A search filters
// by seats with the ids below the minimum, and answers the counts from
// memory.
type Embedded struct {
	path string
	// mu guards idx: Reset swaps it while searches hold the read lock.
	mu  sync.RWMutex
	idx bleve.Index
	// put serialises Puts (each source's consumer writes), so the
	// fingerprints below match what bleve holds.
	put sync.Mutex
	db  *bolt.DB
	// smu guards trips against searches while Put or Reset writes it.
	smu   sync.RWMutex
	trips map[int64]stored
}

// stored is what the index keeps of a trip outside bleve.
type stored struct {
	seats int
	// listing fingerprints the document bleve has (seats left out).
	listing uint64
	// stops is how many stops the trip has: its documents' ids
	// (documentIDs).
	stops int
}

var (
	_ TripIndex   = (*Embedded)(nil)
	_ CountWriter = (*Embedded)(nil)
)

// tripsBucket holds each trip's stored value: 8 bytes of seats, 8 of the
// listing's fingerprint, 8 of its stops, by the show id (8 bytes,
// big-endian).
const tripsBucket = "trips"

// OpenEmbedded opens the index under dir, creating it if needed; created
// tells that it started empty. An index without its seat file (or the
// reverse) starts empty too.
func OpenEmbedded(dir string) (e *Embedded, created bool, err error) {
	path := filepath.Join(dir, embeddedDir)
	seats := path + ".seats"
	e = &Embedded{path: path, trips: map[int64]stored{}}
	_, idxErr := os.Stat(path)
	_, seatsErr := os.Stat(seats)
	if idxErr != nil || seatsErr != nil {
		created = true
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, false, fmt.Errorf("create trip index: %w", err)
		}
		for _, p := range []string{path, seats} {
			if err := os.RemoveAll(p); err != nil {
				return nil, false, fmt.Errorf("create trip index: %w", err)
			}
		}
	}
	// The files are locked by the process that has them open; wait for
	// them briefly rather than forever (bolt's default).
	if e.db, err = bolt.Open(seats, 0o600, &bolt.Options{Timeout: 2 * time.Second}); err != nil {
		return nil, false, fmt.Errorf("open trip index %s: %w", seats, err)
	}
	if err := e.load(); err != nil {
		_ = e.db.Close()
		return nil, false, err
	}
	if created {
		e.idx, err = bleve.NewUsing(path, newMapping(), scorch.Name, scorch.Name, map[string]any{"scorchMergePlanOptions": mergePlan})
	} else {
		e.idx, err = bleve.OpenUsing(path, map[string]any{"bolt_timeout": "2s", "scorchMergePlanOptions": mergePlan})
	}
	if err != nil {
		_ = e.db.Close()
		return nil, false, fmt.Errorf("open trip index %s: %w", path, err)
	}
	return e, created, nil
}

// load reads the stored trips into memory.
func (e *Embedded) load() error {
	return e.db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte(tripsBucket))
		if err != nil {
			return fmt.Errorf("trip index seats: %w", err)
		}
		return b.ForEach(func(k, v []byte) error {
			if len(k) != 8 || len(v) != 24 {
				return fmt.Errorf("trip index seats: bad entry %x", k)
			}
			e.trips[int64(binary.BigEndian.Uint64(k))] = stored{
				seats: int(binary.BigEndian.Uint64(v)), listing: binary.BigEndian.Uint64(v[8:16]),
				stops: int(binary.BigEndian.Uint64(v[16:]))}
			return nil
		})
	})
}

// mergePlan lets scorch keep up to 50 segments a tier before it merges
// them (its default is 10; decision 0271). Each write is a new segment,
// and merging them back at the default pace took a third of `seatghor
// dev`'s CPU when every hold rewrote its bus (before decision 0272);
// searches read a few more segments instead.
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
	for _, f := range []string{"show_id", "kind", "starts_at", "local_day", "lowest_price_minor", "via_from", "via_to"} {
		doc.AddFieldMappingsAt(f, num)
	}
	for _, f := range []string{"origin_key", "destination_key", "pairs"} {
		doc.AddFieldMappingsAt(f, kw)
	}
	doc.AddFieldMappingsAt("doc", stored)
	m := bleve.NewIndexMapping()
	m.DefaultMapping = doc
	m.DefaultAnalyzer = standard.Name
	return m
}

// Put implements TripIndex. Only the trips whose listing changed are
// written to bleve; every trip's seats and fingerprint go to the bolt file
// after bleve took them, so a crash between the two leaves a fingerprint
// that does not match and the replayed Put writes bleve again.
func (e *Embedded) Put(_ context.Context, trips []search.Trip) error {
	if len(trips) == 0 {
		return nil
	}
	e.put.Lock()
	defer e.put.Unlock()
	e.mu.RLock()
	defer e.mu.RUnlock()
	next := make(map[int64]stored, len(trips))
	b := e.idx.NewBatch()
	// e.trips is read here without smu: only Put (one at a time) and
	// Reset (which excludes Put) write it.
	for _, t := range trips {
		seats := t.SeatsAvailable
		t.SeatsAvailable = 0 // the stored document's count is never read
		listing, err := fingerprint(t)
		if err != nil {
			return err
		}
		s := stored{seats: seats, listing: listing, stops: len(t.Stops)}
		next[t.ShowID] = s
		cur, known := e.trips[t.ShowID]
		if known && cur.listing == s.listing {
			continue // only the seats changed: no document to derive
		}
		docs := toDocuments(t)
		written := map[string]bool{}
		for _, d := range docs {
			raw, err := json.Marshal(d)
			if err != nil {
				return err
			}
			written[d.ID] = true
			if err := b.Index(d.ID, map[string]any{
				"text":               strings.Join([]string{d.Title, d.Origin, d.Destination, d.Venue, d.Operator, d.Aliases}, " \n "),
				"show_id":            float64(d.ShowID),
				"kind":               float64(d.Kind),
				"starts_at":          float64(d.StartsAt),
				"local_day":          float64(d.LocalDay),
				"lowest_price_minor": float64(d.Price),
				"via_from":           boolNum(d.ViaFrom),
				"via_to":             boolNum(d.ViaTo),
				"origin_key":         d.OriginKey,
				"destination_key":    d.DestinationKey,
				"pairs":              d.Pairs,
				"doc":                string(raw),
			}); err != nil {
				return fmt.Errorf("index trip %d: %w", d.ShowID, err)
			}
		}
		if known {
			for _, id := range documentIDs(t.ShowID, cur.stops) {
				if !written[id] {
					b.Delete(id) // a journey the trip no longer sells
				}
			}
		}
	}
	// The counts are in memory before the documents are searchable, so a
	// search never finds a trip without its count; the fingerprints only
	// once the documents are written.
	e.smu.Lock()
	for id, s := range next {
		cur := e.trips[id]
		cur.seats = s.seats
		e.trips[id] = cur
	}
	e.smu.Unlock()
	// scorch makes a batch searchable (and durable) before Batch returns.
	if b.Size() > 0 {
		if err := e.idx.Batch(b); err != nil {
			return fmt.Errorf("index %d trips: %w", b.Size(), err)
		}
	}
	return e.store(next)
}

// PutSeats implements CountWriter: the counts of the trips the index
// holds go to the bolt file and memory, and no document is touched.
func (e *Embedded) PutSeats(_ context.Context, counts map[int64]int) (unknown []int64, err error) {
	e.put.Lock()
	defer e.put.Unlock()
	e.mu.RLock()
	defer e.mu.RUnlock()
	next := make(map[int64]stored, len(counts))
	for id, n := range counts {
		// Read without smu, as in Put. A trip whose first write did not
		// reach bleve has a count but no fingerprint: unknown too.
		cur, ok := e.trips[id]
		if !ok || cur.listing == 0 {
			unknown = append(unknown, id)
			continue
		}
		next[id] = stored{seats: n, listing: cur.listing, stops: cur.stops}
	}
	if err := e.store(next); err != nil {
		return nil, err
	}
	return unknown, nil
}

// store writes trips' counts and fingerprints to the bolt file, in one
// transaction, and then to memory.
func (e *Embedded) store(trips map[int64]stored) error {
	if len(trips) == 0 {
		return nil
	}
	err := e.db.Update(func(tx *bolt.Tx) error {
		bucket := tx.Bucket([]byte(tripsBucket))
		var k [8]byte
		for id, s := range trips {
			var v [24]byte
			binary.BigEndian.PutUint64(k[:], uint64(id))
			binary.BigEndian.PutUint64(v[:], uint64(s.seats))
			binary.BigEndian.PutUint64(v[8:], s.listing)
			binary.BigEndian.PutUint64(v[16:], uint64(s.stops))
			if err := bucket.Put(k[:], v[:]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store seats of %d trips: %w", len(trips), err)
	}
	e.smu.Lock()
	maps.Copy(e.trips, trips)
	e.smu.Unlock()
	return nil
}

// fingerprint identifies a trip's listing (its count set to 0): an
// FNV-64a of its JSON, every field included. It is taken of the trip, not
// of its document, because deriving the document (the places' aliases) is
// the costly part of a write; so a change in how a document is derived
// (toDocument, the gazetteer) must move embeddedDir, as a mapping change
// does, or unchanged trips keep their old documents.
func fingerprint(t search.Trip) (uint64, error) {
	raw, err := json.Marshal(t)
	if err != nil {
		return 0, fmt.Errorf("trip %d: %w", t.ShowID, err)
	}
	f := fnv.New64a()
	_, _ = f.Write(raw)
	return f.Sum64(), nil
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
	fromFirst, toLast := r.wholeOnly()
	if fromFirst {
		must = append(must, numRange("via_from", new(0.0), new(0.0), true))
	}
	if toLast {
		must = append(must, numRange("via_to", new(0.0), new(0.0), true))
	}
	var root query.Query = bleve.NewMatchAllQuery()
	if len(must) > 0 {
		root = bleve.NewConjunctionQuery(must...)
	}
	var mustNot []query.Query
	if r.notRoute != nil {
		mustNot = append(mustNot, keyQuery("pairs", r.notRoute[0]+">"+r.notRoute[1]))
	}
	if q.MinSeatsAvailable > 0 {
		if few := e.fewerSeats(q.MinSeatsAvailable); len(few) > 0 {
			mustNot = append(mustNot, bleve.NewDocIDQuery(few))
		}
	}
	if len(mustNot) > 0 {
		b := bleve.NewBooleanQuery()
		b.AddMust(root)
		b.AddMustNot(mustNot...)
		root = b
	}
	req := bleve.NewSearchRequestOptions(root, q.PageSize(), q.Offset, false)
	req.Fields = []string{"doc"}
	switch {
	case q.Sort == search.SortPrice:
		req.SortBy([]string{"lowest_price_minor", "starts_at", "show_id", "_id"})
	case q.Sort == search.SortRelevance && hasText && !r.byTime:
		req.SortBy([]string{"-_score", "starts_at", "show_id", "_id"})
	default:
		req.SortBy([]string{"starts_at", "show_id", "_id"})
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
	e.smu.RLock()
	for i := range out.Trips {
		out.Trips[i].SeatsAvailable = e.trips[out.Trips[i].ShowID].seats
	}
	e.smu.RUnlock()
	return out, nil
}

// fewerSeats returns the ids of the trips with fewer than n seats
// available, which a search for n leaves out. A scan of the counts in
// memory: some µs for thousands of trips.
func (e *Embedded) fewerSeats(n int) []string {
	e.smu.RLock()
	defer e.smu.RUnlock()
	var ids []string
	for id, s := range e.trips {
		if s.seats < n {
			ids = append(ids, documentIDs(id, s.stops)...)
		}
	}
	return ids
}

// Delete implements TripIndex: every document of the trips goes, with
// their counts.
func (e *Embedded) Delete(_ context.Context, shows []int64) error {
	if len(shows) == 0 {
		return nil
	}
	e.put.Lock()
	defer e.put.Unlock()
	e.mu.RLock()
	defer e.mu.RUnlock()
	b := e.idx.NewBatch()
	for _, id := range shows {
		for _, doc := range documentIDs(id, e.trips[id].stops) {
			b.Delete(doc)
		}
	}
	if err := e.idx.Batch(b); err != nil {
		return fmt.Errorf("delete %d trips: %w", len(shows), err)
	}
	err := e.db.Update(func(tx *bolt.Tx) error {
		bucket := tx.Bucket([]byte(tripsBucket))
		var k [8]byte
		for _, id := range shows {
			binary.BigEndian.PutUint64(k[:], uint64(id))
			if err := bucket.Delete(k[:]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("delete the counts of %d trips: %w", len(shows), err)
	}
	e.smu.Lock()
	for _, id := range shows {
		delete(e.trips, id)
	}
	e.smu.Unlock()
	return nil
}

// boolNum is a flag as the numeric field bleve filters.
func boolNum(b bool) float64 {
	if b {
		return 1
	}
	return 0
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
	idx, err := bleve.NewUsing(e.path, newMapping(), scorch.Name, scorch.Name, map[string]any{"scorchMergePlanOptions": mergePlan})
	if err != nil {
		return fmt.Errorf("reset trip index: %w", err)
	}
	e.idx = idx
	err = e.db.Update(func(tx *bolt.Tx) error {
		if err := tx.DeleteBucket([]byte(tripsBucket)); err != nil {
			return err
		}
		_, err := tx.CreateBucket([]byte(tripsBucket))
		return err
	})
	if err != nil {
		return fmt.Errorf("reset trip index seats: %w", err)
	}
	e.smu.Lock()
	clear(e.trips)
	e.smu.Unlock()
	return nil
}

// Close implements TripIndex.
func (e *Embedded) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	err := e.idx.Close()
	if errors.Is(err, bleve.ErrorIndexClosed) {
		err = nil
	}
	return errors.Join(err, e.db.Close())
}
