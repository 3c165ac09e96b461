SELECT DISTINCT tag FROM catalog_tags WHERE lower(tag) LIKE lower(@pattern::text) LIMIT @limit::int
