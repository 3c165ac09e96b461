(SELECT DISTINCT token FROM path_tokens WHERE token LIKE @token_like::text LIMIT @limit::int)
UNION ALL (SELECT token FROM path_tokens WHERE token = '' LIMIT 1)
