(SELECT DISTINCT token FROM name_tokens WHERE token LIKE @token_like::text LIMIT @limit::int)
UNION ALL (SELECT token FROM name_tokens WHERE token = '' LIMIT 1)
