// Package pgcluster starts a throwaway PostgreSQL cluster from the installed
// binaries, for `seatghor dev` and for tests when no database server is
// reachable.
//
// The cluster lives in one directory the caller names, so a second start on
// the same directory finds the data of the first (dev mode keeps its state
// across restarts). It listens on 127.0.0.1 only and trusts every local
// connection: it is for a laptop and a test run, never for production.
package pgcluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/seatghor/seatghor/internal/devenv/daemon"
)

// Config describes where and how a cluster runs.
type Config struct {
	// Dir holds the cluster: data in Dir/data, the unix socket and the server
	// log in Dir/run. It is created if missing and reused if it already holds
	// a cluster, so `seatghor dev --data-dir DIR` keeps its state.
	Dir string
	// Port is the TCP port on 127.0.0.1; 0 picks a free one.
	Port int
	// Fast turns off fsync and full-page writes. For tests only: a crash of
	// the machine may corrupt the cluster, which a test run never reuses.
	// It also acknowledges commits before their log is written
	// (synchronous_commit off), unless KeepCommits.
	Fast bool
	// KeepCommits, with Fast, writes each commit's log to the operating
	// system before the commit is acknowledged (not to the disk: fsync
	// stays off), so a crash of the server process, not of the machine,
	// loses no acknowledged commit. `seatghor cluster up` sets it:
	// `seatghor chaos` crashes its servers.
	KeepCommits bool
	// BinDir holds initdb and pg_ctl. "" means the newest
	// /usr/lib/postgresql/*/bin (Debian, Ubuntu), else the ones on $PATH.
	BinDir string
	// Log receives what the cluster does; nil discards it.
	Log *slog.Logger
}

// Cluster is a running PostgreSQL server started by Start.
type Cluster struct {
	dir    string // absolute Config.Dir
	data   string
	run    string
	bin    string
	port   int
	log    *slog.Logger
	runAs  *syscall.Credential // nil when the binaries run as the current user
	mu     sync.Mutex
	closed bool
}

// initDone marks a data directory whose initdb finished; without it, a
// crash during initdb would leave a half-made cluster that fails to start
// (or starts without its databases) forever.
const initDone = "initdb.done"

// confFile holds the settings of one start (port, socket directory); it is
// rewritten on every start and included from postgresql.conf, so no path
// passes through the shell that pg_ctl uses to launch the server.
const confFile = "seatghor.conf"

// Start initializes the cluster in cfg.Dir if it holds none yet and starts
// the server; it returns once the server accepts connections.
func Start(ctx context.Context, cfg Config) (*Cluster, error) {
	c, err := open(cfg.Dir, cfg.BinDir, cfg.Log)
	if err != nil {
		return nil, err
	}
	if cfg.Port < 0 || cfg.Port > 65535 {
		return nil, fmt.Errorf("pgcluster: port %d out of range", cfg.Port)
	}
	if err := c.prepareDirs(); err != nil {
		return nil, err
	}
	if err := c.initdb(ctx, cfg.Fast); err != nil {
		return nil, err
	}
	if err := c.clearStale(ctx); err != nil {
		return nil, err
	}
	// A port picked by us may be taken by someone else before the server
	// binds it; then pick again. A port the caller chose is tried once.
	for attempt := 1; ; attempt++ {
		c.port = cfg.Port
		if c.port == 0 {
			if c.port, err = freePort(); err != nil {
				return nil, err
			}
		}
		err = c.start(ctx, cfg.Fast, cfg.KeepCommits)
		if err == nil {
			c.log.Info("postgres started", "dir", c.dir, "port", c.port, "url", c.URL("postgres"))
			return c, nil
		}
		if cfg.Port != 0 || attempt == 3 || !strings.Contains(err.Error(), "Address already in use") {
			return nil, err
		}
		c.log.Warn("postgres port taken, picking another", "port", c.port)
	}
}

// StopDir stops a server left running in dir, e.g. by a test binary that
// was killed before it could stop its cluster. It is a no-op when none runs.
func StopDir(ctx context.Context, dir string, log *slog.Logger) error {
	c, err := open(dir, "", log)
	if err != nil {
		return err
	}
	return c.clearStale(ctx)
}

// Crash stops the server running in dir at once (pg_ctl stop -m
// immediate): sessions are cut, nothing is flushed and no checkpoint is
// written, as when its machine loses power but its disk keeps what was
// written; the next Start on dir recovers from the write-ahead log. It is
// how `seatghor chaos` takes a shard server away; a no-op when none runs.
func Crash(ctx context.Context, dir string, log *slog.Logger) error {
	c, err := open(dir, "", log)
	if err != nil {
		return err
	}
	if !fileExists(filepath.Join(c.data, "postmaster.pid")) {
		return nil
	}
	if _, err := c.pgCtl(ctx, "stop", "-D", c.data, "-m", "immediate", "-w", "-t", "60", "-s"); err != nil {
		return err
	}
	c.log.Warn("postgres crashed on purpose (immediate stop)", "dir", c.dir)
	return nil
}

func open(dir, binDir string, log *slog.Logger) (*Cluster, error) {
	if dir == "" {
		return nil, errors.New("pgcluster: Config.Dir is required")
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("pgcluster: %w", err)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if binDir == "" {
		if binDir, err = findBinDir(); err != nil {
			return nil, err
		}
	}
	c := &Cluster{
		dir:  dir,
		data: filepath.Join(dir, "data"),
		run:  filepath.Join(dir, "run"),
		bin:  binDir,
		log:  log,
	}
	// initdb and postgres refuse to run as root; as root we run them as the
	// postgres user that the distribution packages create.
	if os.Geteuid() == 0 {
		if c.runAs, err = credential("postgres"); err != nil {
			return nil, fmt.Errorf("pgcluster: running as root needs an OS user to run postgres as: %w", err)
		}
	}
	return c, nil
}

// URL returns the address of database on the cluster, for pgx.
func (c *Cluster) URL(database string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", c.port, database)
}

// Port returns the TCP port the server listens on.
func (c *Cluster) Port() int { return c.port }

// CreateDatabase creates database name unless it exists already.
func (c *Cluster) CreateDatabase(ctx context.Context, name string) error {
	conn, err := pgx.Connect(ctx, c.URL("postgres"))
	if err != nil {
		return fmt.Errorf("create database %s: %w", name, err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "42P04" { // duplicate_database
		return nil
	}
	if err != nil {
		return fmt.Errorf("create database %s: %w", name, err)
	}
	return nil
}

// Stop shuts the server down ("fast": running sessions are ended, data is
// flushed) and waits until it is gone. Stopping twice is fine. ctx bounds
// the wait: at shutdown pass a live one, not the context that was cancelled.
func (c *Cluster) Stop(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	if !fileExists(filepath.Join(c.data, "postmaster.pid")) {
		c.closed = true // someone else stopped it (or a later Start on Dir did)
		return nil
	}
	if _, err := c.pgCtl(ctx, "stop", "-D", c.data, "-m", "fast", "-w", "-t", "120", "-s"); err != nil {
		return err
	}
	c.closed = true
	c.log.Info("postgres stopped", "dir", c.dir)
	return nil
}

// prepareDirs creates the directories and, as root, hands them to the
// postgres user and makes the way to them passable for it.
func (c *Cluster) prepareDirs() error {
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return fmt.Errorf("pgcluster: %w", err)
	}
	// postgres insists on a data directory only its owner can read.
	if err := os.MkdirAll(c.data, 0o700); err != nil {
		return fmt.Errorf("pgcluster: %w", err)
	}
	if err := os.MkdirAll(c.run, 0o755); err != nil {
		return fmt.Errorf("pgcluster: %w", err)
	}
	if c.runAs == nil {
		return nil
	}
	for _, d := range []string{c.data, c.run} {
		if err := chownTree(d, int(c.runAs.Uid), int(c.runAs.Gid)); err != nil {
			return fmt.Errorf("pgcluster: %w", err)
		}
	}
	// The postgres user must be able to walk to Dir: a t.TempDir() or a
	// directory under /root is private to root. Adding only the search bit
	// lets it pass without letting it list anything.
	for d := c.dir; ; d = filepath.Dir(d) {
		if err := allowSearch(d, c.runAs.Uid); err != nil {
			return fmt.Errorf("pgcluster: %w", err)
		}
		if d == filepath.Dir(d) {
			return nil
		}
	}
}

// initdb creates the cluster unless Dir already holds a finished one.
func (c *Cluster) initdb(ctx context.Context, fast bool) error {
	done := filepath.Join(c.dir, initDone)
	if fileExists(done) && fileExists(filepath.Join(c.data, "PG_VERSION")) {
		return nil
	}
	entries, err := os.ReadDir(c.data)
	if err != nil {
		return fmt.Errorf("pgcluster: %w", err)
	}
	if len(entries) > 0 {
		c.log.Warn("removing a half-made cluster (initdb did not finish)", "dir", c.data)
		for _, e := range entries {
			if err := os.RemoveAll(filepath.Join(c.data, e.Name())); err != nil {
				return fmt.Errorf("pgcluster: %w", err)
			}
		}
	}
	args := []string{"-D", c.data, "-U", "postgres", "--auth=trust", "--encoding=UTF8", "--locale=C"}
	if fast {
		args = append(args, "--no-sync")
	}
	c.log.Info("initializing postgres cluster", "dir", c.data, "bin", c.bin)
	if _, err := c.exec(ctx, "initdb", args...); err != nil {
		return err
	}
	conf := filepath.Join(c.data, "postgresql.conf")
	f, err := os.OpenFile(conf, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("pgcluster: %w", err)
	}
	_, err = fmt.Fprintf(f, "\n# Written by pgcluster on every start.\ninclude_if_exists = '%s'\n", confFile)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("pgcluster: %w", err)
	}
	if err := os.WriteFile(done, []byte(time.Now().UTC().Format(time.RFC3339)+"\n"), 0o644); err != nil {
		return fmt.Errorf("pgcluster: %w", err)
	}
	return nil
}

// clearStale deals with what a killed earlier run left behind. A server
// that still runs on our data (its owner got SIGKILL, the postmaster lives
// on) is stopped so this start gets our settings. A postmaster.pid whose
// process is gone, or whose PID now belongs to some other program, is
// removed: postgres would refuse to start if the PID is alive, and pg_ctl
// would signal that unrelated process.
func (c *Cluster) clearStale(ctx context.Context) error {
	pidFile := filepath.Join(c.data, "postmaster.pid")
	b, err := os.ReadFile(pidFile)
	if errors.Is(err, fs.ErrNotExist) {
		return c.clearRunDir()
	}
	if err != nil {
		return fmt.Errorf("pgcluster: %w", err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]))
	if pid > 0 && runsOn(pid, c.data) {
		c.log.Warn("stopping a postgres left running by an earlier run", "dir", c.data, "pid", pid)
		if _, err := c.pgCtl(ctx, "stop", "-D", c.data, "-m", "fast", "-w", "-t", "120", "-s"); err != nil {
			return err
		}
		return c.clearRunDir()
	}
	c.log.Warn("removing a stale postmaster.pid", "dir", c.data, "pid", pid)
	if err := os.Remove(pidFile); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("pgcluster: %w", err)
	}
	return c.clearRunDir()
}

// clearRunDir removes socket and lock files of a server that no longer
// runs; a socket lock naming a reused PID would stop the new server.
func (c *Cluster) clearRunDir() error {
	matches, err := filepath.Glob(filepath.Join(c.run, ".s.PGSQL.*"))
	if err != nil {
		return fmt.Errorf("pgcluster: %w", err)
	}
	for _, m := range matches {
		if err := os.Remove(m); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("pgcluster: %w", err)
		}
	}
	return nil
}

// start writes this start's settings and runs pg_ctl start.
func (c *Cluster) start(ctx context.Context, fast, keepCommits bool) error {
	var conf strings.Builder
	fmt.Fprintf(&conf, "listen_addresses = '127.0.0.1'\nport = %d\n", c.port)
	// The tests run hundreds of concurrent requests over several databases.
	conf.WriteString("max_connections = 300\n")
	// A unix socket path is limited to about 107 bytes; a deep Dir would make
	// the server fail. Everything here connects over TCP, so then go without.
	if len(c.run)+len("/.s.PGSQL.65535") < 100 {
		fmt.Fprintf(&conf, "unix_socket_directories = '%s'\n", strings.ReplaceAll(c.run, "'", "''"))
	} else {
		c.log.Warn("run directory too long for a unix socket; TCP only", "dir", c.run)
		conf.WriteString("unix_socket_directories = ''\n")
	}
	if fast {
		conf.WriteString("fsync = off\nfull_page_writes = off\n")
		if !keepCommits {
			conf.WriteString("synchronous_commit = off\n")
		}
	}
	path := filepath.Join(c.data, confFile)
	if err := os.WriteFile(path, []byte(conf.String()), 0o600); err != nil {
		return fmt.Errorf("pgcluster: %w", err)
	}
	if c.runAs != nil {
		if err := os.Chown(path, int(c.runAs.Uid), int(c.runAs.Gid)); err != nil {
			return fmt.Errorf("pgcluster: %w", err)
		}
	}
	logFile := filepath.Join(c.run, "postgres.log")
	before := fileSize(logFile)
	// -l sends the server's output to a file: without it the postmaster
	// would inherit pg_ctl's stdout and keep our pipe open forever.
	if _, err := c.pgCtl(ctx, "start", "-D", c.data, "-l", logFile, "-w", "-t", "120", "-s"); err != nil {
		return fmt.Errorf("%w\nserver log:\n%s", err, tailFrom(logFile, before))
	}
	return nil
}

func (c *Cluster) pgCtl(ctx context.Context, args ...string) ([]byte, error) {
	return c.exec(ctx, "pg_ctl", args...)
}

// exec runs one of the PostgreSQL binaries, as the postgres user when we
// are root, and wraps its stderr into the error.
func (c *Cluster) exec(ctx context.Context, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(c.bin, name), args...)
	cmd.Dir = c.dir
	// PG* variables (PGPORT, PGDATA, …) of the caller must not steer the
	// cluster; LC_* are pinned by --locale.
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "PG") })
	if c.runAs != nil {
		// Same effect as `runuser -u postgres --`, without depending on it.
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.runAs}
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = strings.TrimSpace(stdout.String())
		}
		return nil, fmt.Errorf("pgcluster: %s %s: %w: %s", name, strings.Join(args, " "), err, msg)
	}
	return stdout.Bytes(), nil
}

// BinDir returns the directory of the PostgreSQL binaries a Cluster uses
// when its Config names none (pg_dump and pg_restore are there too).
func BinDir() (string, error) { return findBinDir() }

// findBinDir returns the newest /usr/lib/postgresql/<major>/bin, else the
// directory of pg_ctl on $PATH.
func findBinDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	best, bestVer := "", -1.0
	for _, d := range dirs {
		ver, err := strconv.ParseFloat(filepath.Base(filepath.Dir(d)), 64)
		if err == nil && ver > bestVer && fileExists(filepath.Join(d, "pg_ctl")) && fileExists(filepath.Join(d, "initdb")) {
			best, bestVer = d, ver
		}
	}
	if best != "" {
		return best, nil
	}
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", errors.New("pgcluster: no PostgreSQL binaries found in /usr/lib/postgresql/*/bin or on $PATH (install the postgresql package)")
}

func credential(name string) (*syscall.Credential, error) {
	u, err := user.Lookup(name)
	if err != nil {
		return nil, err
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, err
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, err
	}
	cred := &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}
	if ids, err := u.GroupIds(); err == nil {
		for _, id := range ids {
			if g, err := strconv.ParseUint(id, 10, 32); err == nil {
				cred.Groups = append(cred.Groups, uint32(g))
			}
		}
	}
	return cred, nil
}

func chownTree(root string, uid, gid int) error {
	info, err := os.Stat(root)
	if err != nil {
		return err
	}
	if st, ok := info.Sys().(*syscall.Stat_t); ok && int(st.Uid) == uid && int(st.Gid) == gid {
		return nil // already handed over on an earlier start
	}
	return filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, gid)
	})
}

// allowSearch makes sure uid may pass through directory d.
func allowSearch(d string, uid uint32) error {
	info, err := os.Stat(d)
	if err != nil {
		return err
	}
	mode := info.Mode().Perm()
	if mode&0o001 != 0 {
		return nil
	}
	if st, ok := info.Sys().(*syscall.Stat_t); ok && st.Uid == uid && mode&0o100 != 0 {
		return nil
	}
	return os.Chmod(d, info.Mode()|0o001)
}

// runsOn tells whether pid is a live postgres process working in data
// (the postmaster and its backends chdir there). A PID from a stale
// postmaster.pid may since belong to anything, even another cluster's
// backend, which must not receive our stop signal. Without /proc (not
// Linux) a live PID is trusted to be ours.
func runsOn(pid int, data string) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	if !fileExists("/proc/self") {
		return true
	}
	comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	if err != nil {
		return false
	}
	if name := strings.TrimSpace(string(comm)); name != "postgres" && name != "postmaster" {
		return false
	}
	cwd, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid))
	if err != nil {
		return false
	}
	want, err := filepath.EvalSymlinks(data)
	return err == nil && cwd == want
}

// freePort picks a port outside the kernel's ephemeral range (daemon.FreePorts says why).
func freePort() (int, error) {
	ports, err := daemon.FreePorts(1)
	if err != nil {
		return 0, err
	}
	return ports[0], nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func fileSize(p string) int64 {
	info, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return info.Size()
}

// tailFrom returns what was appended to the log since offset, at most the
// last 4 KiB: the reason a start failed.
func tailFrom(p string, offset int64) string {
	b, err := os.ReadFile(p)
	if err != nil || int64(len(b)) < offset {
		return "(no server log)"
	}
	b = b[offset:]
	if len(b) > 4096 {
		b = b[len(b)-4096:]
	}
	return strings.TrimSpace(string(b))
}
