-- users.chat_count is the number of the user's chats, kept by triggers on
-- chats whatever code writes them (create, delete, a restore, a cascade),
-- so that a page of chats reads its total from one row instead of counting
-- every chat of the user on each request (issue 30: the count was most of
-- the page's PostgreSQL time at 1,000 chats). See TestChatCount.
ALTER TABLE users ADD COLUMN chat_count integer NOT NULL DEFAULT 0;

--bun:split

UPDATE users SET chat_count = (SELECT count(*) FROM chats WHERE chats.family_id = users.family_id AND chats.user_id = users.id);

--bun:split

{{if .Postgres}}
CREATE FUNCTION count_user_chats() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('DELETE', 'UPDATE') THEN
        UPDATE users SET chat_count = chat_count - 1 WHERE family_id = OLD.family_id AND id = OLD.user_id;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        UPDATE users SET chat_count = chat_count + 1 WHERE family_id = NEW.family_id AND id = NEW.user_id;
    END IF;
    RETURN NULL;
END
$$;

--bun:split

CREATE TRIGGER chats_count_insert_delete AFTER INSERT OR DELETE ON chats
    FOR EACH ROW EXECUTE FUNCTION count_user_chats();

--bun:split

-- A chat never changes hands today; if one ever does, its count follows.
CREATE TRIGGER chats_count_move AFTER UPDATE OF user_id, family_id ON chats
    FOR EACH ROW WHEN (OLD.user_id IS DISTINCT FROM NEW.user_id OR OLD.family_id IS DISTINCT FROM NEW.family_id)
    EXECUTE FUNCTION count_user_chats();
{{else}}
CREATE TRIGGER chats_count_insert AFTER INSERT ON chats BEGIN
    UPDATE users SET chat_count = chat_count + 1 WHERE family_id = NEW.family_id AND id = NEW.user_id;
END;

--bun:split

CREATE TRIGGER chats_count_delete AFTER DELETE ON chats BEGIN
    UPDATE users SET chat_count = chat_count - 1 WHERE family_id = OLD.family_id AND id = OLD.user_id;
END;

--bun:split

-- A chat never changes hands today; if one ever does, its count follows.
CREATE TRIGGER chats_count_move AFTER UPDATE OF user_id, family_id ON chats
    WHEN OLD.user_id IS NOT NEW.user_id OR OLD.family_id IS NOT NEW.family_id BEGIN
    UPDATE users SET chat_count = chat_count - 1 WHERE family_id = OLD.family_id AND id = OLD.user_id;
    UPDATE users SET chat_count = chat_count + 1 WHERE family_id = NEW.family_id AND id = NEW.user_id;
END;
{{end}}
