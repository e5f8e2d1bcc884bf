-- A restore of a family from the reference app's export (issue 28): the
-- file waits here, checked, until the job writes it all or nothing in one
-- database transaction; the job marks the row complete in that same
-- transaction, so a task delivered twice restores once. summary is what
-- was written, as JSON; error, why it was not.
CREATE TABLE restores (
    id           {{.UUID}} PRIMARY KEY,
    family_id    {{.UUID}} NOT NULL REFERENCES families (id) ON DELETE CASCADE,
    status       varchar(16) NOT NULL CHECK (status IN ('importing', 'complete', 'failed')),
    filename     varchar(255),
    file         {{if .Postgres}}bytea{{else}}blob{{end}},
    dry_run      text NOT NULL,
    summary      text,
    error        text,
    created_at   {{.Time}} NOT NULL,
    updated_at   {{.Time}} NOT NULL,
    completed_at {{.Time}}
);

--bun:split

CREATE INDEX restores_family_created ON restores (family_id, created_at);
