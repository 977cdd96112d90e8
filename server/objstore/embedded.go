package objstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3bolt"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	bolt "go.etcd.io/bbolt"
)

// Embedded is an in-process S3-compatible server (gofakes3) on a localhost
// port: dev mode's default object store (docs/DESIGN.md, "Dev mode"). The
// platform talks to it through minio-go exactly as to MinIO; it does not
// check signatures, so any keys work. Not for production.
type Embedded struct {
	srv      *http.Server
	addr     string
	closeDB  func() error
	serveErr chan error
}

// StartEmbedded starts the embedded server. With dir set, objects persist
// in dir/objects.db (so dev keeps its PDFs across restarts); with dir empty
// they live in memory.
func StartEmbedded(dir string, log *slog.Logger) (*Embedded, error) {
	var (
		backend gofakes3.Backend
		closeDB = func() error { return nil }
	)
	if dir == "" {
		backend = s3mem.New()
	} else {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("embedded S3: %w", err)
		}
		db, err := bolt.Open(filepath.Join(dir, "objects.db"), 0o600, &bolt.Options{Timeout: 2 * time.Second})
		if err != nil {
			return nil, fmt.Errorf("embedded S3: %w", err)
		}
		backend, closeDB = s3bolt.New(db), db.Close
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		_ = closeDB()
		return nil, fmt.Errorf("embedded S3: %w", err)
	}
	fake := gofakes3.New(backend, gofakes3.WithAutoBucket(true), gofakes3.WithLogger(quiet{}))
	e := &Embedded{
		srv:      &http.Server{Handler: fake.Server(), ReadHeaderTimeout: 10 * time.Second},
		addr:     ln.Addr().String(),
		closeDB:  closeDB,
		serveErr: make(chan error, 1),
	}
	go func() { e.serveErr <- e.srv.Serve(ln) }()
	if log != nil {
		log.Info("embedded S3 server running", "addr", e.addr, "persistent", dir != "")
	}
	return e, nil
}

// Config returns a configuration of bucket on the embedded server.
func (e *Embedded) Config(bucket string) Config {
	return Config{Endpoint: "http://" + e.addr, AccessKey: "seatghor", SecretKey: "seatghor-dev", Bucket: bucket}
}

// Close stops the server.
func (e *Embedded) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := e.srv.Shutdown(ctx)
	if serveErr := <-e.serveErr; !errors.Is(serveErr, http.ErrServerClosed) {
		err = errors.Join(err, serveErr)
	}
	return errors.Join(err, e.closeDB())
}

// quiet drops gofakes3's own request log.
type quiet struct{}

func (quiet) Print(gofakes3.LogLevel, ...any) {}
