-- Keeps what reading an import's file found besides its rows: the CSV
-- header (a JSON array) and the problems of the file as a whole (one a
-- line). The import's page shows them from here, with its stored rows,
-- instead of reading the file again on every view.
ALTER TABLE imports ADD COLUMN headers text NOT NULL DEFAULT '';
ALTER TABLE imports ADD COLUMN problems text NOT NULL DEFAULT '';
