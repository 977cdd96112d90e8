package ratelimit

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// gcraScript checks a call against several GCRA limits in one round trip
// (decision 0225): KEYS[i] is the count of
// ARGV[3i-2..3i] (burst, rate, period in seconds). The limits are checked
// in order, as one EVALSHA each did before: each allowed one is counted,
// and the first refused one stops the script (the later ones are neither
// checked nor counted) and answers its position and how long to wait, in
// seconds. {0, ""} means every limit allowed the call. The arithmetic is
// github.com/go-redis/redis_rate's (GCRA after Pavel Pravosud's
// redis-gcra, MIT; times from Redis's clock relative to 2017).
const gcraScript = `
redis.replicate_commands()
local t = redis.call("TIME")
local now = (t[1] - 1483228800) + (t[2] / 1000000)
for i, key in ipairs(KEYS) do
  local burst = tonumber(ARGV[3*i-2])
  local rate = tonumber(ARGV[3*i-1])
  local period = tonumber(ARGV[3*i])
  local emission = period / rate
  local tat = tonumber(redis.call("GET", key) or now)
  tat = math.max(tat, now)
  local new_tat = tat + emission
  local diff = now - (new_tat - emission * burst)
  if diff < 0 then
    return {i, tostring(-diff)}
  end
  local reset_after = new_tat - now
  if reset_after > 0 then
    redis.call("SET", key, new_tat, "EX", math.ceil(reset_after))
  end
end
return {0, ""}
`

// counted is one limit to check, with the key of its count.
type counted struct {
	rule rule
	key  string
}

// allow checks cs in one round trip. refused is the position in cs of the
// first limit that refused the call (with how long to wait), or -1. All of
// cs's keys must hash to one Redis Cluster slot (countKey).
func allow(ctx context.Context, rdb redis.Scripter, script *redis.Script, cs []counted) (refused int, wait time.Duration, err error) {
	keys := make([]string, len(cs))
	args := make([]any, 0, 3*len(cs))
	for i, c := range cs {
		keys[i] = c.key
		args = append(args, c.rule.limit.Burst, c.rule.limit.Rate, c.rule.limit.Per.Seconds())
	}
	v, err := script.Run(ctx, rdb, keys, args...).Slice()
	if err != nil {
		return -1, 0, err
	}
	if len(v) != 2 {
		return -1, 0, fmt.Errorf("rate limit script: %d values, want 2", len(v))
	}
	pos, ok := v[0].(int64)
	if !ok || pos < 0 || int(pos) > len(cs) {
		return -1, 0, fmt.Errorf("rate limit script: position %v", v[0])
	}
	if pos == 0 {
		return -1, 0, nil
	}
	s, _ := v[1].(string)
	secs, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return -1, 0, fmt.Errorf("rate limit script: wait %q: %w", s, err)
	}
	return int(pos) - 1, time.Duration(secs * float64(time.Second)), nil
}
