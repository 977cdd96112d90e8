package waitingroom

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/sync/singleflight"

	"github.com/seatghor/seatghor/server/catalog"
	"github.com/seatghor/seatghor/server/fault"
)

// Room is a waiting room as configured (catalog.SaleRoom, the catalog's
// waiting_rooms row): one show's, or the one line of a sale of several
// shows. The lottery is drawn at OpensAt; after EndsAt holds need
// no Queue-Token; an admission lasts AdmittedTTL (R-9.4: 15 minutes); the
// managers of OrganizationID manage the sale (decision 0075).
type Room catalog.SaleRoom

// Active tells whether holds of the show need an admitted token at now.
func (r Room) Active(now time.Time) bool { return now.Before(r.EndsAt) }

// roomStore reads and changes rooms through the catalog (Rooms), with a
// short per-process cache: every CreateHold asks whether its show's room is
// active, and the answer changes only by UpdateSale or when the window ends
// (which the cached EndsAt already tells).
//
// Which shows sell through a room is one list, read in one query at most
// every ttl (roomedShows, decision 0267): a show joins a room only when it
// is created (catalog.insertWaitingRoom), so a show the list does not name
// and no newer than the list's newest show has none, without a query of
// its own. Asking show by show, 3,000 buses on sale cost the catalog a
// query for almost every hold (each bus's answer was older than ttl by its
// next hold).
//
// The rest is keyed by whatever show id a caller sends, so it is bounded:
// two least-recently-used caches of a fixed size, one for the shows that
// sell through a room and one for the answers "no room" for ids newer than
// the list (a show just created, or no show at all). A caller sending many
// unknown show ids only evicts "no room" answers, never the rooms of an
// on-sale. Entries older than ttl are asked again (not golang-lru's
// expirable cache: its cleanup goroutine never ends).
type roomStore struct {
	catalog Rooms
	ttl     time.Duration

	roomed atomic.Pointer[roomedList]
	rooms  *lru.Cache[int64, cachedRoom]
	noRoom *lru.Cache[int64, time.Time]
	group  singleflight.Group
}

// roomedList is every show that sells through a room, as read at at, and
// the newest show id then.
type roomedList struct {
	shows  map[int64]struct{}
	newest int64
	at     time.Time
}

type cachedRoom struct {
	room *Room
	at   time.Time
}

func newRoomStore(catalog Rooms, ttl time.Duration, size int) *roomStore {
	rooms, err := lru.New[int64, cachedRoom](size)
	if err != nil {
		panic(err) // size > 0: Config.defaults
	}
	noRoom, err := lru.New[int64, time.Time](size)
	if err != nil {
		panic(err)
	}
	return &roomStore{catalog: catalog, ttl: ttl, rooms: rooms, noRoom: noRoom}
}

// roomedShows is the list of shows that sell through a room, read again
// when older than ttl; concurrent readers of a stale list share one query.
func (st *roomStore) roomedShows(ctx context.Context) (*roomedList, error) {
	if l := st.roomed.Load(); l != nil && time.Since(l.at) < st.ttl {
		return l, nil
	}
	v, err, _ := st.group.Do("roomed", func() (any, error) {
		// The list's age counts from before the read, so it is never
		// trusted for longer than ttl after what it saw.
		l := &roomedList{shows: map[int64]struct{}{}, at: time.Now()}
		newest, ids, err := st.catalog.RoomedShows(context.WithoutCancel(ctx))
		if err != nil {
			return nil, err
		}
		l.newest = newest
		for _, id := range ids {
			l.shows[id] = struct{}{}
		}
		st.roomed.Store(l)
		return l, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*roomedList), nil
}

// get reads the room a show sells through from the database; nil when the
// show has none.
func (st *roomStore) get(ctx context.Context, showID int64) (*Room, error) {
	r, ok, err := st.catalog.SaleRoom(ctx, showID)
	if err != nil || !ok {
		return nil, err
	}
	room := Room(r)
	return &room, nil
}

// cachedGet is get through the cache; concurrent misses share one query.
// The cache's age is wall-clock time: it bounds staleness between
// processes, not business time.
func (st *roomStore) cachedGet(ctx context.Context, showID int64) (*Room, error) {
	if c, ok := st.rooms.Get(showID); ok && time.Since(c.at) < st.ttl {
		return c.room, nil
	}
	list, err := st.roomedShows(ctx)
	if err != nil {
		return nil, err
	}
	if _, ok := list.shows[showID]; !ok && showID <= list.newest {
		return nil, nil
	}
	if at, ok := st.noRoom.Get(showID); ok && time.Since(at) < st.ttl {
		return nil, nil
	}
	v, err, _ := st.group.Do(fmt.Sprint(showID), func() (any, error) {
		r, err := st.get(context.WithoutCancel(ctx), showID)
		if err != nil {
			return nil, err
		}
		now := time.Now()
		if r == nil {
			st.rooms.Remove(showID)
			st.noRoom.Add(showID, now)
		} else {
			st.noRoom.Remove(showID)
			st.rooms.Add(showID, cachedRoom{room: r, at: now})
		}
		return r, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*Room), nil
}

// forget drops the cached copies of a room, under each of its shows.
func (st *roomStore) forget(r *Room) {
	for _, id := range r.ShowIDs {
		st.rooms.Remove(id)
		st.noRoom.Remove(id)
	}
}

// open lists the rooms whose window has not ended at now.
func (st *roomStore) open(ctx context.Context, now time.Time) ([]Room, error) {
	open, err := st.catalog.OpenSaleRooms(ctx, now)
	if err != nil {
		return nil, err
	}
	rooms := make([]Room, len(open))
	for i, r := range open {
		rooms[i] = Room(r)
	}
	return rooms, nil
}

// Update is an operator's change of a sale; nil fields stay.
type Update struct {
	Paused           *bool
	MinRate, MaxRate *int
	EndsAt           *time.Time
	// OpensAt moves the opening (Openings.MoveOpening); not after now
	// opens the sale now.
	OpensAt *time.Time
}

// check refuses an update that breaks a rule before anything is written,
// so a sale never keeps half of a change.
func (u Update) check(r *Room, now time.Time) error {
	lo, hi := cmp.Or(u.MinRate, &r.MinRate), cmp.Or(u.MaxRate, &r.MaxRate)
	if *lo > *hi {
		return &fault.Error{Reason: fault.AdmissionRatesInvalid, Field: "min_admission_rate",
			Message: "min_admission_rate must not exceed max_admission_rate"}
	}
	if u.OpensAt == nil {
		return nil
	}
	opens, ends := *u.OpensAt, *cmp.Or(u.EndsAt, &r.EndsAt)
	if opens.Before(now) {
		opens = now
	}
	if !ends.After(opens) {
		return &fault.Error{Reason: fault.SaleWindowInvalid, Field: "opens_at", Message: fmt.Sprintf(
			"the waiting room closes at %s, so the sale must open before then (move ends_at too)", ends.Format(time.RFC3339))}
	}
	return nil
}

func (st *roomStore) update(ctx context.Context, r *Room, u Update, by string, now time.Time) (*Room, error) {
	err := st.catalog.UpdateSaleRoom(ctx, r.SaleID,
		catalog.RoomChange{Paused: u.Paused, MinRate: u.MinRate, MaxRate: u.MaxRate, EndsAt: u.EndsAt}, by, now)
	st.forget(r)
	switch {
	case errors.Is(err, catalog.ErrNotFound):
		return nil, fault.New(fault.WaitingRoomNotFound, "sale %d has no waiting room", r.SaleID)
	case err != nil:
		return nil, err
	}
	return st.get(ctx, r.SaleID)
}
