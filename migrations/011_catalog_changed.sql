-- Every change to the catalog's searchable rows announces itself on the
-- catalog_changed channel, whoever makes it (the worker indexing or
-- grouping, a web process curating, a rebuild, psql): web processes keep
-- recent search results in memory and drop them when it fires. Statement
-- triggers send one notification per statement, and PostgreSQL folds
-- identical notifications of one transaction into one, delivered on commit.

CREATE FUNCTION hoard_catalog_changed() RETURNS trigger
    LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('catalog_changed', TG_TABLE_NAME);
    RETURN NULL;
END
$$;

CREATE TRIGGER packages_catalog_changed
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON packages
    FOR EACH STATEMENT EXECUTE FUNCTION hoard_catalog_changed();
CREATE TRIGGER package_groups_catalog_changed
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON package_groups
    FOR EACH STATEMENT EXECUTE FUNCTION hoard_catalog_changed();
CREATE TRIGGER package_files_catalog_changed
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON package_files
    FOR EACH STATEMENT EXECUTE FUNCTION hoard_catalog_changed();
