-- A search for a fragment of a name or path first asks name_tokens or
-- path_tokens (migrations 035, 036) for the tokens that hold it, up to 65
-- (store/search_sql.go, tokensHolding). PostgreSQL either walks the list's
-- B-tree in order until 65 tokens match, which suits a fragment many
-- tokens hold, or reads the tokens its trigram index gives, which suits a
-- rarer one. Which costs less depends on the fragment's share of the
-- tokens, and the default 100 histogram entries cannot tell 0.08 % from
-- 1 %: at 1,000,000 packages "ragonb" (152 of 191,000 tokens) was
-- estimated at 1,929, and the walk read 22,715 tokens (3.3 ms) where the
-- trigram index gives them in 0.6 ms. With 1,000 entries the estimate is
-- 191 and the plan the index; planning a lookup stays near 0.1 ms.
ALTER TABLE name_tokens ALTER COLUMN token SET STATISTICS 1000;
ALTER TABLE path_tokens ALTER COLUMN token SET STATISTICS 1000;
ANALYZE name_tokens;
ANALYZE path_tokens;
