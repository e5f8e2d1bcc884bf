-- Family exports (issue 28 item 2): a family's whole data as the reference
-- app's export ZIP (CSV files and all.ndjson), built in the background by the
-- family:export job. The ZIP is kept in the database like an import's file,
-- but as chunks of at most 1 MiB, so that neither the job that writes it nor
-- the download that reads it holds the whole file in memory.

CREATE TABLE family_exports (
    id           {{.UUID}} PRIMARY KEY,
    family_id    {{.UUID}} NOT NULL REFERENCES families (id) ON DELETE CASCADE,
    status       varchar(16) NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'processing', 'completed', 'failed')),
    byte_size    bigint NOT NULL DEFAULT 0,
    error        text,
    created_at   {{.Time}} NOT NULL,
    updated_at   {{.Time}} NOT NULL,
    completed_at {{.Time}}
);

--bun:split

CREATE INDEX family_exports_family_order_idx ON family_exports (family_id, created_at DESC, id DESC);

--bun:split

-- One piece of an export's ZIP, in order of position from 0.
CREATE TABLE family_export_chunks (
    export_id {{.UUID}} NOT NULL REFERENCES family_exports (id) ON DELETE CASCADE,
    family_id {{.UUID}} NOT NULL REFERENCES families (id) ON DELETE CASCADE,
    position  integer NOT NULL,
    data      {{if .Postgres}}bytea{{else}}blob{{end}} NOT NULL,
    PRIMARY KEY (export_id, position)
);
