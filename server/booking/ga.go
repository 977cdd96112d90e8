package booking

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/seatghor/seatghor/server/amount"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/pg"
)

// holdGA takes quantity places of a general-admission area. The area
// is split into buckets, each a counter with CHECK (remaining >= 0), so the
// total can never be oversold. The fast path takes all places from one
// bucket that no other transaction has locked (SKIP LOCKED spreads the
// crowd over the buckets); only when no single free bucket has enough does
// the hold lock every bucket of the area, in bucket order, and take from
// several.
func holdGA(ctx context.Context, tx pgx.Tx, h *Hold, area string, now time.Time) error {
	area, price, err := resolveArea(ctx, tx, h.ShowID, area)
	if err != nil {
		return err
	}
	h.GAArea = area
	// Prices and quantities are bounded (decision 0071); a wrapped total is
	// never sold, whatever got past the bounds.
	if h.AmountMinor, err = amount.Mul(price, int64(h.Quantity)); err != nil {
		return &fault.Error{Reason: fault.BookingInvalid, Field: "quantity", GAArea: area,
			Message: fmt.Sprintf("the total price of %d places of %s is out of range", h.Quantity, area)}
	}

	// The fast path runs in a savepoint. A FOR UPDATE that meets a row
	// changed since its snapshot locks the newest version before checking
	// it again; if it no longer matches (too few places left) the row is
	// skipped but stays locked. Had the fast path then found nothing, that
	// stray bucket lock would be carried into the slow path, which locks the
	// buckets in order while already holding one out of order: a deadlock
	// with another slow path (seen under load). Rolling the savepoint back
	// releases it.
	var bucket int
	err = pg.InTx(ctx, tx, func(sp pgx.Tx) error {
		return sp.QueryRow(ctx, `
		WITH pick AS MATERIALIZED (
			-- A CTE runs once: a random() subquery in FROM could be run again
			-- for every row and pick (and take from) several buckets.
			SELECT bucket FROM ga_buckets b
			WHERE show_id = $1 AND area = $2 AND remaining >= $3
			  AND `+inChannel("b", "$1", "$4")+`
			ORDER BY allocated_partner_id IS NULL, random()
			LIMIT 1
			FOR UPDATE SKIP LOCKED
		)
		UPDATE ga_buckets b
		SET remaining = b.remaining - $3, version = b.version + 1
		FROM pick
		WHERE b.show_id = $1 AND b.area = $2 AND b.bucket = pick.bucket
		RETURNING b.bucket`, h.ShowID, area, h.Quantity, h.PartnerID).Scan(&bucket)
	})
	found, err := pg.Found(err)
	switch {
	case err != nil:
		return fmt.Errorf("take GA places: %w", err)
	case found:
		h.takes = map[int]int{bucket: h.Quantity}
		return nil
	}
	return holdGASlow(ctx, tx, h, now)
}

// holdGASlow locks every bucket of the area in bucket order (the order every
// path that touches buckets and GA holds uses), gives back the places of GA
// holds that ran out (lazy expiry, R-3.3: correctness never waits for the
// sweeper), and takes the places from as many buckets of the hold's channel
// (inChannel) as needed.
func holdGASlow(ctx context.Context, tx pgx.Tx, h *Hold, now time.Time) error {
	if _, err := lockBuckets(ctx, tx, h.ShowID, h.GAArea); err != nil {
		return err
	}
	if err := reclaimExpiredGA(ctx, tx, h.ShowID, h.GAArea, now); err != nil {
		return err
	}
	all, err := lockBuckets(ctx, tx, h.ShowID, h.GAArea)
	if err != nil {
		return err
	}
	general, err := mayHoldGeneralSale(ctx, tx, h.ShowID, h.PartnerID)
	if err != nil {
		return err
	}
	var buckets []bucketRow
	for _, b := range all {
		if (b.partner == 0 && general) || (b.partner != 0 && b.partner == h.PartnerID) {
			buckets = append(buckets, b)
		}
	}
	total := 0
	for _, b := range buckets {
		total += b.remaining
	}
	if total < h.Quantity {
		version, err := seatmapVersion(ctx, tx, h.ShowID)
		if err != nil {
			return err
		}
		return &fault.Error{Reason: fault.SeatsUnavailable, GAArea: h.GAArea, Remaining: total, SeatmapVersion: version,
			Message: fmt.Sprintf("%s has %d places left; %d asked for", h.GAArea, total, h.Quantity)}
	}
	takes := map[int]int{}
	need := h.Quantity
	for _, b := range buckets {
		if need == 0 {
			break
		}
		n := min(need, b.remaining)
		if n == 0 {
			continue
		}
		if _, err := tx.Exec(ctx, `
			UPDATE ga_buckets SET remaining = remaining - $4, version = version + 1
			WHERE show_id = $1 AND area = $2 AND bucket = $3`, h.ShowID, h.GAArea, b.bucket, n); err != nil {
			return fmt.Errorf("take GA places: %w", err)
		}
		takes[b.bucket] = n
		need -= n
	}
	h.takes = takes
	return nil
}

type bucketRow struct {
	bucket, remaining int
	// partner is the partner whose allocation the bucket is, 0 for general
	// sale.
	partner int64
}

// lockBuckets locks every bucket of an area in bucket order.
func lockBuckets(ctx context.Context, tx pgx.Tx, showID int64, area string) ([]bucketRow, error) {
	rows, err := tx.Query(ctx, `
		SELECT bucket, remaining, coalesce(allocated_partner_id, 0) FROM ga_buckets
		WHERE show_id = $1 AND area = $2 ORDER BY bucket FOR UPDATE`, showID, area)
	if err != nil {
		return nil, fmt.Errorf("lock GA buckets: %w", err)
	}
	buckets, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (bucketRow, error) {
		var b bucketRow
		return b, r.Scan(&b.bucket, &b.remaining, &b.partner)
	})
	if err != nil {
		return nil, fmt.Errorf("lock GA buckets: %w", err)
	}
	return buckets, nil
}

// insertTakes writes what a GA hold took from which bucket.
func insertTakes(ctx context.Context, tx pgx.Tx, h Hold) error {
	for bucket, n := range h.takes {
		if _, err := tx.Exec(ctx, `
			INSERT INTO hold_ga_takes (hold_id, show_id, area, bucket, quantity)
			VALUES ($1, $2, $3, $4, $5)`, h.ID, h.ShowID, h.GAArea, bucket, n); err != nil {
			return fmt.Errorf("record GA takes: %w", err)
		}
	}
	return nil
}

// resolveArea finds the asked-for area, or the show's only area when none is
// named.
func resolveArea(ctx context.Context, tx pgx.Tx, showID int64, area string) (string, int64, error) {
	rows, err := tx.Query(ctx, `
		SELECT area, min(price_minor) FROM ga_buckets WHERE show_id = $1
		GROUP BY area ORDER BY min(position)`, showID)
	if err != nil {
		return "", 0, fmt.Errorf("read GA areas: %w", err)
	}
	type areaRow struct {
		name  string
		price int64
	}
	areas, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (areaRow, error) {
		var a areaRow
		return a, r.Scan(&a.name, &a.price)
	})
	if err != nil {
		return "", 0, fmt.Errorf("read GA areas: %w", err)
	}
	names := make([]string, len(areas))
	for i, a := range areas {
		names[i] = a.name
		if a.name == area || (area == "" && len(areas) == 1) {
			return a.name, a.price, nil
		}
	}
	e := &fault.Error{Reason: fault.BookingInvalid, Field: "ga_area"}
	switch {
	case len(areas) == 0:
		e.Message = fmt.Sprintf("show %d has no general-admission areas", showID)
	case area == "":
		e.Message = fmt.Sprintf("show %d has several general-admission areas; name one of: %s", showID, strings.Join(names, ", "))
	default:
		e.Message = fmt.Sprintf("show %d has no general-admission area %q (areas: %s)", showID, area, strings.Join(names, ", "))
	}
	return "", 0, e
}

// reclaimExpiredGA ends the GA holds of an area that ran out, returning their
// places. The caller holds the area's bucket locks.
func reclaimExpiredGA(ctx context.Context, tx pgx.Tx, showID int64, area string, now time.Time) error {
	rows, err := tx.Query(ctx, `
		SELECT `+holdColumns+` FROM holds h LEFT JOIN orders o ON o.hold_id = h.hold_id
		WHERE h.show_id = $1 AND h.ga_area = $2 AND h.status IN ('active', 'ordered') AND h.expires_at < $3
		ORDER BY h.hold_id`, showID, area, now)
	if err != nil {
		return fmt.Errorf("find expired GA holds: %w", err)
	}
	expired, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Hold, error) { return scanHold(r) })
	if err != nil {
		return fmt.Errorf("find expired GA holds: %w", err)
	}
	for _, h := range expired {
		if _, err := endHold(ctx, tx, h, HoldExpired, now); err != nil {
			return err
		}
	}
	return nil
}
