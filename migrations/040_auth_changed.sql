-- Every change to what a signed-in request is let do announces itself on
-- the auth_changed channel, whoever makes it (a web process, the worker's
-- bot linking an account, the CLI, psql): web processes keep the sessions
-- of recent requests in memory for a few seconds (web/sessioncache.go) and
-- drop them all when it fires. That is a user's role, password or account
-- (users), a session ended or cut short (sessions), and a messenger link
-- made or removed (messenger_links, the pages' Send button). A session's
-- sliding expiry moving later (its owner active) changes nothing a request
-- may do and is not announced. Statement triggers send one notification
-- per statement, and PostgreSQL folds identical notifications of one
-- transaction into one, delivered on commit.

CREATE FUNCTION hoard_auth_changed() RETURNS trigger
    LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('auth_changed', TG_TABLE_NAME);
    RETURN NULL;
END
$$;

CREATE TRIGGER users_auth_changed
    AFTER UPDATE OR DELETE OR TRUNCATE ON users
    FOR EACH STATEMENT EXECUTE FUNCTION hoard_auth_changed();
CREATE TRIGGER messenger_links_auth_changed
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON messenger_links
    FOR EACH STATEMENT EXECUTE FUNCTION hoard_auth_changed();
CREATE TRIGGER sessions_auth_changed
    AFTER DELETE OR TRUNCATE ON sessions
    FOR EACH STATEMENT EXECUTE FUNCTION hoard_auth_changed();
CREATE TRIGGER sessions_cut_short
    AFTER UPDATE ON sessions
    FOR EACH ROW WHEN (NEW.expires_at < OLD.expires_at OR NEW.user_id IS DISTINCT FROM OLD.user_id OR NEW.id IS DISTINCT FROM OLD.id)
    EXECUTE FUNCTION hoard_auth_changed();
