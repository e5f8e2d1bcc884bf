-- Files as banks send them (issue 25 item 4): the character encoding an
-- import reads its file in ('' is detected from the bytes), kept with a saved
-- mapping so that the next file of the same bank reads the same; a layout of
-- separate debit and credit columns instead of one signed amount; and the
-- line of the file each row came from, so that a bad row can be found.
ALTER TABLE imports ADD COLUMN encoding varchar(16) NOT NULL DEFAULT '';

--bun:split

ALTER TABLE imports ADD COLUMN debit_col_label varchar(255);

--bun:split

ALTER TABLE imports ADD COLUMN credit_col_label varchar(255);

--bun:split

ALTER TABLE import_mappings ADD COLUMN encoding varchar(16) NOT NULL DEFAULT '';

--bun:split

ALTER TABLE import_mappings ADD COLUMN debit_col_label varchar(255);

--bun:split

ALTER TABLE import_mappings ADD COLUMN credit_col_label varchar(255);

--bun:split

ALTER TABLE import_rows ADD COLUMN line integer NOT NULL DEFAULT 0;
