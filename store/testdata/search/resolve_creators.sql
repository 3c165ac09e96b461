SELECT DISTINCT lower(creator) FROM catalog_creators WHERE lower(creator) LIKE lower(@pattern::text) LIMIT @limit::int
