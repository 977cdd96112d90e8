// Package seatmap is the Redis seat map: per show, the static layout
// and the small, often-changing availability part — 2 bits per seat in
// layout order (four seats a byte, the first in the low bits, as
// booking.SeatMap and the API carry it) plus the seat-map version.
//
// The projector keeps it current from the outbox by reading the rows of the
// seats each batch names and writing each seat only from a read at least as
// new as the one it has, per-seat versions (docs/DESIGN.md, "Ordering of
// read-model updates"; decision 0130), recomputing a whole show only to
// repair; the reader serves
// GetSeatMap from it, fills misses from the shard with one load per show at
// a time, and falls back to the shard when Redis is down.
package seatmap

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seatghor/seatghor/server/booking"
	"github.com/seatghor/seatghor/server/catalog"
)

// Store keeps seat maps in Redis under a key prefix.
type Store struct {
	rdb    redis.UniversalClient
	prefix string
	ttl    time.Duration
}

// NewStore returns a store on rdb whose keys start with prefix. Keys expire
// ttl after their last write (default 24h), so shows nobody looks at leave
// the cache; a miss is always safe (cache-aside, R-8.2).
func NewStore(rdb redis.UniversalClient, prefix string, ttl time.Duration) *Store {
	if ttl <= 0 {
		ttl = 24 * time.Hour
	}
	return &Store{rdb: rdb, prefix: prefix, ttl: ttl}
}

// key names one of a show's keys, <prefix>seatmap:{<show>}:<part>. The
// show id in braces is the keys' Redis Cluster hash tag: every key of a
// show lives in one slot, so the scripts below, which touch several of
// them, run on a cluster too (decision 0200).
func (s *Store) key(showID int64, part string) string {
	return s.prefix + "seatmap:{" + strconv.FormatInt(showID, 10) + "}:" + part
}

func (s *Store) availKey(showID int64) string { return s.key(showID, "avail") }

func (s *Store) layoutKey(showID int64) string { return s.key(showID, "layout") }

// heldKey is a sorted set of the seats shown held (member: place in layout
// order, score: when the hold runs out, µs), so a lapsed hold is let go in
// Redis (lapse) instead of by rereading the show.
func (s *Store) heldKey(showID int64) string { return s.key(showID, "held") }

// metaKey holds the few bytes of the layout an availability-only answer
// needs: its etag and the sections' places (written with the layout).
func (s *Store) metaKey(showID int64) string { return s.key(showID, "meta") }

// putAvailability writes a show's availability atomically and only if it is
// newer than what is there: a higher version, or the same version judged at
// a later time (the same rows, but holds may have lapsed since, R-3.3). An
// older or repeated write changes nothing, so the projector's retries and
// out-of-order writers are harmless. Only GET/SET-style hash commands are
// used (no BITFIELD), so the same script runs on redis-server and on the
// in-process Redis of dev mode.
var putAvailability = redis.NewScript(`
local cur = redis.call('HMGET', KEYS[1], 'v', 'asof')
local v = tonumber(cur[1])
if v then
  local nv = tonumber(ARGV[1])
  if nv < v then return 0 end
  if nv == v and tonumber(ARGV[2]) <= tonumber(cur[2]) then return 0 end
end
local hz = ARGV[9]
redis.call('HSET', KEYS[1], 'v', ARGV[1], 'asof', ARGV[2], 'exp', ARGV[3], 'bits', ARGV[4], 'ga', ARGV[5],
  'sv', ARGV[7], 'gav', ARGV[8], 'hz', hz)
redis.call('PEXPIRE', KEYS[1], ARGV[6])
redis.call('DEL', KEYS[2])
if hz == '1' then
  for i = 10, #ARGV, 2 do
    redis.call('ZADD', KEYS[2], ARGV[i + 1], ARGV[i])
  end
  redis.call('PEXPIRE', KEYS[2], ARGV[6])
end
return 1
`)

// lapse lets the holds shown in a stored availability that ran out by now
// (ARGV[1], µs) go, as the shard would show them (R-3.3: a lapsed hold
// changes no row and no version): their seats become available, and exp
// moves to the next hold to run out. A seat whose row changed since is
// still brought up to date by its event (a higher row version). Returns
// -1 when the map does not know its held seats (hz unset): recompute.
var lapse = redis.NewScript(`
local cur = redis.call('HMGET', KEYS[1], 'hz', 'bits', 'asof')
if cur[1] ~= '1' then return -1 end
local bits = cur[2]
local gone = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', '(' .. ARGV[1])
local nb = {}
for _, m in ipairs(gone) do
  local idx = tonumber(m)
  local b = math.floor(idx / 4) + 1
  local byte = nb[b] or string.byte(bits, b)
  local mul = 4 ^ (idx % 4)
  if math.floor(byte / mul) % 4 == 1 then nb[b] = byte - mul end
end
local keys = {}
for k in pairs(nb) do keys[#keys + 1] = k end
table.sort(keys)
local parts, pos = {}, 1
for _, k in ipairs(keys) do
  parts[#parts + 1] = string.sub(bits, pos, k - 1)
  parts[#parts + 1] = string.char(nb[k])
  pos = k + 1
end
parts[#parts + 1] = string.sub(bits, pos)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', '(' .. ARGV[1])
local exp = '0'
local first = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
if first[2] then exp = string.format('%.0f', tonumber(first[2])) end
local asof = cur[3]
if tonumber(ARGV[1]) > tonumber(asof) then asof = ARGV[1] end
redis.call('HSET', KEYS[1], 'bits', table.concat(parts), 'exp', exp, 'asof', asof)
return 1
`)

// applyChanges brings a stored availability up to date from the seats and
// GA areas an event batch touched, read from the shard with their row
// versions (decision 0130). A seat or area takes the state of a read only if
// that read's version is at least the one it was last written from (the same
// version judged later tells a lapsed hold apart, R-3.3), so duplicates,
// replays and reads that arrive out of order change nothing that is newer.
// The show's version becomes the batch's newest event xid if that is higher.
// The map's exp only moves earlier (a hold shown in it); a pass of exp makes
// the reader recompute the whole map (the repair path).
//
// ARGV: version, asof, ttl ms, n seats, then n × (index, version, state,
// held-until µs or 0), then m areas, m × (index, version, remaining).
// Returns 1, or -1 when there is no map to update (or it does not fit the
// change): the caller recomputes the whole show instead.
//
// Per-seat versions are kept in the hash field sv, 4 bytes a seat in layout
// order (big-endian): string.byte/char only, so the in-process Redis of dev
// mode runs it too.
var applyChanges = redis.NewScript(`
local cur = redis.call('HMGET', KEYS[1], 'v', 'asof', 'exp', 'bits', 'ga', 'sv', 'gav', 'hz')
if not cur[1] then return -1 end
local hz = cur[8] == '1' 
local bits = cur[4] or ''
local sv = cur[6] or ''
local fullsv = #sv > 0
local exp = tonumber(cur[3]) or 0
local expstr = cur[3] or '0'
local newbits, newsv = {}, {}
local i = 5
local n = tonumber(ARGV[4])
for _ = 1, n do
  local idx, ver, st, untilv = tonumber(ARGV[i]), tonumber(ARGV[i+1]), tonumber(ARGV[i+2]), tonumber(ARGV[i+3])
  local ustr = ARGV[i+3]
  i = i + 4
  local b = math.floor(idx / 4) + 1
  if b > #bits then return -1 end
  local stored = -1
  if #sv >= 4 * idx + 4 then
    local b1, b2, b3, b4 = string.byte(sv, 4 * idx + 1, 4 * idx + 4)
    stored = ((b1 * 256 + b2) * 256 + b3) * 256 + b4
  end
  if ver >= stored then
    local byte = newbits[b] or string.byte(bits, b)
    local mul = 4 ^ (idx % 4)
    local old = math.floor(byte / mul) % 4
    newbits[b] = byte + (st - old) * mul
    newsv[idx] = ver
    if hz then
      if st == 1 and untilv > 0 then
        redis.call('ZADD', KEYS[2], ustr, idx)
      else
        redis.call('ZREM', KEYS[2], idx)
      end
    elseif st == 1 and untilv > 0 and (exp == 0 or untilv < exp) then
      exp = untilv
      expstr = ustr
    end
  end
end
local function splice(s, changes, width, enc)
  local keys = {}
  for k in pairs(changes) do keys[#keys + 1] = k end
  if #keys == 0 then return s end
  table.sort(keys)
  local parts, pos = {}, 1
  for _, k in ipairs(keys) do
    local at = k * width + 1
    if width == 1 then at = k end
    parts[#parts + 1] = string.sub(s, pos, at - 1)
    parts[#parts + 1] = enc(changes[k])
    pos = at + width
  end
  parts[#parts + 1] = string.sub(s, pos)
  return table.concat(parts)
end
bits = splice(bits, newbits, 1, function(v) return string.char(v) end)
if fullsv then
  sv = splice(sv, newsv, 4, function(v)
    return string.char(math.floor(v / 16777216) % 256, math.floor(v / 65536) % 256, math.floor(v / 256) % 256, v % 256)
  end)
end
local ga, gav = {}, {}
for f in string.gmatch(cur[5] or '', '[^,]+') do ga[#ga + 1] = f end
for f in string.gmatch(cur[7] or '', '[^,]+') do gav[#gav + 1] = f end
local m = tonumber(ARGV[i])
i = i + 1
for _ = 1, m do
  local idx, ver = tonumber(ARGV[i]) + 1, tonumber(ARGV[i+1])
  if idx > #ga then return -1 end
  if ver >= (tonumber(gav[idx]) or -1) then
    ga[idx] = ARGV[i+2]
    if #gav == #ga then gav[idx] = ARGV[i+1] end
  end
  i = i + 3
end
if hz then
  -- exp is exactly when the first hold shown runs out.
  expstr = '0'
  local first = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
  if first[2] then expstr = string.format('%.0f', tonumber(first[2])) end
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
end
local v = cur[1]
if tonumber(ARGV[1]) > tonumber(v) then v = ARGV[1] end
local asof = cur[2]
if tonumber(ARGV[2]) > tonumber(asof) then asof = ARGV[2] end
redis.call('HSET', KEYS[1], 'v', v, 'asof', asof, 'exp', expstr, 'bits', bits, 'sv', sv,
  'ga', table.concat(ga, ','), 'gav', table.concat(gav, ','))
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
`)

// ApplyChanges updates a show's stored availability from the rows an event
// batch touched (see the script); version is the batch's newest event xid
// of the show. missing tells that there was no map to update (or it no
// longer fits the layout): recompute the show instead.
func (s *Store) ApplyChanges(ctx context.Context, showID, version int64, c booking.SeatChanges) (missing bool, err error) {
	n, err := applyChanges.Run(ctx, s.rdb, []string{s.availKey(showID), s.heldKey(showID)}, changeArgs(version, c, s.ttl)...).Int()
	if err != nil {
		return false, fmt.Errorf("seat map %d: apply changes: %w", showID, err)
	}
	return n != 1, nil
}

// ApplyChangesMany is ApplyChanges for many shows in one Redis round trip
// (a pipeline), for a batch that names thousands of shows (decision 0210).
// versions holds each show's newest event xid; it returns the shows that
// had no map to update (recompute them).
func (s *Store) ApplyChangesMany(ctx context.Context, versions map[int64]int64, changes map[int64]booking.SeatChanges) (missing []int64, err error) {
	if len(changes) == 0 {
		return nil, nil
	}
	ids := make([]int64, 0, len(changes))
	for id := range changes {
		ids = append(ids, id)
	}
	run := func() ([]*redis.Cmd, error) {
		cmds := make([]*redis.Cmd, len(ids))
		_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, id := range ids {
				cmds[i] = applyChanges.EvalSha(ctx, p, []string{s.availKey(id), s.heldKey(id)},
					changeArgs(versions[id], changes[id], s.ttl)...)
			}
			return nil
		})
		return cmds, err
	}
	cmds, err := run()
	if err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
		// A Redis that restarted (or was flushed) forgot the script; the
		// script is idempotent, so the whole pipeline may run again.
		if err := applyChanges.Load(ctx, s.rdb).Err(); err != nil {
			return nil, fmt.Errorf("seat maps: load script: %w", err)
		}
		cmds, err = run()
	}
	if err != nil {
		return nil, fmt.Errorf("seat maps of %d shows: apply changes: %w", len(ids), err)
	}
	for i, c := range cmds {
		if n, _ := c.Int(); n != 1 {
			missing = append(missing, ids[i])
		}
	}
	return missing, nil
}

// PutAvailability stores m's availability if it is newer (see the script);
// written tells whether it was.
func (s *Store) PutAvailability(ctx context.Context, m booking.SeatMap) (written bool, err error) {
	n, err := putAvailability.Run(ctx, s.rdb, []string{s.availKey(m.ShowID), s.heldKey(m.ShowID)}, availArgs(m, s.ttl)...).Int()
	if err != nil {
		return false, fmt.Errorf("seat map %d: write availability: %w", m.ShowID, err)
	}
	return n == 1, nil
}

// Put stores m whole: its layout and, if newer, its availability.
func (s *Store) Put(ctx context.Context, m booking.SeatMap) error {
	layout, err := json.Marshal(layoutOf(m))
	if err != nil {
		return fmt.Errorf("seat map %d: encode layout: %w", m.ShowID, err)
	}
	a := m.Availability()
	meta, err := json.Marshal(layoutMeta{ETag: a.LayoutETag, Currency: m.Currency, SeatCount: m.SeatCount,
		Sections: a.Sections, GA: layoutOf(m).GA, Legs: a.Legs, StopIDs: a.StopIDs, Fares: a.Fares})
	if err != nil {
		return fmt.Errorf("seat map %d: encode layout summary: %w", m.ShowID, err)
	}
	_, err = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, s.layoutKey(m.ShowID), layout, s.ttl)
		p.Set(ctx, s.metaKey(m.ShowID), meta, s.ttl)
		// EVAL, not EVALSHA: a pipeline cannot fall back on NOSCRIPT.
		putAvailability.Eval(ctx, p, []string{s.availKey(m.ShowID), s.heldKey(m.ShowID)}, availArgs(m, s.ttl)...)
		return nil
	})
	if err != nil {
		return fmt.Errorf("seat map %d: write: %w", m.ShowID, err)
	}
	return nil
}

// Drop forgets a show's whole map, so the next read loads it from the shard
// (the load test times that: a full rebuild of one show's map).
func (s *Store) Drop(ctx context.Context, showID int64) error {
	if err := s.rdb.Del(ctx, s.layoutKey(showID), s.metaKey(showID), s.availKey(showID), s.heldKey(showID)).Err(); err != nil {
		return fmt.Errorf("seat map %d: drop: %w", showID, err)
	}
	return nil
}

// DropLayout forgets a show's layout (its show was changed).
func (s *Store) DropLayout(ctx context.Context, showID int64) error {
	if err := s.rdb.Del(ctx, s.layoutKey(showID), s.metaKey(showID)).Err(); err != nil {
		return fmt.Errorf("seat map %d: drop layout: %w", showID, err)
	}
	return nil
}

// Get returns the show's seat map as stored; ok is false when any part is
// missing or the availability is out of date at now (a hold shown in it
// has run out: ValidUntil) and cannot be brought up to date in Redis
// (lapse).
func (s *Store) Get(ctx context.Context, showID int64, now time.Time) (booking.SeatMap, bool, error) {
	m, ok, expired, err := s.get(ctx, showID, now)
	if expired && err == nil {
		if lapsed, err := s.lapse(ctx, showID, now); err != nil || !lapsed {
			return m, false, err
		}
		m, ok, _, err = s.get(ctx, showID, now)
	}
	return m, ok, err
}

// GetAvailability returns a show's availability and the layout's etag and
// section places, without reading the layout itself (R-8.2: the small
// part); ok is false when any part is missing or out of date at now.
func (s *Store) GetAvailability(ctx context.Context, showID int64, now time.Time) (booking.MapAvailability, bool, error) {
	a, ok, expired, err := s.getAvailability(ctx, showID, now)
	if expired && err == nil {
		if lapsed, err := s.lapse(ctx, showID, now); err != nil || !lapsed {
			return a, false, err
		}
		a, ok, _, err = s.getAvailability(ctx, showID, now)
	}
	return a, ok, err
}

// lapse lets the holds that ran out by now go in the stored map (see the
// script); false when the map cannot tell its held seats.
func (s *Store) lapse(ctx context.Context, showID int64, now time.Time) (bool, error) {
	n, err := lapse.Run(ctx, s.rdb, []string{s.availKey(showID), s.heldKey(showID)}, now.UnixMicro()).Int()
	if err != nil {
		return false, fmt.Errorf("seat map %d: let lapsed holds go: %w", showID, err)
	}
	return n == 1, nil
}

// get reads what Get returns; expired tells that a hold shown has run out.
func (s *Store) get(ctx context.Context, showID int64, now time.Time) (m booking.SeatMap, ok, expired bool, err error) {
	var layoutCmd *redis.StringCmd
	var availCmd *redis.SliceCmd
	_, err = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		layoutCmd = p.Get(ctx, s.layoutKey(showID))
		availCmd = p.HMGet(ctx, s.availKey(showID), "v", "asof", "exp", "bits", "ga")
		return nil
	})
	if errors.Is(err, redis.Nil) {
		return m, false, false, nil
	}
	if err != nil {
		return m, false, false, fmt.Errorf("seat map %d: read: %w", showID, err)
	}
	var l layout
	if err := json.Unmarshal([]byte(layoutCmd.Val()), &l); err != nil {
		return m, false, false, fmt.Errorf("seat map %d: decode layout: %w", showID, err)
	}
	a, ok, err := parseAvail(availCmd.Val())
	if err != nil || !ok {
		return m, false, false, err
	}
	if !a.ValidUntil.IsZero() && now.After(a.ValidUntil) {
		return m, false, true, nil
	}
	m = l.seatMap(showID)
	if len(a.States) != len(m.States) || len(a.GA) != len(m.GAAreas) {
		return m, false, false, nil // the layout changed under the availability
	}
	m.States, m.Version, m.AsOf, m.ValidUntil = a.States, a.Version, a.AsOf, a.ValidUntil
	for i := range m.GAAreas {
		m.GAAreas[i].Remaining = a.GA[i]
	}
	return m, true, false, nil
}

// layoutMeta is what of the layout an availability-only answer needs; of
// a trip with stops, what answers a journey too (decision 0354): its legs,
// stop ids and fares.
type layoutMeta struct {
	ETag      string                `json:"etag"`
	Currency  string                `json:"currency"`
	SeatCount int                   `json:"seat_count"`
	Sections  []booking.SectionSpan `json:"sections"`
	GA        []gaArea              `json:"ga,omitempty"`
	Legs      int                   `json:"legs,omitempty"`
	StopIDs   []string              `json:"stop_ids,omitempty"`
	Fares     []booking.MapFare     `json:"fares,omitempty"`
}

// legs is how many legs the layout's availability holds (1 before trips
// had stops).
func (m layoutMeta) legs() int { return max(m.Legs, 1) }

// getAvailability reads what GetAvailability returns; expired tells that a
// hold shown has run out.
func (s *Store) getAvailability(ctx context.Context, showID int64, now time.Time) (m booking.MapAvailability, ok, expired bool, err error) {
	var metaCmd *redis.StringCmd
	var availCmd *redis.SliceCmd
	_, err = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		metaCmd = p.Get(ctx, s.metaKey(showID))
		availCmd = p.HMGet(ctx, s.availKey(showID), "v", "asof", "exp", "bits", "ga")
		return nil
	})
	if errors.Is(err, redis.Nil) {
		return m, false, false, nil
	}
	if err != nil {
		return m, false, false, fmt.Errorf("seat map %d: read availability: %w", showID, err)
	}
	var meta layoutMeta
	if err := json.Unmarshal([]byte(metaCmd.Val()), &meta); err != nil {
		return m, false, false, fmt.Errorf("seat map %d: decode layout summary: %w", showID, err)
	}
	a, ok, err := parseAvail(availCmd.Val())
	if err != nil || !ok {
		return m, false, false, err
	}
	if !a.ValidUntil.IsZero() && now.After(a.ValidUntil) {
		return m, false, true, nil
	}
	if len(a.States) != meta.legs()*((meta.SeatCount+3)/4) || len(a.GA) != len(meta.GA) {
		return m, false, false, nil // the layout changed under the availability
	}
	m = booking.MapAvailability{ShowID: showID, Currency: meta.Currency, Version: a.Version, SeatCount: meta.SeatCount,
		States: a.States, LayoutETag: meta.ETag, Sections: meta.Sections, Legs: meta.Legs, StopIDs: meta.StopIDs,
		Fares: meta.Fares, ValidUntil: a.ValidUntil}
	for i, g := range meta.GA {
		m.GAAreas = append(m.GAAreas, booking.MapArea{Name: g.Name, Capacity: g.Capacity, PriceMinor: g.PriceMinor, Remaining: a.GA[i]})
	}
	return m, true, false, nil
}

// Availability is the stored availability part of a show.
type Availability struct {
	Version    int64
	AsOf       time.Time
	ValidUntil time.Time
	// States: 2 bits per seat in layout order.
	States []byte
	// GA is the places left per GA area, in layout order.
	GA []int
}

// Availability returns the show's stored availability; ok is false when
// there is none.
func (s *Store) Availability(ctx context.Context, showID int64) (a Availability, ok bool, err error) {
	vals, err := s.rdb.HMGet(ctx, s.availKey(showID), "v", "asof", "exp", "bits", "ga").Result()
	if err != nil {
		return a, false, fmt.Errorf("seat map %d: read availability: %w", showID, err)
	}
	return parseAvail(vals)
}

// Reset deletes every seat map (a rebuild): on every primary of a Redis
// Cluster, which holds only its own slots' keys.
func (s *Store) Reset(ctx context.Context) error {
	reset := func(ctx context.Context, node redis.UniversalClient) error {
		if err := deleteMatching(ctx, node, s.prefix+"seatmap:*"); err != nil {
			return fmt.Errorf("reset seat maps: %w", err)
		}
		return nil
	}
	if c, ok := s.rdb.(*redis.ClusterClient); ok {
		return c.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error { return reset(ctx, node) })
	}
	return reset(ctx, s.rdb)
}

// deleteMatching deletes the keys of one Redis node that match pattern,
// one DEL each in pipelines of 500: one DEL of keys from several slots
// would be refused by a cluster node (CROSSSLOT).
func deleteMatching(ctx context.Context, node redis.UniversalClient, pattern string) error {
	iter := node.Scan(ctx, 0, pattern, 1000).Iterator()
	p := node.Pipeline()
	for iter.Next(ctx) {
		p.Del(ctx, iter.Val())
		if p.Len() == 500 {
			if _, err := p.Exec(ctx); err != nil {
				return err
			}
		}
	}
	if err := iter.Err(); err != nil {
		return err
	}
	_, err := p.Exec(ctx)
	return err
}

// changeArgs are applyChanges's arguments (see the script).
func changeArgs(version int64, c booking.SeatChanges, ttl time.Duration) []any {
	args := make([]any, 0, 5+4*len(c.Seats)+3*len(c.Areas))
	args = append(args, version, c.AsOf.UnixMicro(), ttl.Milliseconds(), len(c.Seats))
	for _, sc := range c.Seats {
		var until int64
		if !sc.HeldUntil.IsZero() {
			until = sc.HeldUntil.UnixMicro()
		}
		args = append(args, sc.Index, sc.Version, int(sc.State), until)
	}
	args = append(args, len(c.Areas))
	for _, a := range c.Areas {
		args = append(args, a.Index, a.Version, a.Remaining)
	}
	return args
}

func availArgs(m booking.SeatMap, ttl time.Duration) []any {
	var exp int64
	if !m.ValidUntil.IsZero() {
		exp = m.ValidUntil.UnixMicro()
	}
	ga := make([]string, len(m.GAAreas))
	for i, a := range m.GAAreas {
		ga[i] = strconv.Itoa(a.Remaining)
	}
	// Per-seat versions, 4 bytes a seat (see applyChanges); empty when
	// unknown, which lets any later read of a seat replace it.
	var sv []byte
	if len(m.SeatVersions) == m.Places() && m.SeatVersions != nil {
		sv = make([]byte, 4*len(m.SeatVersions))
		for i, v := range m.SeatVersions {
			binary.BigEndian.PutUint32(sv[4*i:], uint32(v))
		}
	}
	var gav []string
	if len(m.GAVersions) == len(m.GAAreas) {
		for _, v := range m.GAVersions {
			gav = append(gav, strconv.FormatInt(v, 10))
		}
	}
	// The held seats, when the map comes from a read that lists them (one
	// with per-seat versions does): hz tells the scripts the set is known.
	args := []any{m.Version, m.AsOf.UnixMicro(), exp, m.States, strings.Join(ga, ","), ttl.Milliseconds(),
		sv, strings.Join(gav, ","), "0"}
	if sv != nil {
		args[8] = "1"
		for _, h := range m.Held {
			args = append(args, h.Index, h.Until.UnixMicro())
		}
	}
	return args
}

func parseAvail(vals []any) (a Availability, ok bool, err error) {
	if len(vals) != 5 || vals[0] == nil {
		return a, false, nil
	}
	str := func(i int) string { s, _ := vals[i].(string); return s }
	bad := func(what string, err error) (Availability, bool, error) {
		return a, false, fmt.Errorf("seat map availability: bad %s: %w", what, err)
	}
	if a.Version, err = strconv.ParseInt(str(0), 10, 64); err != nil {
		return bad("version", err)
	}
	asof, err := strconv.ParseInt(str(1), 10, 64)
	if err != nil {
		return bad("asof", err)
	}
	exp, err := strconv.ParseInt(str(2), 10, 64)
	if err != nil {
		return bad("exp", err)
	}
	a.AsOf = time.UnixMicro(asof).UTC()
	if exp > 0 {
		a.ValidUntil = time.UnixMicro(exp).UTC()
	}
	a.States = []byte(str(3))
	if g := str(4); g != "" {
		for _, f := range strings.Split(g, ",") {
			n, err := strconv.Atoi(f)
			if err != nil {
				return bad("ga", err)
			}
			a.GA = append(a.GA, n)
		}
	}
	return a, true, nil
}

// layout is the static part of a seat map as stored; a trip with stops
// keeps its legs, stops and fares too (decision 0354).
type layout struct {
	Currency  string               `json:"currency"`
	Sections  []booking.MapSection `json:"sections"`
	GA        []gaArea             `json:"ga,omitempty"`
	SeatCount int                  `json:"seat_count"`
	// Decks and Features: what the show draws besides its places
	// (decision 0370).
	Decks    []catalog.Deck    `json:"decks,omitempty"`
	Features []catalog.Feature `json:"features,omitempty"`
	Legs     int               `json:"legs,omitempty"`
	Trip     *trip             `json:"trip,omitempty"`
	Fares    []booking.MapFare `json:"fares,omitempty"`
}

// trip is a trip's stops, departure and zone as stored.
type trip struct {
	StartsAt time.Time          `json:"starts_at"`
	TimeZone string             `json:"time_zone"`
	Stops    []catalog.TripStop `json:"stops"`
}

type gaArea struct {
	Name       string `json:"name"`
	Capacity   int    `json:"capacity"`
	PriceMinor int64  `json:"price_minor"`
}

func layoutOf(m booking.SeatMap) layout {
	l := layout{Currency: m.Currency, Sections: m.Sections, SeatCount: m.SeatCount, Decks: m.Decks, Features: m.Features, Fares: m.Fares}
	if m.Legs > 1 {
		l.Legs = m.Legs
	}
	if len(m.Trip.Stops) > 0 {
		l.Trip = &trip{StartsAt: m.Trip.StartsAt, TimeZone: m.Trip.TimeZone, Stops: m.Trip.Stops}
	}
	for _, a := range m.GAAreas {
		l.GA = append(l.GA, gaArea{Name: a.Name, Capacity: a.Capacity, PriceMinor: a.PriceMinor})
	}
	return l
}

func (l layout) seatMap(showID int64) booking.SeatMap {
	legs := max(l.Legs, 1)
	m := booking.SeatMap{ShowID: showID, Currency: l.Currency, Sections: l.Sections, SeatCount: l.SeatCount,
		States: make([]byte, legs*((l.SeatCount+3)/4)), Legs: l.Legs, Fares: l.Fares, Decks: l.Decks, Features: l.Features}
	if l.Trip != nil {
		m.Trip = catalog.Trip{StartsAt: l.Trip.StartsAt, TimeZone: l.Trip.TimeZone, Stops: l.Trip.Stops}
	}
	for _, a := range l.GA {
		m.GAAreas = append(m.GAAreas, booking.MapArea{Name: a.Name, Capacity: a.Capacity, PriceMinor: a.PriceMinor})
	}
	return m
}
