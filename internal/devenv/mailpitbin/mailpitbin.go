// Package mailpitbin finds, or builds once, the mailpit binary: the SMTP
// server with a web inbox that `seatghor dev` and the tests send e-mail to
// (github.com/axllent/mailpit, MIT; decision 0433). It runs as its own
// process, never linked; scripts/ensure-deps.sh installs it with go install
// into the cache directory this package looks in.
package mailpitbin

import (
	"cmp"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
)

// Version is the pinned mailpit (scripts/ensure-deps.sh installs the same).
const Version = "v1.33.1"

// Dir is where the binary is installed: $SEATGHOR_MAILPIT_DIR, else
// ~/.cache/seatghor/mailpit-<Version>.
func Dir() string {
	if d := os.Getenv("SEATGHOR_MAILPIT_DIR"); d != "" {
		return d
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	return filepath.Join(cache, "seatghor", "mailpit-"+Version)
}

var built struct {
	once sync.Once
	path string
	err  error
}

// Path returns the binary: $SEATGHOR_MAILPIT_BIN, the cached one, or one
// built now with go install into the cache (a minute, once).
func Path() (string, error) {
	if p := os.Getenv("SEATGHOR_MAILPIT_BIN"); p != "" {
		return p, nil
	}
	built.once.Do(func() {
		dir := Dir()
		p := filepath.Join(dir, "mailpit")
		if _, err := os.Stat(p); err == nil {
			built.path = p
			return
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			built.err = err
			return
		}
		cmd := exec.Command("go", "install", "github.com/axllent/mailpit@"+Version)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOBIN="+dir, "GOFLAGS=-mod=mod", "GOWORK=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			built.err = fmt.Errorf("go install mailpit@%s: %w: %s", Version, err, out)
			return
		}
		built.path = p
	})
	return built.path, built.err
}

// Args are the arguments that run mailpit with SMTP on smtpAddr, its web
// inbox and API on httpAddr and its database in dir.
func Args(smtpAddr, httpAddr, dir string) []string {
	return []string{"--smtp", smtpAddr, "--listen", httpAddr, "--database", filepath.Join(cmp.Or(dir, "."), "mailpit.db"),
		"--quiet", "--disable-version-check", "--smtp-auth-accept-any", "--smtp-auth-allow-insecure"}
}
