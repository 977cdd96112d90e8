package shardmove

// table is a shard table that holds rows of a show.
type table struct {
	name string
	// where selects the show's rows; $1 is the show id.
	where string
	// unfenced says why the table needs no show_writable trigger; empty:
	// it has one.
	unfenced string
}

// moved lists every shard table whose rows belong to one show, parents
// before children (foreign keys): a move copies them in this order and
// deletes them in the reverse one. A test fails when a shard table is in
// neither moved nor stays, so a new show-scoped table cannot be forgotten.
var moved = []table{
	{"shows", "show_id = $1", "the fence's own row"},
	// Partners' allocations (decision 0185), before the seats and buckets
	// that name them.
	{"allocations", "show_id = $1", ""},
	{"seats", "show_id = $1", ""},
	// A trip's stops and fares (decision 0351).
	{"trip_stops", "show_id = $1", "written once with the show's seats, never changed"},
	{"fares", "show_id = $1", "written once with the show's seats, never changed"},
	{"ga_buckets", "show_id = $1", ""},
	{"holds", "show_id = $1", ""},
	{"hold_ga_takes", "show_id = $1", ""},
	{"orders", "show_id = $1", ""},
	{"order_passengers", "show_id = $1", ""},
	{"payments", "show_id = $1", ""},
	{"refunds", "show_id = $1", ""},
	// the journals too. Deleting them from the old shard is the one
	// exception to R-7.2 (shard migration 00086), so a move runs as the
	// login role.
	{"ledger_transactions", "show_id = $1", ""},
	{"ledger_lines", "txn_id IN (SELECT txn_id FROM ledger_transactions WHERE show_id = $1)", "written only with its journal's row, which is fenced"},
	{"ticket_checkins", "show_id = $1", ""},
	// Counters' cash for the show's orders (decision 0443).
	{"cash_entries", "show_id = $1", ""},
	// The manifest's no-shows (decision 0442).
	{"ticket_no_shows", "show_id = $1", ""},
	// The coach's progress as its supervisor marked it (decision 0468).
	{"trip_marks", "show_id = $1", ""},
	// The scans gate devices synced, and the devices (docs/gate-offline.md).
	{"gate_scans", "show_id = $1", ""},
	{"gate_devices", "show_id = $1", ""},
	// The show's audit entries (decision 0452), already gathered into the
	// catalog's log; they move with the show like every row of it.
	{"audit_log", "show_id = $1", "written only in the transaction of a refund's write, which the fence stops"},
	// The ids a webhook event names carry the show (server/shard/id.go).
	{"payment_events", "split_part(reference, '_', 2) = $1::bigint::text", ""},
	{"idempotency_keys", "target = 'show:' || $1::bigint::text OR split_part(target, '_', 2) = $1::bigint::text", ""},
}

// outbox is copied apart from the other tables: its rows get new positions
// (xid, id) on the new shard, in their old order (decision 0205).
const outbox = "outbox"

// stays names the shard tables a move leaves where they are, and why.
var stays = map[string]string{
	// Each projector's position in this shard's outbox, not a show's.
	"projection_checkpoints": "per shard, not per show",
	"goose_db_version":       "the schema's version",
}
