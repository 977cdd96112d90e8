package waitingroom

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seatghor/seatghor/server/fault"
)

// keys are one sale's Redis keys. The {…} hash tag keeps them in one slot,
// so the scripts work on a Redis Cluster too.
type keys struct {
	live    string // hash: the admission number, rate, flags and metrics
	lottery string // sorted set: pre-opening joiners by a random score
	late    string // hash: subject -> arrival number after the opening
	adm     string // hash: subject -> when the place was first seen admitted (ms)
	stats   string // + unix second: hash of CreateHold latency buckets
}

func (s *Service) keys(saleID int64) keys {
	b := fmt.Sprintf("%swr{%d}:", s.prefix, saleID)
	return keys{live: b + "live", lottery: b + "lottery", late: b + "late", adm: b + "admitted", stats: b + "stats:"}
}

// visitScript is Join and GetStatus in one atomic step.
//
// the lottery: a subject who joins before the opening gets a random
// score in the sorted set; at the opening instant (the first visit or tick at
// or after it) the set is frozen (drawn) and its size n0 recorded, and a
// lottery place is the rank by score, 1..n0. Nobody can see a rank before the
// draw, and the score is drawn by the server, so the order is a uniform
// shuffle unrelated to arrival. Whoever joins after the draw takes the next
// arrival number k and the place n0+k: the end of the line, in arrival order.
// A subject is looked up before anything is added, so joining twice never
// gives a second place; only an admission that lapsed (R-9.4: 15 minutes)
// sends its owner to the end again on a new Join.
//
// When a place is at or below the admission number X and was not admitted
// before, the admission starts now (its admitted token lasts from here).
//
// The opening is the room's in Redis (`opens`, written by the admitter and
// by an operator's move) when known, else the caller's (from the catalog or
// the token): a moved opening is never drawn at the old time.
//
// KEYS: live lottery late admitted. ARGV: subject now_ms opens_ms join(0|1)
// score admitted_ttl_ms key_ttl_s.
// Returns: place (-1 not in line, 0 before the draw), x, rate, paused,
// soldout, n0, late, admitted_at_ms (-1 none), drawn(0|1), ends_ms, opens_ms.
var visitScript = redis.NewScript(`
local live, lottery, late, adm = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local sub, now, opens, join = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4] == '1'
local score, admttl, keyttl = ARGV[5], tonumber(ARGV[6]), tonumber(ARGV[7])
opens = tonumber(redis.call('HGET', live, 'opens') or opens)
local drawn = redis.call('HGET', live, 'drawn')
if not drawn and now >= opens then
  redis.call('HSET', live, 'drawn', now, 'n0', redis.call('ZCARD', lottery))
  drawn = now
end
local n0 = tonumber(redis.call('HGET', live, 'n0') or '0')
local place = -1
local at = redis.call('HGET', adm, sub)
if join and at and tonumber(at) + admttl <= now then
  redis.call('HDEL', adm, sub)
  at = false
  local k = redis.call('HINCRBY', live, 'late', 1)
  redis.call('HSET', late, sub, k)
  place = n0 + k
else
  local k = redis.call('HGET', late, sub)
  if k then
    place = n0 + tonumber(k)
  elseif redis.call('ZSCORE', lottery, sub) then
    if drawn then place = redis.call('ZRANK', lottery, sub) + 1 else place = 0 end
  elseif join then
    if drawn then
      k = redis.call('HINCRBY', live, 'late', 1)
      redis.call('HSET', late, sub, k)
      place = n0 + k
    else
      redis.call('ZADD', lottery, 'NX', score, sub)
      place = 0
    end
  end
end
if join then
  for _, key in ipairs(KEYS) do redis.call('EXPIRE', key, keyttl) end
end
local f = redis.call('HMGET', live, 'x', 'eff', 'paused', 'soldout', 'late', 'ends')
if place > 0 and not at and place <= math.floor(tonumber(f[1] or '0')) then
  at = now
  redis.call('HSET', adm, sub, now)
end
local d = 0
if drawn then d = 1 end
return {place, f[1] or '0', f[2] or '0', f[3] or '0', f[4] or '0', n0, f[5] or '0', at or -1, d, f[6] or '0', opens}
`)

// drawScript draws the lottery when the opening has come (see visitScript).
// KEYS: live lottery. ARGV: now_ms opens_ms.
var drawScript = redis.NewScript(`
if not redis.call('HGET', KEYS[1], 'drawn') and tonumber(ARGV[1]) >= tonumber(ARGV[2]) then
  redis.call('HSET', KEYS[1], 'drawn', ARGV[1], 'n0', redis.call('ZCARD', KEYS[2]))
end
return 0
`)

// openingScript records a moved opening unless the lottery is drawn.
// KEYS: live. ARGV: opens_ms.
var openingScript = redis.NewScript(`
if not redis.call('HGET', KEYS[1], 'drawn') then
  redis.call('HSET', KEYS[1], 'opens', ARGV[1])
end
return 0
`)

// visit is what visitScript answers.
type visit struct {
	place      int64
	x          float64
	rate       float64
	paused     bool
	soldOut    bool
	n0, late   int64
	admittedAt int64 // ms; -1 none
	drawn      bool
	endsAt     int64 // ms; 0 unknown (no tick yet)
	opensAt    int64 // ms
}

func (s *Service) runVisit(ctx context.Context, saleID int64, subject string, now time.Time, opensAt time.Time,
	join bool, admittedTTL time.Duration, keyTTL time.Duration) (visit, error) {
	k := s.keys(saleID)
	j := "0"
	if join {
		j = "1"
	}
	res, err := visitScript.Run(ctx, s.rdb, []string{k.live, k.lottery, k.late, k.adm},
		subject, now.UnixMilli(), opensAt.UnixMilli(), j, lotteryScore(), admittedTTL.Milliseconds(),
		max(int64(keyTTL.Seconds()), 60)).Slice()
	if err != nil {
		return visit{}, unavailable(err)
	}
	if len(res) != 11 {
		return visit{}, fmt.Errorf("waiting room script answered %d values", len(res))
	}
	return visit{
		place: toInt(res[0]), x: toFloat(res[1]), rate: toFloat(res[2]), paused: toInt(res[3]) == 1,
		soldOut: toInt(res[4]) == 1, n0: toInt(res[5]), late: toInt(res[6]), admittedAt: toInt(res[7]),
		drawn: toInt(res[8]) == 1, endsAt: toInt(res[9]), opensAt: toInt(res[10]),
	}, nil
}

// lotteryScore is a uniform random number below 2^53 (exact as a Redis
// sorted-set score), from crypto/rand: nobody can predict or steer it.
func lotteryScore() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return strconv.FormatUint(binary.BigEndian.Uint64(b[:])>>11, 10)
}

func randomID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// unavailable answers a Redis failure; the cause stays in the error chain
// for the log, never in the message.
func unavailable(err error) error {
	return fmt.Errorf("%w (%w)", &fault.Error{Reason: fault.QueueUnavailable,
		Message: "the waiting room cannot be reached; try again shortly"}, err)
}

func toInt(v any) int64 {
	switch t := v.(type) {
	case int64:
		return t
	case string:
		if n, err := strconv.ParseInt(t, 10, 64); err == nil {
			return n
		}
		return int64(toFloat(t))
	}
	return 0
}

func toFloat(v any) float64 {
	switch t := v.(type) {
	case int64:
		return float64(t)
	case string:
		f, err := strconv.ParseFloat(t, 64)
		if err == nil && !math.IsNaN(f) {
			return f
		}
	}
	return 0
}
