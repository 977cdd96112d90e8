// Package miniobin finds the MinIO server binary, built once from source
// into a cache directory (scripts/ensure-deps.sh, or Build). MinIO is AGPL:
// Seatghor only ever runs it as a process of its own and never links it
// (decision 0041); this package imports nothing of it.
package miniobin

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// Version is the MinIO source that is built (`go install
// github.com/minio/minio@Version`); its tagged releases do not build with
// `go install`, this pseudo-version does. scripts/ensure-deps.sh builds the
// same one into the same place.
const Version = "v0.0.0-20260212201848-7aac2a2c5b7c"

// ErrNotBuilt means the cache holds no minio binary yet.
var ErrNotBuilt = errors.New("the MinIO server is not built (make deps builds it, a few minutes once)")

// Find returns the cached minio binary's path, or ErrNotBuilt.
func Find() (string, error) {
	dir, err := CacheDir()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "minio")
	if _, err := os.Stat(bin); errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%w: no %s", ErrNotBuilt, bin)
	} else if err != nil {
		return "", err
	}
	return bin, nil
}

// Build returns the cached binary, building it first when missing (a few
// minutes, once per machine; several processes may ask at once: one builds).
func Build(ctx context.Context) (string, error) {
	if bin, err := Find(); err == nil || !errors.Is(err, ErrNotBuilt) {
		return bin, err
	}
	dir, err := CacheDir()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	lock, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return "", err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", err
	}
	if bin, err := Find(); err == nil {
		return bin, nil // another process built it meanwhile
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "install", "github.com/minio/minio@"+Version)
	cmd.Env = append(os.Environ(), "GOBIN="+dir, "GOFLAGS=-mod=mod", "GOWORK=off")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build minio (go install github.com/minio/minio@%s): %v\n%s", Version, err, out)
	}
	return Find()
}

// CacheDir is where the minio binary is built: $SEATGHOR_MINIO_DIR, else
// <user cache>/seatghor/minio-<Version>.
func CacheDir() (string, error) {
	if d := os.Getenv("SEATGHOR_MINIO_DIR"); d != "" {
		return d, nil
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("miniobin: no cache directory: %w", err)
	}
	return filepath.Join(base, "seatghor", "minio-"+Version), nil
}
