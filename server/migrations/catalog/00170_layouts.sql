-- +goose Up
-- The layout model of venues and coaches (issue 24; decision 0370).
--
-- An organisation's layout templates: a coach model or a venue's chart,
-- kept for many shows to be made from (CreateShowRequest
-- layout_template_id). layout is the catalog's Layout as JSON (decks,
-- sections of rows of places with positions and kinds, features). A show
-- copies the template's places when it is made, so a template is never
-- read again for an existing show. The platform's shipped templates
-- ("coach-2x2-40") live in the binary, not here.
CREATE TABLE layout_templates (
    organization_id text        NOT NULL REFERENCES organizations,
    template_id     text        NOT NULL,
    name            text        NOT NULL,
    name_bn         text        NOT NULL DEFAULT '',
    layout          jsonb       NOT NULL,
    created_by      text        NOT NULL,
    created_at      timestamptz NOT NULL,
    PRIMARY KEY (organization_id, template_id)
);

-- A show's places as drawn, when the request gave a layout or a template
-- (NULL: straight rows of its sections, as before), and the template.
-- Read only for one show (never by the listings, which read layout).
ALTER TABLE shows ADD COLUMN places jsonb;
ALTER TABLE shows ADD COLUMN layout_template_id text;

-- +goose Down
ALTER TABLE shows DROP COLUMN layout_template_id;
ALTER TABLE shows DROP COLUMN places;
DROP TABLE layout_templates;
