package catalog

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/timestamppb"

	catalogv1 "github.com/seatghor/seatghor/gen/seatghor/catalog/v1"
	"github.com/seatghor/seatghor/server/audit"
	"github.com/seatghor/seatghor/server/fault"
	"github.com/seatghor/seatghor/server/idempotency"
	"github.com/seatghor/seatghor/server/pg"
)

// Layout templates (decision 0372): a layout kept for many shows to be made
// from, a coach model or a venue's chart. The platform ships some in the
// binary (templates/*.json, catalog.v1.LayoutTemplate in protojson), which
// every organisation may use; an organisation keeps its own in the catalog
// (layout_templates). A show copies its template's places when it is made,
// so changing or adding templates never changes a show.

// ErrLayoutTemplateNotFound means no such template, of the organisation or
// shipped.
var ErrLayoutTemplateNotFound = fault.Sentinel(fault.LayoutTemplateNotFound, "layout template not found")

// ErrLayoutTemplateExists refuses a second template with an id in use.
var ErrLayoutTemplateExists = fault.Sentinel(fault.LayoutTemplateExists,
	"the organization has a layout template with this id, or it is a shipped template's")

// ErrLayoutTemplateForbidden refuses a caller who does not manage the
// template's organisation.
var ErrLayoutTemplateForbidden = fault.Sentinel(fault.LayoutTemplateForbidden,
	"only managers of the organization and admins keep its layout templates")

// Template is a layout template.
type Template struct {
	ID string
	// OrganizationID is empty for a shipped template.
	OrganizationID string
	Name, NameBn   string
	Layout         *Layout
	CreatedBy      string
	CreatedAt      time.Time
}

// Proto is t as the API carries it.
func (t Template) Proto() *catalogv1.LayoutTemplate {
	p := &catalogv1.LayoutTemplate{TemplateId: t.ID, OrganizationId: t.OrganizationID, Name: t.Name, NameBn: t.NameBn,
		Layout: t.Layout.Proto()}
	if !t.CreatedAt.IsZero() {
		p.CreatedAt = timestamppb.New(t.CreatedAt)
	}
	return p
}

// TemplateFromProto is the template p describes.
func TemplateFromProto(p *catalogv1.LayoutTemplate) Template {
	return Template{ID: p.GetTemplateId(), OrganizationID: p.GetOrganizationId(), Name: p.GetName(), NameBn: p.GetNameBn(),
		Layout: LayoutFromProto(p.GetLayout())}
}

//go:embed templates/*.json
var shippedFiles embed.FS

// shippedTemplates are the platform's templates, by id, read once.
var shippedTemplates = sync.OnceValues(func() (map[string]Template, error) {
	files, err := shippedFiles.ReadDir("templates")
	if err != nil {
		return nil, fmt.Errorf("shipped layout templates: %w", err)
	}
	out := map[string]Template{}
	for _, f := range files {
		b, err := shippedFiles.ReadFile(path.Join("templates", f.Name()))
		if err != nil {
			return nil, fmt.Errorf("shipped layout template %s: %w", f.Name(), err)
		}
		var p catalogv1.LayoutTemplate
		if err := protojson.Unmarshal(b, &p); err != nil {
			return nil, fmt.Errorf("shipped layout template %s: %w", f.Name(), err)
		}
		t := TemplateFromProto(&p)
		if t.ID+".json" != f.Name() {
			return nil, fmt.Errorf("shipped layout template %s has id %q", f.Name(), t.ID)
		}
		if err := t.Layout.check(fault.LayoutTemplateInvalid, "layout"); err != nil {
			return nil, fmt.Errorf("shipped layout template %s: %w", f.Name(), err)
		}
		out[t.ID] = t
	}
	return out, nil
})

// ShippedTemplates lists the platform's templates by id.
func ShippedTemplates() ([]Template, error) {
	m, err := shippedTemplates()
	if err != nil {
		return nil, err
	}
	out := make([]Template, 0, len(m))
	for _, t := range m {
		out = append(out, t.clone())
	}
	slices.SortFunc(out, func(a, b Template) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// clone is t with a layout of its own: a shipped template is shared, and
// its layout must not change under a show made from it.
func (t Template) clone() Template {
	b, _ := json.Marshal(t.Layout) // a Layout always encodes
	t.Layout = &Layout{}
	_ = json.Unmarshal(b, t.Layout)
	return t
}

// mayKeepTemplates refuses a caller who may not store or read orgID's
// templates: its managers and admins may.
func (s *Service) mayKeepTemplates(ctx context.Context, caller string, admin bool, orgID string) error {
	if admin {
		return nil
	}
	ok, err := s.HasRole(ctx, orgID, caller, RoleManager)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("templates of %q: %w", orgID, ErrLayoutTemplateForbidden)
	}
	return nil
}

// CreateLayoutTemplate stores t for its organisation, whose managers and
// admins may (admin). Its id must be new to the organisation and not a
// shipped template's; its layout is checked as a show's is and completed
// the same way (straight rows for places without positions, deck sizes).
func (s *Service) CreateLayoutTemplate(ctx context.Context, by string, admin bool, t Template) (Template, error) {
	layout, err := s.checkTemplate(ctx, by, admin, t, ErrLayoutTemplateExists)
	if err != nil {
		return Template{}, err
	}
	now := s.clock.Now().UTC().Truncate(time.Microsecond)
	t.CreatedBy, t.CreatedAt = by, now
	return idempotency.Do(ctx, s.router.Catalog(), errorCodec, idempotency.Options{Now: now, Wait: 3 * time.Second},
		func(tx pgx.Tx) (Template, error) {
			if _, err := getOrganization(ctx, tx, t.OrganizationID); err != nil {
				return Template{}, err
			}
			tag, err := tx.Exec(ctx, `
				INSERT INTO layout_templates (organization_id, template_id, name, name_bn, layout, created_by, created_at)
				VALUES ($1, $2, $3, $4, $5, $6, $7)
				ON CONFLICT (organization_id, template_id) DO NOTHING`,
				t.OrganizationID, t.ID, t.Name, t.NameBn, layout, t.CreatedBy, t.CreatedAt)
			if err != nil {
				return Template{}, fmt.Errorf("insert layout template %s of %s: %w", t.ID, t.OrganizationID, err)
			}
			if tag.RowsAffected() == 0 {
				return Template{}, fmt.Errorf("template %q of %s: %w", t.ID, t.OrganizationID, ErrLayoutTemplateExists)
			}
			actor := audit.Actor{Kind: audit.ActorUser, ID: by}
			if admin {
				actor.Kind = audit.ActorAdmin
			}
			return t, audit.Record(ctx, tx, audit.Entry{At: now, Actor: actor, Action: "layout_template.create",
				Target: fmt.Sprintf("layout_template:%s:%s", t.OrganizationID, t.ID), OrganizationID: t.OrganizationID,
				Detail: map[string]any{"after": map[string]any{"name": t.Name, "seats": t.Layout.SeatCount()}}})
		})
}

// checkTemplate checks t as its organisation keeps it, for by (admin or
// not): an organisation's, whose managers and admins may keep templates,
// with seats and a layout as a show's; an id of a shipped template is
// refused with shippedErr. It answers the layout as stored.
func (s *Service) checkTemplate(ctx context.Context, by string, admin bool, t Template, shippedErr error) ([]byte, error) {
	if t.OrganizationID == "" {
		return nil, fault.OnField(fault.LayoutTemplateInvalid, "template.organization_id",
			"name the organization that keeps the template")
	}
	if err := s.mayKeepTemplates(ctx, by, admin, t.OrganizationID); err != nil {
		return nil, err
	}
	if t.Layout == nil || t.Layout.SeatCount() == 0 {
		return nil, fault.OnField(fault.LayoutTemplateInvalid, "template.layout", "a layout template needs seats")
	}
	if err := t.Layout.check(fault.LayoutTemplateInvalid, "template.layout"); err != nil {
		return nil, err
	}
	shipped, err := shippedTemplates()
	if err != nil {
		return nil, err
	}
	if _, ok := shipped[t.ID]; ok {
		return nil, fmt.Errorf("template %q: %w", t.ID, shippedErr)
	}
	layout, err := json.Marshal(t.Layout)
	if err != nil {
		return nil, fmt.Errorf("encode layout template %s: %w", t.ID, err)
	}
	return layout, nil
}

// UpdateLayoutTemplate replaces the names and the layout of an
// organisation's template t (decision 0466), for its managers and admins,
// checked as a new one is. The shows made from it keep the layout they
// were made with (each has its own copy of its places); shows made from now
// on take the new one. A shipped template is nobody's to change. The
// audit entry says the seats before and after; the same template again
// changes nothing and records nothing.
func (s *Service) UpdateLayoutTemplate(ctx context.Context, by string, admin bool, t Template) (Template, error) {
	layout, err := s.checkTemplate(ctx, by, admin, t, ErrLayoutTemplateForbidden)
	if err != nil {
		return Template{}, err
	}
	now := s.clock.Now().UTC().Truncate(time.Microsecond)
	var out Template
	err = pg.InTx(ctx, s.router.Catalog(), func(tx pgx.Tx) error {
		old, err := scanTemplate(tx.QueryRow(ctx, `SELECT `+templateColumns+` FROM layout_templates
			WHERE organization_id = $1 AND template_id = $2 FOR UPDATE`, t.OrganizationID, t.ID))
		found, err := pg.Found(err)
		if err != nil {
			return fmt.Errorf("lock layout template %s of %s: %w", t.ID, t.OrganizationID, err)
		}
		if !found {
			return fmt.Errorf("template %q of %q: %w", t.ID, t.OrganizationID, ErrLayoutTemplateNotFound)
		}
		out = t
		out.CreatedBy, out.CreatedAt = old.CreatedBy, old.CreatedAt
		before, err := json.Marshal(old.Layout)
		if err != nil {
			return fmt.Errorf("encode layout template %s: %w", t.ID, err)
		}
		if old.Name == t.Name && old.NameBn == t.NameBn && string(before) == string(layout) {
			return nil // as it is
		}
		if _, err := tx.Exec(ctx, `UPDATE layout_templates SET name = $3, name_bn = $4, layout = $5
			WHERE organization_id = $1 AND template_id = $2`, t.OrganizationID, t.ID, t.Name, t.NameBn, layout); err != nil {
			return fmt.Errorf("update layout template %s of %s: %w", t.ID, t.OrganizationID, err)
		}
		actor := audit.Actor{Kind: audit.ActorUser, ID: by}
		if admin {
			actor.Kind = audit.ActorAdmin
		}
		return audit.Record(ctx, tx, audit.Entry{At: now, Actor: actor, Action: "layout_template.update",
			Target: fmt.Sprintf("layout_template:%s:%s", t.OrganizationID, t.ID), OrganizationID: t.OrganizationID,
			Detail: map[string]any{"before": map[string]any{"name": old.Name, "seats": old.Layout.SeatCount()},
				"after": map[string]any{"name": t.Name, "seats": t.Layout.SeatCount()}}})
	})
	return out, err
}

const templateColumns = `template_id, organization_id, name, name_bn, layout, created_by, created_at`

func scanTemplate(row pgx.Row) (Template, error) {
	var (
		t      Template
		layout []byte
	)
	if err := row.Scan(&t.ID, &t.OrganizationID, &t.Name, &t.NameBn, &layout, &t.CreatedBy, &t.CreatedAt); err != nil {
		return t, err
	}
	t.CreatedAt = t.CreatedAt.UTC()
	t.Layout = &Layout{}
	if err := json.Unmarshal(layout, t.Layout); err != nil {
		return t, fmt.Errorf("decode layout template %s of %s: %w", t.ID, t.OrganizationID, err)
	}
	return t, nil
}

// LayoutTemplate returns a template: a shipped one by its id, whatever
// orgID is (to any caller the API lets ask), else orgID's, to its managers
// and admins.
func (s *Service) LayoutTemplate(ctx context.Context, caller string, admin bool, orgID, id string) (Template, error) {
	shipped, err := shippedTemplates()
	if err != nil {
		return Template{}, err
	}
	if t, ok := shipped[id]; ok {
		return t.clone(), nil
	}
	if orgID == "" {
		return Template{}, fmt.Errorf("template %q: %w", id, ErrLayoutTemplateNotFound)
	}
	if err := s.mayKeepTemplates(ctx, caller, admin, orgID); err != nil {
		return Template{}, err
	}
	return s.orgTemplate(ctx, s.router.Catalog(), orgID, id)
}

// orgTemplate reads orgID's template id from q.
func (s *Service) orgTemplate(ctx context.Context, q Querier, orgID, id string) (Template, error) {
	t, err := scanTemplate(q.QueryRow(ctx, `SELECT `+templateColumns+` FROM layout_templates
		WHERE organization_id = $1 AND template_id = $2`, orgID, id))
	found, err := pg.Found(err)
	if err != nil {
		return Template{}, fmt.Errorf("read layout template %s of %s: %w", id, orgID, err)
	}
	if !found {
		return Template{}, fmt.Errorf("template %q of %q: %w", id, orgID, ErrLayoutTemplateNotFound)
	}
	return t, nil
}

// LayoutTemplates lists the templates orgID's shows may be made from: the
// shipped ones, then the organisation's own (to its managers and admins),
// each group by id. An empty orgID lists the shipped ones.
func (s *Service) LayoutTemplates(ctx context.Context, caller string, admin bool, orgID string) ([]Template, error) {
	out, err := ShippedTemplates()
	if err != nil || orgID == "" {
		return out, err
	}
	if err := s.mayKeepTemplates(ctx, caller, admin, orgID); err != nil {
		return nil, err
	}
	rows, err := s.router.Catalog().Query(ctx, `SELECT `+templateColumns+` FROM layout_templates
		WHERE organization_id = $1 ORDER BY template_id`, orgID)
	if err != nil {
		return nil, fmt.Errorf("list layout templates of %s: %w", orgID, err)
	}
	own, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Template, error) { return scanTemplate(r) })
	if err != nil {
		return nil, fmt.Errorf("list layout templates of %s: %w", orgID, err)
	}
	return append(out, own...), nil
}

// templateLayout is the layout a show of orgID makes from template id: a
// shipped one, else the organisation's. An unknown id is invalid input of
// the show (layout_template_id).
func (s *Service) templateLayout(ctx context.Context, orgID, id string) (*Layout, error) {
	shipped, err := shippedTemplates()
	if err != nil {
		return nil, err
	}
	if t, ok := shipped[id]; ok {
		return t.clone().Layout, nil
	}
	t, err := s.orgTemplate(ctx, s.router.Catalog(), orgID, id)
	if errors.Is(err, ErrLayoutTemplateNotFound) || (err == nil && orgID == "") {
		return nil, fault.OnField(fault.LayoutTemplateNotFound, "layout_template_id",
			"no layout template %q: neither a shipped one nor one of organization %q", id, orgID)
	}
	if err != nil {
		return nil, err
	}
	return t.Layout, nil
}
