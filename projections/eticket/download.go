package eticket

import (
	"context"
	"time"

	"github.com/seatghor/seatghor/server/display"
	"github.com/seatghor/seatghor/server/ticket"
)

// Signer is the object store's side of a download (objstore.Bucket).
type Signer interface {
	Exists(ctx context.Context, key string) (bool, error)
	PresignGet(ctx context.Context, key string, ttl time.Duration, fileName string) (string, error)
}

// Downloads answers where a ticket's PDF can be fetched: a presigned URL
// of its object, short-lived, made without a request to the store.
type Downloads struct {
	objects Signer
	ttl     time.Duration
	now     func() time.Time
}

// NewDownloads returns downloads whose URLs last ttl (default 5 minutes).
func NewDownloads(objects Signer, ttl time.Duration, now func() time.Time) *Downloads {
	if ttl <= 0 {
		ttl = 5 * time.Minute
	}
	return &Downloads{objects: objects, ttl: ttl, now: now}
}

// Download returns the download of a ticket the caller may see, in lang:
// the PDF of its whole order (every ticket of the order answers the same
// file), so the file is named for the order, not for one seat (decision
// 0305).
func (d *Downloads) Download(ctx context.Context, v ticket.View, lang display.Lang) (ticket.Download, error) {
	out := ticket.Download{ContentType: ContentType, FileName: "seatghor-" + v.OrderID + ".pdf"}
	key := v.PDFKey
	if lang == display.Bengali {
		out.FileName = "seatghor-" + v.OrderID + "-bn.pdf"
		// The mark is the English file's; the Bengali one is stored
		// before it, except for orders made before Bengali e-tickets
		// (until `seatghor rebuild eticket`): ask the store.
		key = ""
	}
	if key == "" {
		// The mark may lag (or a rebuild of my tickets dropped it): the
		// object's key is known, ask the store.
		key = Key(v.ShowID, v.OrderID, lang)
		// A store that does not answer is "not ready yet" too: the
		// projector is waiting for it.
		if ok, err := d.objects.Exists(ctx, key); err != nil || !ok {
			out.RetryAfter = 2 * time.Second
			return out, nil
		}
	}
	url, err := d.objects.PresignGet(ctx, key, d.ttl, out.FileName)
	if err != nil {
		return out, err
	}
	out.Ready, out.URL, out.ExpiresAt = true, url, d.now().Add(d.ttl).UTC()
	return out, nil
}
