-- How the family types and reads amounts on the screens ("1,234.56",
-- "1.234,56" or "1 234,56"); empty means the usual format of its currency.
ALTER TABLE families ADD COLUMN number_format text NOT NULL DEFAULT '';
