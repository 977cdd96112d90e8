// Package webhookfeed is the projector that turns outbox events into
// webhook deliveries (issue 12, decision 0190). It only enqueues: durable
// rows in the catalog database that webhook.Worker sends, so an endpoint
// that is slow or down never holds up the outbox consumer. Like every
// projector it runs once per source database, checkpointed and gap-free,
// and is idempotent: a delivery is one row per (endpoint, event).
package webhookfeed

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/seatghor/seatghor/projections"
	"github.com/seatghor/seatghor/server/webhook"
)

// Queue records deliveries (webhook.Service).
type Queue interface {
	Enqueue(ctx context.Context, msgs []webhook.Message) (int, error)
}

// Channels tells which partner sold an order (booking.Service).
type Channels interface {
	OrderPartners(ctx context.Context, showID int64, orderIDs []string) (map[string]int64, error)
}

// Projector enqueues webhook deliveries from outbox events.
type Projector struct {
	queue    Queue
	channels Channels
}

// NewProjector returns the projector.
func NewProjector(q Queue, c Channels) *Projector { return &Projector{queue: q, channels: c} }

// Name implements projections.Projector.
func (p *Projector) Name() string { return "webhooks" }

// Reset implements projections.Projector: there is nothing to drop. A
// rebuild replays the outbox, and what was enqueued before stays enqueued
// once (the deliveries are a log, not a read model).
func (p *Projector) Reset(context.Context) error { return nil }

// envelope is the body POSTed: the Standard Webhooks payload shape, with
// the outbox event's id (the same for every endpoint, unlike webhook-id).
type envelope struct {
	Type      string          `json:"type"`
	Timestamp time.Time       `json:"timestamp"`
	EventID   string          `json:"event_id"`
	Data      json.RawMessage `json:"data"`
}

// pending is an event that goes out, before its partner is known.
type pending struct {
	msg     webhook.Message
	showID  int64
	orderID string
}

// Apply implements projections.Projector.
func (p *Projector) Apply(ctx context.Context, events []projections.Event) error {
	var out []pending
	for _, e := range events {
		typ, ok := webhook.TypeOf(e.Type)
		if !ok {
			continue
		}
		mt, err := protoregistry.GlobalTypes.FindMessageByName(protoreflect.FullName(e.Type))
		if err != nil {
			continue // an event of a newer release: no webhook carries it here
		}
		msg := mt.New().Interface()
		if err := proto.Unmarshal(e.Payload, msg); err != nil {
			return fmt.Errorf("webhooks: decode %s %s: %w", e.Type, e.EventID, err)
		}
		omit(msg.ProtoReflect(), typ.Omit)
		data, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(msg)
		if err != nil {
			return fmt.Errorf("webhooks: encode %s %s: %w", e.Type, e.EventID, err)
		}
		body, err := json.Marshal(envelope{Type: typ.Name, Timestamp: e.OccurredAt.UTC(), EventID: e.EventID, Data: data})
		if err != nil {
			return fmt.Errorf("webhooks: encode %s %s: %w", e.Type, e.EventID, err)
		}
		pm := pending{msg: webhook.Message{EventID: e.EventID, Type: typ.Name, OccurredAt: e.OccurredAt, Body: body,
			ShowID: e.ShowID}, showID: e.ShowID}
		audience(typ.Audience, msg.ProtoReflect(), &pm)
		out = append(out, pm)
	}
	if len(out) == 0 {
		return nil
	}
	if err := p.partners(ctx, events[0].Source, out); err != nil {
		return err
	}
	msgs := make([]webhook.Message, len(out))
	for i, pm := range out {
		msgs[i] = pm.msg
	}
	_, err := p.queue.Enqueue(ctx, msgs)
	return err
}

// omit clears the fields no webhook carries (decision 0285), so the body
// signed and sent never holds them, for any endpoint.
func omit(m protoreflect.Message, names []string) {
	for _, n := range names {
		if f := m.Descriptor().Fields().ByName(protoreflect.Name(n)); f != nil {
			m.Clear(f)
		}
	}
}

// audience decides whom an event concerns (decisions 0190, 0285): the
// partner it names (an allocation's partner_id), the partner of the order
// it names (looked up), or the partners allowed to sell its show. An event
// without the field its type's audience reads concerns no partner: only
// admins' endpoints get it.
func audience(a webhook.Audience, m protoreflect.Message, pm *pending) {
	fields := m.Descriptor().Fields()
	switch a {
	case webhook.Sellers:
		pm.msg.Sellers = true
	case webhook.ByPartner:
		if f := fields.ByName("partner_id"); f != nil && f.Kind() == protoreflect.Int64Kind {
			pm.msg.PartnerID = m.Get(f).Int()
		}
	case webhook.ByOrder:
		if f := fields.ByName("order_id"); f != nil && f.Kind() == protoreflect.StringKind {
			pm.orderID = m.Get(f).String()
		}
	}
}

// partners fills in the partner of every order event, one query per show.
func (p *Projector) partners(ctx context.Context, source string, out []pending) error {
	byShow := map[int64][]string{}
	for _, pm := range out {
		if pm.orderID != "" {
			byShow[pm.showID] = append(byShow[pm.showID], pm.orderID)
		}
	}
	found := map[string]int64{}
	for show, ids := range byShow {
		m, err := p.channels.OrderPartners(ctx, show, ids)
		if err != nil {
			return fmt.Errorf("webhooks: partners of orders in %s: %w", source, err)
		}
		for id, partner := range m {
			found[id] = partner
		}
	}
	for i := range out {
		if id := out[i].orderID; id != "" {
			out[i].msg.PartnerID = found[id]
		}
	}
	return nil
}
