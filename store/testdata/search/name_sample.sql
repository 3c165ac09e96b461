SELECT lower(file_name) FROM packages
TABLESAMPLE SYSTEM ((SELECT least(100, 100 * @rows::int / greatest(reltuples, 1)) FROM pg_class WHERE oid = 'packages'::regclass))
REPEATABLE (42) LIMIT 2 * @rows::int
