package ticket

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Device is a gate device of a show as of its last sync, with how its
// scans settled.
type Device struct {
	DeviceID    string
	Gate        string
	LastSyncAt  time.Time
	Pending     int
	ClockOffset time.Duration
	SyncedBy    string
	Admitted    int64
	Duplicates  int64
	Refunded    int64
	Invalid     int64
	// BoardsElsewhere counts the scans of tickets that board at another
	// stop (decision 0408).
	BoardsElsewhere int64
}

// GateStatus is the gate supervisor's view of a show.
type GateStatus struct {
	Devices []Device
	// Conflicts are the scans not admitted, newest first, at most
	// maxConflicts; ConflictCount counts them all.
	Conflicts     []Settled
	ConflictCount int64
	AdmittedCount int64
	ServerTime    time.Time
}

// maxConflicts bounds the conflicts a status lists.
const maxConflicts = 200

// GateStatus tells show showID's gate supervisor, per device, when it last
// synced, what it still held then and how its scans settled, and lists the
// conflicts. Its callers are CheckIn's.
func (s *Service) GateStatus(ctx context.Context, c Caller, showID int64) (GateStatus, error) {
	pool, err := s.gatePool(ctx, c, showID)
	if err != nil {
		return GateStatus{}, err
	}
	out := GateStatus{ServerTime: s.clock.Now().UTC()}
	rows, err := pool.Query(ctx, `
		SELECT d.device_id, d.gate, d.last_sync_at, d.pending, d.clock_offset_ms, d.synced_by,
		       count(*) FILTER (WHERE g.outcome = 'admitted'), count(*) FILTER (WHERE g.outcome = 'duplicate'),
		       count(*) FILTER (WHERE g.outcome = 'refunded'), count(*) FILTER (WHERE g.outcome = 'invalid'),
		       count(*) FILTER (WHERE g.outcome = 'boards_elsewhere')
		FROM gate_devices d
		LEFT JOIN gate_scans g ON g.show_id = d.show_id AND g.device_id = d.device_id
		WHERE d.show_id = $1
		GROUP BY d.show_id, d.device_id
		ORDER BY d.gate, d.device_id`, showID)
	if err != nil {
		return GateStatus{}, fmt.Errorf("read the gate devices of show %d: %w", showID, err)
	}
	out.Devices, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (Device, error) {
		var d Device
		var offsetMs int64
		err := r.Scan(&d.DeviceID, &d.Gate, &d.LastSyncAt, &d.Pending, &offsetMs, &d.SyncedBy,
			&d.Admitted, &d.Duplicates, &d.Refunded, &d.Invalid, &d.BoardsElsewhere)
		d.LastSyncAt, d.ClockOffset = d.LastSyncAt.UTC(), time.Duration(offsetMs)*time.Millisecond
		return d, err
	})
	if err != nil {
		return GateStatus{}, fmt.Errorf("read the gate devices of show %d: %w", showID, err)
	}
	rows, err = pool.Query(ctx, `SELECT `+scanColumns+` FROM gate_scans
		WHERE show_id = $1 AND outcome <> 'admitted'
		ORDER BY synced_at DESC, device_id, scan_id
		LIMIT $2`, showID, maxConflicts)
	if err != nil {
		return GateStatus{}, fmt.Errorf("read the gate conflicts of show %d: %w", showID, err)
	}
	out.Conflicts, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (Settled, error) { return scanRow(r) })
	if err != nil {
		return GateStatus{}, fmt.Errorf("read the gate conflicts of show %d: %w", showID, err)
	}
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM gate_scans WHERE show_id = $1 AND outcome <> 'admitted'`, showID).
		Scan(&out.ConflictCount); err != nil {
		return GateStatus{}, fmt.Errorf("count the gate conflicts of show %d: %w", showID, err)
	}
	if out.AdmittedCount, err = admittedCount(ctx, pool, showID); err != nil {
		return GateStatus{}, err
	}
	return out, nil
}
