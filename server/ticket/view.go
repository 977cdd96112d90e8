package ticket

import (
	"time"

	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	"github.com/seatghor/seatghor/server/fault"
)

// ErrNotFound means the caller has no such ticket: unknown, malformed and
// someone else's ids are the same answer.
var ErrNotFound = fault.Sentinel(fault.TicketNotFound, "ticket not found")

// The statuses a ticket shows its holder.
const (
	StatusCancelled Status = "cancelled"
	StatusRefunded  Status = "refunded"
)

// View is a ticket as its holder sees it in "my tickets".
type View struct {
	Ticket
	Status      Status
	Kind        catalogv1.ShowKind
	Title       string
	Origin      string
	Destination string
	Venue       string
	Operator    string
	// TitleBn, VenueBn and OperatorBn are the show's names in Bengali
	// script, when it has them (decision 0385).
	TitleBn, VenueBn, OperatorBn string
	// TimeZone is the show's IANA zone, in which people read its times
	// (decision 0170); empty when the show is not known yet.
	TimeZone      string
	StartsAt      time.Time
	CheckedInAt   time.Time
	CheckedInGate string
	// PDFKey is the e-ticket's object key; empty until it is stored.
	PDFKey string
}

// GoodForEntry tells whether the ticket may still be used or downloaded.
func (v View) GoodForEntry() bool { return v.Status == StatusValid || v.Status == StatusCheckedIn }

// Holder is whose tickets a read answers: the user's own and, for a buyer
// signed in by phone, every order whose tickets were sent to that number
// (its contact phone, else its first passenger's), a guest's included
// (decision 0437). Phone is E.164; empty: the user's own only.
type Holder struct {
	UserID, Phone string
}

// ListFilter narrows a listing of a user's tickets.
type ListFilter struct {
	ShowID       int64
	UpcomingOnly bool
	Now          time.Time
	PageSize     int
	PageToken    string
}

// Download is where to fetch a ticket's e-ticket PDF.
type Download struct {
	Ready     bool
	URL       string
	ExpiresAt time.Time
	// RetryAfter: when not ready, ask again after this long.
	RetryAfter  time.Duration
	ContentType string
	FileName    string
}

// ErrBadPageToken means a page token was not issued by this server.
var ErrBadPageToken = fault.SentinelOnField(fault.PageTokenInvalid, "page_token", "not a page token this server issued")
