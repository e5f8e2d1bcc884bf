-- Counts every change to what a rule can name where the data changes, in the
-- database: a row of rules, rule_conditions, rule_actions, categories,
-- merchants or tags inserted, updated or deleted bumps its family's
-- rules_version, whatever code wrote it (see TestRulesVersionTriggers). A
-- table a rule comes to name gets its triggers the same way.
{{if .Postgres}}
CREATE FUNCTION bump_rules_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        UPDATE families SET rules_version = rules_version + 1 WHERE id = OLD.family_id;
    ELSE
        UPDATE families SET rules_version = rules_version + 1 WHERE id = NEW.family_id;
    END IF;
    RETURN NULL;
END
$$;

--bun:split

CREATE TRIGGER rules_rules_version AFTER INSERT OR UPDATE OR DELETE ON rules
    FOR EACH ROW EXECUTE FUNCTION bump_rules_version();

--bun:split

CREATE TRIGGER rule_conditions_rules_version AFTER INSERT OR UPDATE OR DELETE ON rule_conditions
    FOR EACH ROW EXECUTE FUNCTION bump_rules_version();

--bun:split

CREATE TRIGGER rule_actions_rules_version AFTER INSERT OR UPDATE OR DELETE ON rule_actions
    FOR EACH ROW EXECUTE FUNCTION bump_rules_version();

--bun:split

CREATE TRIGGER categories_rules_version AFTER INSERT OR UPDATE OR DELETE ON categories
    FOR EACH ROW EXECUTE FUNCTION bump_rules_version();

--bun:split

CREATE TRIGGER merchants_rules_version AFTER INSERT OR UPDATE OR DELETE ON merchants
    FOR EACH ROW EXECUTE FUNCTION bump_rules_version();

--bun:split

CREATE TRIGGER tags_rules_version AFTER INSERT OR UPDATE OR DELETE ON tags
    FOR EACH ROW EXECUTE FUNCTION bump_rules_version();
{{else}}
CREATE TRIGGER rules_rules_version_insert AFTER INSERT ON rules BEGIN
    UPDATE families SET rules_version = rules_version + 1 WHERE id = NEW.family_id;
END;

--bun:split

CREATE TRIGGER rules_rules_version_update AFTER UPDATE ON rules BEGIN
    UPDATE families SET rules_version = rules_version + 1 WHERE id = NEW.family_id;
END;

--bun:split

CREATE TRIGGER rules_rules_version_delete AFTER DELETE ON rules BEGIN
    UPDATE families SET rules_version = rules_version + 1 WHERE id = OLD.family_id;
END;

--bun:split

CREATE TRIGGER rule_conditions_rules_version_insert AFTER INSERT ON rule_conditions BEGIN
    UPDATE families SET rules_version = rules_version + 1 WHERE id = NEW.family_id;
END;

--bun:split

CREATE TRIGGER rule_conditions_rules_version_update AFTER UPDATE ON rule_conditions BEGIN
    UPDATE families SET rules_version = rules_version + 1 WHERE id = NEW.family_id;
END;

--bun:split

CREATE TRIGGER rule_conditions_rules_version_delete AFTER DELETE ON rule_conditions BEGIN
    UPDATE families SET rules_version = rules_version + 1 WHERE id = OLD.family_id;
END;

--bun:split

CREATE TRIGGER rule_actions_rules_version_insert AFTER INSERT ON rule_actions BEGIN
    UPDATE families SET rules_version = rules_version + 1 WHERE id = NEW.family_id;
END;

--bun:split

CREATE TRIGGER rule_actions_rules_version_update AFTER UPDATE ON rule_actions BEGIN
    UPDATE families SET rules_version = rules_version + 1 WHERE id = NEW.family_id;
END;

--bun:split

CREATE TRIGGER rule_actions_rules_version_delete AFTER DELETE ON rule_actions BEGIN
    UPDATE families SET rules_version = rules_version + 1 WHERE id = OLD.family_id;
END;

--bun:split

CREATE TRIGGER categories_rules_version_insert AFTER INSERT ON categories BEGIN
    UPDATE families SET rules_version = rules_version + 1 WHERE id = NEW.family_id;
END;

--bun:split

CREATE TRIGGER categories_rules_version_update AFTER UPDATE ON categories BEGIN
    UPDATE families SET rules_version = rules_version + 1 WHERE id = NEW.family_id;
END;

--bun:split

CREATE TRIGGER categories_rules_version_delete AFTER DELETE ON categories BEGIN
    UPDATE families SET rules_version = rules_version + 1 WHERE id = OLD.family_id;
END;

--bun:split

CREATE TRIGGER merchants_rules_version_insert AFTER INSERT ON merchants BEGIN
    UPDATE families SET rules_version = rules_version + 1 WHERE id = NEW.family_id;
END;

--bun:split

CREATE TRIGGER merchants_rules_version_update AFTER UPDATE ON merchants BEGIN
    UPDATE families SET rules_version = rules_version + 1 WHERE id = NEW.family_id;
END;

--bun:split

CREATE TRIGGER merchants_rules_version_delete AFTER DELETE ON merchants BEGIN
    UPDATE families SET rules_version = rules_version + 1 WHERE id = OLD.family_id;
END;

--bun:split

CREATE TRIGGER tags_rules_version_insert AFTER INSERT ON tags BEGIN
    UPDATE families SET rules_version = rules_version + 1 WHERE id = NEW.family_id;
END;

--bun:split

CREATE TRIGGER tags_rules_version_update AFTER UPDATE ON tags BEGIN
    UPDATE families SET rules_version = rules_version + 1 WHERE id = NEW.family_id;
END;

--bun:split

CREATE TRIGGER tags_rules_version_delete AFTER DELETE ON tags BEGIN
    UPDATE families SET rules_version = rules_version + 1 WHERE id = OLD.family_id;
END;
{{end}}
