package objstore_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seatghor/seatghor/internal/testkit/miniotest"
	"github.com/seatghor/seatghor/server/objstore"
)

func TestMain(m *testing.M) {
	code := m.Run()
	miniotest.Cleanup()
	os.Exit(code)
}

// TestContract runs one suite against every object store the platform
// uses: a real MinIO server process (production's kind) and the embedded
// S3-compatible server of dev mode (docs/DESIGN.md: one contract suite per
// interface with several implementations).
func TestContract(t *testing.T) {
	t.Parallel()
	backends := map[string]func(t *testing.T) objstore.Config{
		"minio": func(t *testing.T) objstore.Config { return miniotest.Shared(t).Config(miniotest.Bucket()) },
		"embedded": func(t *testing.T) objstore.Config {
			e, err := objstore.StartEmbedded("", nil)
			require.NoError(t, err)
			t.Cleanup(func() { require.NoError(t, e.Close()) })
			return e.Config(miniotest.Bucket())
		},
		"embedded-persistent": func(t *testing.T) objstore.Config {
			e, err := objstore.StartEmbedded(t.TempDir(), nil)
			require.NoError(t, err)
			t.Cleanup(func() { require.NoError(t, e.Close()) })
			return e.Config(miniotest.Bucket())
		},
	}
	for name, cfg := range backends {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			contract(t, cfg(t))
		})
	}
}

func contract(t *testing.T, cfg objstore.Config) {
	ctx := context.Background()
	b, err := objstore.Open(cfg)
	require.NoError(t, err)

	// A missing object, in a bucket that does not exist yet.
	_, err = b.Get(ctx, "tickets/1/none.pdf")
	require.ErrorIs(t, err, objstore.ErrNotFound)

	// Put creates the bucket; the bytes come back exactly (a PDF is binary).
	data := append([]byte("%PDF-1.3\n"), bytes.Repeat([]byte{0, 0xff, 0x7f, '\n'}, 40_000)...)
	require.NoError(t, b.Put(ctx, "tickets/7/ord_7_a.pdf", data, "application/pdf"))
	got, err := b.Get(ctx, "tickets/7/ord_7_a.pdf")
	require.NoError(t, err)
	require.Equal(t, data, got)
	ok, err := b.Exists(ctx, "tickets/7/ord_7_a.pdf")
	require.NoError(t, err)
	require.True(t, ok)
	ok, err = b.Exists(ctx, "tickets/7/other.pdf")
	require.NoError(t, err)
	require.False(t, ok)

	// Put again replaces (projectors are replayed: idempotent).
	require.NoError(t, b.Put(ctx, "tickets/7/ord_7_a.pdf", []byte("%PDF-2"), "application/pdf"))
	got, err = b.Get(ctx, "tickets/7/ord_7_a.pdf")
	require.NoError(t, err)
	require.Equal(t, "%PDF-2", string(got))

	// A presigned URL fetches it without credentials, with the file name
	// and content type.
	u, err := b.PresignGet(ctx, "tickets/7/ord_7_a.pdf", 5*time.Minute, "seatghor-ticket-A1.pdf")
	require.NoError(t, err)
	resp, err := http.Get(u)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	require.Equal(t, "%PDF-2", string(body))
	require.Equal(t, "application/pdf", resp.Header.Get("Content-Type"))

	// Delete; a second delete is no error.
	require.NoError(t, b.Delete(ctx, "tickets/7/ord_7_a.pdf"))
	require.NoError(t, b.Delete(ctx, "tickets/7/ord_7_a.pdf"))
	_, err = b.Get(ctx, "tickets/7/ord_7_a.pdf")
	require.ErrorIs(t, err, objstore.ErrNotFound)

	// Keys are opaque paths.
	key := "tickets/12/ord_12_" + strings.Repeat("z", 16) + ".pdf"
	require.NoError(t, b.Put(ctx, key, []byte("x"), "application/pdf"))
	got, err = b.Get(ctx, key)
	require.NoError(t, err)
	require.Equal(t, "x", string(got))
}

// TestStoreDown: with the server gone, calls fail promptly instead of
// hanging, and work again once it is back (the projector's retry relies
// on both).
func TestStoreDown(t *testing.T) {
	t.Parallel()
	srv := miniotest.Start(t)
	b, err := objstore.Open(srv.Config(miniotest.Bucket()))
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, b.Put(ctx, "a", []byte("1"), "text/plain"))
	srv.Stop(t)
	require.Error(t, b.Put(ctx, "b", []byte("2"), "text/plain"))
	srv.Resume(t)
	require.NoError(t, b.Put(ctx, "b", []byte("2"), "text/plain"))
	got, err := b.Get(ctx, "a")
	require.NoError(t, err)
	require.Equal(t, "1", string(got))
}
