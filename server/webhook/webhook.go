// Package webhook owns Seatghor's outgoing webhooks (issue 12, decision
// 0190): partners' endpoints and their secrets, the durable queue and log of
// deliveries, and the workers that POST them signed per the Standard
// Webhooks specification. Deliveries are enqueued by a projector of the
// outbox (projections/webhookfeed) and sent by Worker, so a slow or dead
// endpoint holds up neither the projector nor other endpoints.
//
// Delivery is at least once: a delivery is one row per (endpoint, event),
// with a webhook-id that every attempt and replay repeats, retried with
// exponential backoff and jitter until it succeeds or three days pass.
package webhook

import (
	"fmt"
	"slices"
	"time"

	"github.com/seatghor/seatghor/server/audit"
	"github.com/seatghor/seatghor/server/fault"
)

// Audience says which partners an event type concerns (decision 0190).
type Audience int

// The audiences.
const (
	// ByOrder: the partner the event's order came through (order_id).
	ByOrder Audience = iota + 1
	// ByPartner: the partner the event names (partner_id).
	ByPartner
	// Sellers: every partner allowed to sell the event's show (public
	// news of a show; decision 0285).
	Sellers
)

// EventType is an event type partners subscribe to.
type EventType struct {
	// Name is what endpoints subscribe to, e.g. "booking.confirmed".
	Name string
	// Outbox is the full name of the outbox event it comes from.
	Outbox   string
	Audience Audience
	// Omit are fields of the outbox event no webhook carries: staff's user
	// ids never leave the platform (decision 0285).
	Omit []string
}

// eventTypes are the event types partners subscribe to. Admins' endpoints
// get every event of their types whatever the audience.
var eventTypes = []EventType{
	// Passengers' names and numbers, and the buyer's contact (issue 25), stay
	// on the show's shard: a delivery's body is kept in the catalog's log and sent to a URL (decision 0381).
	{"booking.confirmed", "seatghor.events.v1.BookingConfirmed", ByOrder, []string{"passengers", "contact"}},
	{"order.cancelled", "seatghor.events.v1.OrderCancelled", ByOrder, nil},
	{"refund.issued", "seatghor.events.v1.RefundIssued", ByOrder, nil},
	{"sale.opening_moved", "seatghor.events.v1.SaleOpeningMoved", Sellers, []string{"moved_by"}},
	// A show moved or cancelled by its operator (decisions 0440, 0441):
	// news for every seller; each partner's orders follow by order.
	{"show.rescheduled", "seatghor.events.v1.ShowRescheduled", Sellers, []string{"rescheduled_by"}},
	{"show.cancelled", "seatghor.events.v1.ShowCancelled", Sellers, []string{"cancelled_by"}},
	{"order.rescheduled", "seatghor.events.v1.OrderRescheduled", ByOrder, nil},
	// Written by the channel allocations of issue 12 §2.
	{"allocation.returned", "seatghor.events.v1.AllocationReturned", ByPartner, nil},
}

// EventTypes lists the event types an endpoint may subscribe to.
func EventTypes() []string {
	out := make([]string, len(eventTypes))
	for i, t := range eventTypes {
		out[i] = t.Name
	}
	return out
}

// TypeOf returns the webhook event type of an outbox event type (its
// message's full name); ok is false for events no webhook carries.
func TypeOf(outboxType string) (EventType, bool) {
	for _, t := range eventTypes {
		if t.Outbox == outboxType {
			return t, true
		}
	}
	return EventType{}, false
}

// Status is an endpoint's state.
type Status string

// The endpoint states.
const (
	StatusActive   Status = "active"
	StatusDisabled Status = "disabled"
)

// DisabledBy says who or what disabled an endpoint, which decides what
// becomes of its events (decision 0277).
type DisabledBy string

// Who disables endpoints.
const (
	// DisabledByFailures: the worker, after sustained failure. Events are
	// still queued, kept for Retry, and go out when it is enabled again.
	DisabledByFailures DisabledBy = "failures"
	// DisabledByPartner, DisabledByAdmin and DisabledByKeyRevocation: a
	// decision that the URL should get nothing. No event is queued and
	// the pending deliveries are dropped.
	DisabledByPartner       DisabledBy = "partner"
	DisabledByAdmin         DisabledBy = "admin"
	DisabledByKeyRevocation DisabledBy = "key_revocation"
)

// DeliveryStatus is a delivery's state.
type DeliveryStatus string

// The delivery states.
const (
	DeliveryPending   DeliveryStatus = "pending"
	DeliverySucceeded DeliveryStatus = "succeeded"
	DeliveryFailed    DeliveryStatus = "failed"
	// DeliveryDropped is never sent (unless replayed): its endpoint was
	// disabled by a person or a key's revocation, or stayed disabled after
	// failures longer than Retry (decision 0277).
	DeliveryDropped DeliveryStatus = "dropped"
)

// Endpoint is a URL subscribed to event types.
type Endpoint struct {
	ID int64
	// PartnerID is the partner whose events it receives; 0: an admin's
	// endpoint, which receives every partner's events.
	PartnerID   int64
	URL         string
	EventTypes  []string
	Description string
	Status      Status
	// DisabledReason and DisabledAt say why and when it was disabled: the
	// notice its partner reads (decision 0190).
	DisabledReason      string
	DisabledAt          time.Time
	ConsecutiveFailures int
	FailingSince        time.Time
	CreatedAt           time.Time
	// PreviousSecretExpiresAt ends the rotation's overlap; zero: none.
	PreviousSecretExpiresAt time.Time
	// CreatedByKey is the API key that created it ("": a signed-in
	// account, an admin, or made before keys were recorded).
	CreatedByKey string
	// NeedsConfirmation marks a partner's endpoint made before the
	// creating key was recorded: the partner's next key revocation
	// disables it unless an enable confirms it first (decision 0276).
	NeedsConfirmation bool
	// DisabledBy is who or what disabled it; "" while active.
	DisabledBy DisabledBy
}

// Delivery is one event for one endpoint.
type Delivery struct {
	ID         int64
	EndpointID int64
	EventID    string
	EventType  string
	// WebhookID is the webhook-id header of every attempt.
	WebhookID     string
	Status        DeliveryStatus
	Attempts      int
	NextAttemptAt time.Time
	OccurredAt    time.Time
	CreatedAt     time.Time
	// DroppedReason says why a dropped delivery was dropped.
	DroppedReason string
	// Recent are the latest attempts, newest first.
	Recent []Attempt
}

// Attempt is one POST of a delivery.
type Attempt struct {
	Number     int
	At         time.Time
	StatusCode int
	Error      string
	Duration   time.Duration
}

// Caller is who asks: a partner (its id), or an admin.
type Caller struct {
	UserID    string
	PartnerID int64
	Admin     bool
	// APIKey is the partner's API key the call came with; "" for a
	// signed-in account.
	APIKey string
	// Manages says the credential may change endpoints (create, rotate,
	// enable, disable, delete, replay): the partner's signed-in account or
	// a key of scope webhooks, never a booking or read-only key (decision
	// 0276). Admins always may.
	Manages bool
}

// actor is who the audit log says made a change.
func (c Caller) actor() audit.Actor {
	switch {
	case c.Admin:
		return audit.Actor{Kind: audit.ActorAdmin, ID: c.UserID}
	case c.APIKey != "":
		return audit.Actor{Kind: audit.ActorAPIKey, ID: c.APIKey}
	}
	return audit.Actor{Kind: audit.ActorUser, ID: c.UserID}
}

// ErrNotFound means the endpoint does not exist, or is another partner's.
var ErrNotFound = fault.Sentinel(fault.WebhookEndpointNotFound, "webhook endpoint not found")

// ErrForbidden means the caller is neither an admin nor a partner.
var ErrForbidden = fault.Sentinel(fault.WebhookForbidden, "only partners and admins manage webhooks")

// ErrNotManager refuses a change of an endpoint to a credential that may
// only read them: a booking or read-only API key (decision 0276).
var ErrNotManager = fault.Sentinel(fault.WebhookManageDenied, "this credential may not change webhook endpoints: use the partner's signed-in account or an API key of scope webhooks")

// ErrEndpointLimit refuses an endpoint beyond its partner's cap (decision
// 0278): delete one first.
var ErrEndpointLimit = fault.Sentinel(fault.WebhookEndpointLimit, "the partner has as many webhook endpoints as it may; delete one first")

// Errors lists the sentinel errors of webhook that reach the API; it
// answers each by its reason (docs/errors.md).
var Errors = []error{ErrNotFound, ErrForbidden, ErrNotManager, ErrEndpointLimit}

func checkEventTypes(types []string) ([]string, error) {
	known := EventTypes()
	var out []string
	for _, t := range types {
		if !slices.Contains(known, t) {
			return nil, &fault.Error{Reason: fault.WebhookInvalid, Field: "event_types", Message: fmt.Sprintf("unknown event type %q (known: %v)", t, known)}
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		return nil, &fault.Error{Reason: fault.WebhookInvalid, Field: "event_types", Message: "name at least one event type"}
	}
	return out, nil
}
