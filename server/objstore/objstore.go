// Package objstore keeps files in an S3-compatible bucket through minio-go
// e-ticket PDFs). Production points it at any S3 API (MinIO); dev
// mode starts an embedded S3-compatible server on localhost (Embedded), so
// the minio-go code path is the one that runs everywhere. One contract test
// suite runs against a real MinIO server process and the embedded server.
package objstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// ErrNotFound means no object has the key.
var ErrNotFound = errors.New("object not found")

// Config locates a bucket.
type Config struct {
	// Endpoint is the S3 API's address: "host:port" (plain HTTP) or a URL
	// "http://host:port" / "https://host".
	Endpoint  string
	AccessKey string
	// SecretKey is a secret: never logged.
	SecretKey string
	// Bucket is created on first use when missing.
	Bucket string
	// Region is the bucket's region; default "us-east-1" (saves minio-go a
	// location lookup per bucket).
	Region string
}

// Bucket is one S3 bucket.
type Bucket struct {
	client *minio.Client
	name   string
	region string
	// made is set once the bucket is known to exist.
	mu   sync.Mutex
	made bool
}

// Open returns the bucket of cfg. It does not touch the network: a store
// that is down at start delays PDFs, never the platform.
func Open(cfg Config) (*Bucket, error) {
	if cfg.Endpoint == "" || cfg.Bucket == "" {
		return nil, errors.New("objstore: endpoint and bucket are required")
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	host, secure := cfg.Endpoint, false
	if strings.Contains(host, "://") {
		u, err := url.Parse(host)
		if err != nil {
			return nil, fmt.Errorf("objstore: endpoint %q: %w", cfg.Endpoint, err)
		}
		host, secure = u.Host, u.Scheme == "https"
	}
	c, err := minio.New(host, &minio.Options{
		Creds:  credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, ""),
		Secure: secure,
		Region: cfg.Region,
		// Fail fast when the store is down: the projector's own retry (with
		// backoff) waits for it, not a request.
		MaxRetries: 2,
		Transport: &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			MaxIdleConnsPerHost:   16,
			IdleConnTimeout:       90 * time.Second,
			ResponseHeaderTimeout: 30 * time.Second,
		},
	})
	if err != nil {
		return nil, fmt.Errorf("objstore: %w", err)
	}
	return &Bucket{client: c, name: cfg.Bucket, region: cfg.Region}, nil
}

// Name is the bucket's name.
func (b *Bucket) Name() string { return b.name }

// ensure creates the bucket unless it is known to exist.
func (b *Bucket) ensure(ctx context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.made {
		return nil
	}
	ok, err := b.client.BucketExists(ctx, b.name)
	if err != nil {
		return fmt.Errorf("objstore: bucket %s: %w", b.name, err)
	}
	if !ok {
		err := b.client.MakeBucket(ctx, b.name, minio.MakeBucketOptions{Region: b.region})
		if err != nil && !isCode(err, "BucketAlreadyOwnedByYou", "BucketAlreadyExists") {
			return fmt.Errorf("objstore: make bucket %s: %w", b.name, err)
		}
	}
	b.made = true
	return nil
}

// Put stores data under key, replacing what was there.
func (b *Bucket) Put(ctx context.Context, key string, data []byte, contentType string) error {
	if err := b.ensure(ctx); err != nil {
		return err
	}
	_, err := b.client.PutObject(ctx, b.name, key, bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{
		ContentType: contentType,
		// A single PUT with an MD5 instead of the streaming signature: the
		// embedded server (gofakes3) corrupts streaming-signed uploads over
		// plain HTTP, and the files are small (KBs).
		DisableContentSha256: true,
		SendContentMd5:       true,
	})
	if isCode(err, "NoSuchBucket") {
		b.mu.Lock()
		b.made = false // deleted behind our back: make it again next time
		b.mu.Unlock()
	}
	if err != nil {
		return fmt.Errorf("objstore: put %s: %w", key, err)
	}
	return nil
}

// Get returns the object under key, or ErrNotFound.
func (b *Bucket) Get(ctx context.Context, key string) ([]byte, error) {
	obj, err := b.client.GetObject(ctx, b.name, key, minio.GetObjectOptions{})
	if err != nil {
		return nil, b.readErr(key, err)
	}
	defer obj.Close()
	data, err := io.ReadAll(obj)
	if err != nil {
		return nil, b.readErr(key, err)
	}
	return data, nil
}

// Exists tells whether an object has the key.
func (b *Bucket) Exists(ctx context.Context, key string) (bool, error) {
	_, err := b.client.StatObject(ctx, b.name, key, minio.StatObjectOptions{})
	if err = b.readErr(key, err); errors.Is(err, ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// Delete removes the object under key; a missing one is no error.
func (b *Bucket) Delete(ctx context.Context, key string) error {
	err := b.client.RemoveObject(ctx, b.name, key, minio.RemoveObjectOptions{})
	if err != nil && !isCode(err, "NoSuchKey", "NoSuchBucket") {
		return fmt.Errorf("objstore: delete %s: %w", key, err)
	}
	return nil
}

// PresignGet returns a URL that fetches the object for ttl without
// credentials; fileName, when set, makes browsers save it under that name.
// It signs locally: no request is made.
func (b *Bucket) PresignGet(ctx context.Context, key string, ttl time.Duration, fileName string) (string, error) {
	params := url.Values{}
	if fileName != "" {
		params.Set("response-content-disposition", fmt.Sprintf("attachment; filename=%q", fileName))
	}
	u, err := b.client.PresignedGetObject(ctx, b.name, key, ttl, params)
	if err != nil {
		return "", fmt.Errorf("objstore: presign %s: %w", key, err)
	}
	return u.String(), nil
}

func (b *Bucket) readErr(key string, err error) error {
	if err == nil {
		return nil
	}
	if isCode(err, "NoSuchKey", "NoSuchBucket", "NotFound") || minio.ToErrorResponse(err).StatusCode == http.StatusNotFound {
		return fmt.Errorf("objstore: %s: %w", key, ErrNotFound)
	}
	return fmt.Errorf("objstore: read %s: %w", key, err)
}

func isCode(err error, codes ...string) bool {
	if err == nil {
		return false
	}
	code := minio.ToErrorResponse(err).Code
	for _, c := range codes {
		if code == c {
			return true
		}
	}
	return false
}
