-- +goose Up
-- Gate scanning with no network (docs/gate-offline.md, decisions 0391 and
-- 0392). A gate device admits from its copy of the show's admission list and
-- later sends its scans (TicketService.SyncGateScans); each is settled here,
-- on the show's shard, once.
--
-- ticket_checkins stays the verdict, one row a ticket: it now names the scan
-- that is the admission (device_id and scan_id; both empty for a check-in
-- online). checked_in_at of a scan from a device is its time on the
-- server's clock; the earliest scan of a ticket is its admission.
ALTER TABLE ticket_checkins
    ADD COLUMN device_id text NOT NULL DEFAULT '',
    ADD COLUMN scan_id   text NOT NULL DEFAULT '';

-- Every scan a device sent, as it settled: the primary key is the device's
-- own id of the scan, so a batch sent twice settles nothing twice. A scan
-- that was the admission turns into a duplicate when an earlier scan of the
-- same ticket arrives later; a check-in online that an earlier scan replaces
-- is recorded here then (device_id '', scan_id 'online').
CREATE TABLE gate_scans (
    show_id            bigint      NOT NULL REFERENCES shows,
    device_id          text        NOT NULL,
    scan_id            text        NOT NULL,
    gate               text        NOT NULL DEFAULT '',
    -- '' when the scan named no ticket of this platform
    ticket_id          text        NOT NULL DEFAULT '',
    seat               text        NOT NULL DEFAULT '',
    ga_area            text        NOT NULL DEFAULT '',
    -- by the device's clock, and corrected by the device's offset (server
    -- minus device, in milliseconds): settled_time orders the scans of a ticket
    scanned_at         timestamptz NOT NULL,
    clock_offset_ms    bigint      NOT NULL,
    settled_time       timestamptz NOT NULL,
    outcome            text        NOT NULL CHECK (outcome IN ('admitted', 'duplicate', 'refunded', 'invalid')),
    -- refunded: the order's status then (cancelled or refunded)
    ticket_status      text        NOT NULL DEFAULT '',
    detail             text        NOT NULL DEFAULT '',
    -- duplicate: the admission that stands
    admitted_gate      text        NOT NULL DEFAULT '',
    admitted_device_id text        NOT NULL DEFAULT '',
    admitted_at        timestamptz,
    synced_by          text        NOT NULL,
    synced_at          timestamptz NOT NULL,
    PRIMARY KEY (show_id, device_id, scan_id),
    CHECK (outcome <> 'duplicate' OR admitted_at IS NOT NULL)
);
-- The scans of a ticket, when an earlier one replaces its admission.
CREATE INDEX gate_scans_ticket ON gate_scans (ticket_id) WHERE ticket_id <> '';
-- The supervisor's conflicts, newest first.
CREATE INDEX gate_scans_conflicts ON gate_scans (show_id, synced_at DESC) WHERE outcome <> 'admitted';

-- Each device of a show as of its last sync: its gate, its clock's offset
-- and how many scans it still held.
CREATE TABLE gate_devices (
    show_id         bigint      NOT NULL REFERENCES shows,
    device_id       text        NOT NULL,
    gate            text        NOT NULL DEFAULT '',
    pending         integer     NOT NULL CHECK (pending >= 0),
    clock_offset_ms bigint      NOT NULL,
    last_sync_at    timestamptz NOT NULL,
    synced_by       text        NOT NULL,
    PRIMARY KEY (show_id, device_id)
);

-- Both are a show's rows: fenced while the show moves (decision 0265).
CREATE TRIGGER gate_scans_show_writable BEFORE INSERT OR UPDATE ON gate_scans
    FOR EACH ROW WHEN (strpos(coalesce(current_setting('seatghor.fenced', true), ''), ',' || NEW.show_id::text || ',') = 0)
    EXECUTE FUNCTION show_writable('show_id');
CREATE TRIGGER gate_scans_show_writable_delete BEFORE DELETE ON gate_scans
    FOR EACH ROW EXECUTE FUNCTION show_writable('show_id');
CREATE TRIGGER gate_devices_show_writable BEFORE INSERT OR UPDATE ON gate_devices
    FOR EACH ROW WHEN (strpos(coalesce(current_setting('seatghor.fenced', true), ''), ',' || NEW.show_id::text || ',') = 0)
    EXECUTE FUNCTION show_writable('show_id');
CREATE TRIGGER gate_devices_show_writable_delete BEFORE DELETE ON gate_devices
    FOR EACH ROW EXECUTE FUNCTION show_writable('show_id');

-- +goose Down
DROP TABLE gate_devices;
DROP TABLE gate_scans;
ALTER TABLE ticket_checkins
    DROP COLUMN scan_id,
    DROP COLUMN device_id;
