package loadtest

import (
	"context"
	"fmt"
	"maps"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// CPU is where the CPU time of a phase went, in microseconds per call:
// the server process (its process_cpu_seconds_total; 0 for the baselines,
// which do not use it), PostgreSQL's backends of the run's shard databases,
// summed over every database and server given (read from /proc, so only
// for the PostgreSQL servers that run on this machine; else 0), and this
// tool. On a machine whose cores are the limit, a ratio of two
// phases is about the inverse ratio of their sums.
type CPU struct {
	ServerUS   float64 `json:"server_us"`
	DatabaseUS float64 `json:"database_us"`
	ToolUS     float64 `json:"tool_us"`
}

// cpuMark is the CPU seconds used so far by the three; the database's per
// backend process.
type cpuMark struct {
	server, tool float64
	database     map[int]float64
}

// cpuNow reads the marks: the server's from m (0 without it), the
// backends' of every database in dbs (a process id is one backend whatever
// the server, as all run on this machine).
func cpuNow(ctx context.Context, dbs []*pgxpool.Pool, m *metrics) cpuMark {
	var c cpuMark
	if m != nil {
		c.server = m.cpu
	}
	c.database = map[int]float64{}
	for _, db := range dbs {
		maps.Copy(c.database, backendsCPU(ctx, db))
	}
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		c.tool = time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
	}
	return c
}

// per is the CPU between c and later, per call.
func (c cpuMark) per(later cpuMark, calls int) CPU {
	if calls <= 0 {
		return CPU{}
	}
	us := func(a, b float64) float64 { return max(b-a, 0) * 1e6 / float64(calls) }
	db := 0.0
	for pid, t := range later.database {
		db += t - c.database[pid] // a backend that started since counts whole
	}
	return CPU{ServerUS: us(c.server, later.server), DatabaseUS: us(0, db), ToolUS: us(c.tool, later.tool)}
}

// backendsCPU sums the CPU seconds of the database's backends from
// /proc/<pid>/stat (utime and stime, in clock ticks of 1/100 s, Linux's
// USER_HZ). Backends that ended since are not counted: the pools keep
// theirs for the run. Empty when /proc does not have them (another
// machine).
func backendsCPU(ctx context.Context, db *pgxpool.Pool) map[int]float64 {
	rows, err := db.Query(ctx, `SELECT pid FROM pg_stat_activity WHERE datname = current_database()`)
	if err != nil {
		return nil
	}
	var pids []int
	for rows.Next() {
		var pid int
		if rows.Scan(&pid) == nil {
			pids = append(pids, pid)
		}
	}
	rows.Close()
	out := map[int]float64{}
	for _, pid := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		// The fields after the command's closing parenthesis; utime and
		// stime are the 14th and 15th of the line.
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) < 13 {
			continue
		}
		u, _ := strconv.ParseFloat(f[11], 64)
		s, _ := strconv.ParseFloat(f[12], 64)
		out[pid] = (u + s) / 100
	}
	return out
}

// errorCount is the calls that failed.
func (s RPCStats) errorCount() int {
	n := 0
	for _, e := range s.Errors {
		n += e
	}
	return n
}
