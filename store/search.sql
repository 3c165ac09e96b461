-- The statements of the catalog search (search_sql.go), as Go templates.
-- Each template below the fragments is a family of search shapes;
-- searchShapes in search_sql.go instantiates it once per order that it
-- serves, at start, into one whole statement per shape name, and the search only picks a
-- name and binds its arguments (pgx.NamedArgs; an argument it leaves out
-- is NULL). The exact text of every shape is in testdata/search/, one file
-- a name: `go test ./store -run TestSearchStatements -update` rewrites them.
--
-- Optional conditions are written `(@x IS NULL OR …)` (or `IS NOT TRUE
-- OR`, `IS NOT FALSE OR`): before a statement is sent, each of an argument
-- the search leaves unbound is cut to TRUE (search_optional.go), so that
-- PostgreSQL neither parses nor plans the filters a search does not use;
-- likewise an optional branch, `UNION ALL (/*if @x*/SELECT …)`, is cut
-- whole where x is unbound (a word_window's lexemes beyond the word's).
-- The search's statements are planned with their arguments
-- (QueryExecModeExec, the unnamed statement), where PostgreSQL folds a
-- bound argument to a constant. The shapes of package_words (words_*)
-- are prepared instead, planned once for every word: they have no
-- optional condition whose plan depends on an argument.

{{/* filters are the query's filters on the packages aliased by the dot:
  creator: the creator filter resolved to one lower-cased name (equality:
    only then does PostgreSQL read the creator index in time order),
  creators: to several, creator_like: to too many (a LIKE pattern);
  tags_any: the first tag filter's names; tag_group, tag_name, tag_like:
    the other tag filters (each group needs one of its names, or, like,
    a tag matching the pattern);
  extensions: LIKE patterns of the file name's end; grouped: true only
    grouped packages, false only the others. */}}
{{define "filters"}}(@creator::text IS NULL OR lower({{.}}.creator) = @creator::text)
		AND (@creators::text[] IS NULL OR lower({{.}}.creator) = ANY(@creators::text[]))
		AND (@creator_like::text IS NULL OR lower({{.}}.creator) LIKE lower(@creator_like::text))
		AND (@tags_any::text[] IS NULL OR {{.}}.tags && @tags_any::text[])
		AND (@tag_group::int[] IS NULL OR NOT EXISTS (
			SELECT FROM unnest(@tag_group::int[], @tag_name::text[], @tag_like::bool[]) AS tf(grp, name, is_like)
			GROUP BY tf.grp
			HAVING NOT bool_or(CASE WHEN tf.is_like THEN EXISTS (SELECT FROM unnest({{.}}.tags) t WHERE lower(t) LIKE lower(tf.name))
				ELSE tf.name = ANY({{.}}.tags) END)))
		AND (@channel_id::bigint IS NULL OR {{.}}.source_channel_id = @channel_id::bigint)
		AND (@archive_type::text IS NULL OR {{.}}.archive_type = @archive_type::text)
		AND (@extensions::text[] IS NULL OR lower({{.}}.file_name) LIKE ANY(@extensions::text[]))
		AND (@grouped::bool IS NOT TRUE OR {{.}}.package_group_id IS NOT NULL)
		AND (@grouped::bool IS NOT FALSE OR {{.}}.package_group_id IS NULL)
		AND (@has_preview::bool IS NULL OR {{.}}.has_preview = @has_preview::bool){{end}}

{{/* match is the text condition on the packages aliased by the dot, one
  of: tsquery, the words (every one a prefix) in search_vector;
  match_lexemes, the same as a tsquery of the lexemes each word starts
  (word_lexemes), which the full-text index looks up as they are, where it
  scans for a prefix's; grams, the
  name's bigrams (the index of 1–2 characters); likes, the same as LIKE
  patterns of the lower-cased name (cheapest to test on rows read in
  another index's order); substring, an ILIKE pattern of the name;
  name_tokens, the same as the tokens that hold the text (one of which the
  lower-cased name lists) and the text (name_text) it holds. */}}
{{define "match"}}(@tsquery::text IS NULL OR {{.}}.search_vector @@ to_tsquery('english', @tsquery::text))
		AND (@match_lexemes::tsquery IS NULL OR {{.}}.search_vector @@ @match_lexemes::tsquery)
		AND (@grams::text[] IS NULL OR hoard_name_grams({{.}}.file_name) @> @grams::text[])
		AND (@likes::text[] IS NULL OR lower({{.}}.file_name) LIKE ALL(@likes::text[]))
		AND (@substring::text IS NULL OR {{.}}.file_name ILIKE @substring::text)
		AND (@name_tokens::text[] IS NULL OR hoard_tokens(lower({{.}}.file_name)) && @name_tokens::text[])
		AND (@name_text::text IS NULL OR strpos(lower({{.}}.file_name), @name_text::text) > 0){{end}}

{{/* newest_of_group keeps, with group_rows, a grouped package only when no
  newer member of its group matches: a group is represented by its newest
  matching member, so that it appears once across pages. */}}
{{define "newest_of_group"}}(NOT @group_rows::bool OR {{.}}.package_group_id IS NULL OR NOT EXISTS (
		SELECT 1 FROM packages n
		WHERE n.package_group_id = {{.}}.package_group_id AND (n.created_at, n.id) > ({{.}}.created_at, {{.}}.id)
		AND {{template "filters" "n"}}
		AND {{template "match" "n"}})){{end}}

{{/* list_columns are the columns of a row of every match's list (p: the
  package, g: the group of a group row). */}}
{{define "list_columns"}}CASE WHEN @group_rows::bool THEN coalesce(-p.package_group_id, p.id) ELSE p.id END AS row_key,
	0::real AS rank, false AS capped, 0::bigint AS total_rows, lower(p.file_name) AS sort_name,
	{{packageColumns "p"}},
	{{groupColumns}}{{end}}

{{/* list: every match in the order, planned by PostgreSQL (no text, the
  substring fallback). */}}
{{define "list"}}SELECT {{template "list_columns"}}
FROM packages p
LEFT JOIN package_groups g ON g.id = p.package_group_id AND @group_rows::bool
WHERE {{template "filters" "p"}}
	AND {{.After "p"}}
	AND {{template "match" "p"}}
	AND {{template "newest_of_group" "p"}}
ORDER BY {{.By "p"}}
LIMIT @limit::int{{end}}

{{/* list_walk: walks the order's index, testing the text on each row, until
  the page is full: for a text that many of the filtered rows match. */}}
{{define "list_walk"}}SELECT {{template "list_columns"}}
FROM (SELECT * FROM packages p
	WHERE {{template "filters" "p"}}
	AND {{.After "p"}}
	ORDER BY {{.By "p"}} OFFSET 0) p
LEFT JOIN package_groups g ON g.id = p.package_group_id AND @group_rows::bool
WHERE {{template "match" "p"}}
	AND {{template "newest_of_group" "p"}}
ORDER BY {{.By "p"}}
LIMIT @limit::int{{end}}

{{/* list_of_collected: the page of a list_* shape's collected matches (m:
  their ids), in the order. */}}
{{define "list_of_collected"}}SELECT {{template "list_columns"}}
FROM m JOIN packages p ON p.id = m.id
LEFT JOIN package_groups g ON g.id = p.package_group_id AND @group_rows::bool
WHERE {{template "newest_of_group" "p"}}
ORDER BY {{.By "p"}}
LIMIT @limit::int{{end}}

{{/* list_collect: collects every match from the text's index (and the
  filters' indexes) and sorts them: for a rarer text. */}}
{{define "list_collect"}}WITH m AS MATERIALIZED (
	SELECT p.id FROM packages p
	WHERE {{template "filters" "p"}}
	AND {{.After "p"}}
	AND {{template "match" "p"}})
{{template "list_of_collected" .}}{{end}}

{{/* list_collect_fenced: list_collect that collects the text's matches
  from its index alone and tests the filters on each (the OFFSET 0 keeps
  the planner from combining a big filter's bitmap with a rare text's). */}}
{{define "list_collect_fenced"}}WITH m AS MATERIALIZED (
	SELECT p.id FROM (SELECT * FROM packages p WHERE {{template "match" "p"}} OFFSET 0) p
	WHERE {{template "filters" "p"}}
	AND {{.After "p"}})
{{template "list_of_collected" .}}{{end}}

{{/* list_token_lists: the newest matches, without group rows or filters
  other than one creator (creator), of a fragment of four ASCII letters or
  digits or more that the tokens of token_list hold (name_tokens): the
  first @limit entries of each token's range of package_name_tokens
  (migration 039; of the creator's range with one), read from the index
  alone, merged, the newest @limit of them; a name holding two of the
  tokens counts once. An entry of '' (a token too long to list) is a match
  only when the name holds the text (name_text). */}}
{{define "list_token_lists"}}WITH m AS MATERIALIZED (
	SELECT DISTINCT e.created_at, e.id FROM unnest(@token_list::text[]) AS tk(token)
	CROSS JOIN LATERAL (
		SELECT e.created_at, e.id FROM (SELECT token, created_at, package_id AS id, creator FROM package_name_tokens) e
		WHERE e.token = tk.token AND (@creator::text IS NULL OR e.creator = @creator::text) AND {{.After "e"}}
			AND (e.token <> '' OR EXISTS (SELECT FROM packages p WHERE p.id = e.id AND strpos(lower(p.file_name), @name_text::text) > 0))
		ORDER BY {{.By "e"}}
		LIMIT @limit::int) e
	ORDER BY {{.By "e"}}
	LIMIT @limit::int)
{{template "list_of_collected" .}}{{end}}

{{/* paths are the newest paths_want packages below paths_below whose
  archives hold a path containing the text, other than the words' matches
  (t), looked up only while those do not fill the candidates: paths rank
  below every word match, and a common fragment costs the most to look up
  (store/search_sql.go, bindPathsPage, says how many a page wants). The
  text is looked up by its tokens (path_tokens, path_text) or its first
  characters (path_like, and path_text when longer). The other filters
  than the creator apply to the newest of them (filtered), not during the
  lookup: testing them on every matching entry walked the whole file index
  for a rare creator.
  With one creator (the statements named _creator_paths, migration 034),
  the lookup first tests the creator's newest paths_probe chunks
  (creator_walk). If those are all the creator's, or if at least one in
  pathsSparse of them holds the text, it walks on, batch by batch (at most
  pathsBatches in all), until it has found paths_want packages; each batch
  is what the hits so far say it takes to find the rest, half as much
  again, and at most paths_batch. A walk that stops short of them before
  the creator's chunks end (a sparse probe, or the last batch) leaves the
  lookup to the index of creators and tokens (or trigrams). That index
  lists the chunks that hold the text, and those of a fragment common to
  one part of every model ("arm_left_07") are in nearly all of them:
  collecting them cost 35 ms at 1,000,000 packages where the walk found
  the newest 200 in 5. */}}
{{define "paths"}}{{if .CreatorPaths}}{{template "creator_walk"}}
SELECT fp.id FROM ((
{{- else}}SELECT fp.id FROM (
{{- end}}
		SELECT DISTINCT pp.package_id AS id FROM package_paths pp
		WHERE {{template "paths_asked"}} AND (SELECT count(*) FROM t) < {{rankCandidates}}
		{{- if .CreatorPaths}}
		AND (SELECT {{template "walk_short"}} FROM walked w){{end}}
		AND {{template "path_holds" "pp"}}
		AND pp.package_id < @paths_below::bigint AND pp.package_id NOT IN (SELECT id FROM t)
		{{- if .CreatorPaths}}
		AND pp.creator = @creator::text{{end}}
		ORDER BY pp.package_id DESC LIMIT @paths_want::int)
	{{- if .CreatorPaths}}
	UNION (
		SELECT DISTINCT u.id FROM walked w, unnest(w.ids) AS u(id)
		WHERE NOT ({{template "walk_short"}})
		ORDER BY u.id DESC LIMIT @paths_want::int)){{end}} fp
	WHERE NOT @filtered::bool OR EXISTS (SELECT FROM packages p WHERE p.id = fp.id AND {{template "filters" "p"}}){{end}}

{{/* paths_asked: the search looks paths up, by trigrams (path_like) or by
  tokens (path_tokens). */}}
{{define "paths_asked"}}(@path_like::text IS NOT NULL OR @path_tokens::text[] IS NOT NULL){{end}}

{{/* path_holds: the chunk of package_paths aliased by the dot holds the
  text: it lists one of the tokens that hold it (path_tokens; '' for a
  token too long to list) or matches path_like, and holds path_text when
  bound (always with tokens). Only one of path_tokens and path_like is
  bound, so that the planner reads one index. path_text comes first: a
  chunk's tokens (about 50) overlap a prefix's list (tens of tokens) by
  comparing every pair, 15 µs a chunk, where strpos over its paths takes
  0.5 µs, and few chunks a walk (creator_walk) tests hold the text. */}}
{{define "path_holds"}}(@path_text::text IS NULL OR strpos({{.}}.paths, lower(@path_text::text)) > 0)
		AND (@path_like::text IS NULL OR {{.}}.paths LIKE lower(@path_like::text))
		AND (@path_tokens::text[] IS NULL OR {{.}}.tokens && @path_tokens::text[]){{end}}

{{/* creator_walk: the walk through one creator's chunks described at
  "paths", a batch a row (n), the last row (walked) what it found. */}}
{{define "creator_walk"}}WITH RECURSIVE creator_walk(n, last_id, last_chunk, seen, full_batch, hits, ids) AS (
		SELECT 0, @paths_below::bigint, 0, 0::bigint, true, 0::bigint, '{}'::bigint[]
		WHERE {{template "paths_asked"}} AND (SELECT count(*) FROM t) < {{rankCandidates}}
		UNION ALL
		SELECT w.n + 1, b.last_id, b.last_chunk, w.seen + b.rows, b.rows = l.size,
			(SELECT count(DISTINCT u) FROM unnest(w.ids || b.ids) AS u), w.ids || b.ids
		FROM creator_walk w
		CROSS JOIN LATERAL (SELECT CASE WHEN w.n = 0 THEN @paths_probe::int
			ELSE least(@paths_batch::int, ((@paths_want::int - w.hits) * w.seen / greatest(w.hits, 1) * 3 / 2 + 10)::int) END AS size) l
		CROSS JOIN LATERAL (
			SELECT count(*) AS rows,
				(array_agg(x.package_id ORDER BY x.package_id, x.chunk))[1] AS last_id,
				(array_agg(x.chunk ORDER BY x.package_id, x.chunk))[1] AS last_chunk,
				coalesce(array_agg(x.package_id ORDER BY x.package_id DESC, x.chunk DESC) FILTER (WHERE x.hit), '{}') AS ids
			FROM (SELECT pp.package_id, pp.chunk, {{template "path_holds" "pp"}}
					AND pp.package_id NOT IN (SELECT id FROM t) AS hit
				FROM package_paths pp
				WHERE pp.creator = @creator::text AND (pp.package_id, pp.chunk) < (w.last_id, w.last_chunk)
				ORDER BY pp.package_id DESC, pp.chunk DESC LIMIT l.size) x) b
		WHERE w.n = 0 OR (w.n < {{pathsBatches}} AND w.full_batch AND w.hits < @paths_want::int
			AND w.hits * {{pathsSparse}} >= @paths_probe::int)
	),
	walked AS MATERIALIZED (SELECT * FROM creator_walk ORDER BY n DESC LIMIT 1){{end}}

{{/* walk_short: the walk (walked, aliased w) stopped short of the packages
  it wants before the creator's chunks ended: after a probe whose chunks
  held the text too seldom, or after its last batch. The index serves the
  lookup. */}}
{{define "walk_short"}}w.full_batch AND w.hits < @paths_want::int{{end}}

{{/* page cuts the page from the ranked candidates (CTEs t: the words'
  matches, f: the paths', candidates: both with what the orders need) before
  the package rows are joined: sorting 200 joined rows to keep 25 cost more
  than finding them. With group_rows each group keeps its best-ranked
  member. */}}
{{define "page"}}r AS (
	SELECT DISTINCT ON (k.row_key) k.row_key, c.*
	FROM candidates c
	CROSS JOIN LATERAL (SELECT CASE WHEN @group_rows::bool THEN coalesce(-c.package_group_id, c.id) ELSE c.id END AS row_key) k
	ORDER BY k.row_key, c.rank DESC, c.created_at DESC, c.id DESC)
{{template "page_rows" .}}{{end}}

{{/* ranked_candidates are the candidates of the ranked shapes served by the
  full-text index, ranked by ts_rank of the words, every one a prefix
  (rank_tsquery; a match of the paths only: 0). */}}
{{define "ranked_candidates"}}candidates AS MATERIALIZED (
	SELECT p.id, p.created_at, p.package_group_id, lower(p.file_name) AS sort_name, p.file_size,
		(CASE WHEN p.search_vector @@ to_tsquery('english', @rank_tsquery::text) THEN ts_rank(p.search_vector, to_tsquery('english', @rank_tsquery::text)) ELSE 0 END)::real AS rank
	FROM packages p WHERE p.id IN (SELECT id FROM t UNION SELECT id FROM f)){{end}}

{{/* ranked_walk: the newest rankCandidates word matches found by walking the
  filtered packages newest first, testing the words on each. */}}
{{define "ranked_walk"}}WITH t AS MATERIALIZED (
	SELECT p.id FROM (SELECT * FROM packages p
		WHERE {{template "filters" "p"}}
		ORDER BY p.created_at DESC, p.id DESC OFFSET 0) p
	WHERE {{template "match" "p"}}
	ORDER BY p.created_at DESC, p.id DESC LIMIT {{rankCandidates}}),
f AS MATERIALIZED ({{template "paths" .}}),
{{template "ranked_candidates"}},
{{template "page" .}}{{end}}

{{/* ranked_collect: the newest rankCandidates word matches collected from
  the full-text index (with the filters' indexes) and sorted. */}}
{{define "ranked_collect"}}WITH tm AS MATERIALIZED (
	SELECT p.id, p.created_at FROM packages p
	WHERE {{template "filters" "p"}}
	AND {{template "match" "p"}}),
t AS MATERIALIZED (SELECT p.id FROM tm p ORDER BY p.created_at DESC, p.id DESC LIMIT {{rankCandidates}}),
f AS MATERIALIZED ({{template "paths" .}}),
{{template "ranked_candidates"}},
{{template "page" .}}{{end}}

{{/* ranked_collect_fenced: ranked_collect that collects the words' matches
  from their index alone and tests the filters on each. */}}
{{define "ranked_collect_fenced"}}WITH tm AS MATERIALIZED (
	SELECT p.id, p.created_at FROM (SELECT * FROM packages p WHERE {{template "match" "p"}} OFFSET 0) p
	WHERE {{template "filters" "p"}}),
t AS MATERIALIZED (SELECT p.id FROM tm p ORDER BY p.created_at DESC, p.id DESC LIMIT {{rankCandidates}}),
f AS MATERIALIZED ({{template "paths" .}}),
{{template "ranked_candidates"}},
{{template "page" .}}{{end}}

{{/* pair_rest is true when the package of a row of package_words or
  package_creator_words (the dot) holds a lexeme of each of the rest of
  the words (rest_group: a word's index, rest_word: one of its lexemes). */}}
{{define "pair_rest"}}(@rest_group::int[] IS NULL OR NOT EXISTS (
		SELECT FROM unnest(@rest_group::int[], @rest_word::text[]) AS r(grp, word)
		GROUP BY r.grp
		HAVING NOT bool_or(EXISTS (SELECT FROM package_words c
			WHERE c.word = r.word AND c.created_at = {{.}}.created_at AND c.package_id = {{.}}.package_id)))){{end}}

{{/* pair_matches is t for pair and creator_pair: the newest rankCandidates
  packages that hold a lexeme of each of two words (pair_first_N,
  pair_second_N) and of each of the rest, from the dot, package_words or
  package_creator_words (of @creator). The two words' lists are read newest
  first from the index alone, at most pair_window entries each (pa, pb:
  word_window merges a word's lexemes' lists as it reads them), and where
  they meet are all the matches down to the older of the two windows' last
  entries that holds the rest (found): the lists are merged as they are
  read (not materialized: they stay in the index's order), and the merge
  stops at the newest rankCandidates. Below that entry, the older matches
  are looked up in the full-text index (below_windows). */}}
{{define "pair_matches"}}pa AS NOT MATERIALIZED ({{template "word_window" (side . "pair_first" windowLexemes)}}),
pb AS NOT MATERIALIZED ({{template "word_window" (side . "pair_second" windowLexemes)}}),
found AS MATERIALIZED (
	SELECT pa.created_at, pa.package_id FROM pa JOIN pb ON pb.created_at = pa.created_at AND pb.package_id = pa.package_id
	WHERE {{template "pair_rest" "pa"}}
	ORDER BY pa.created_at DESC, pa.package_id DESC LIMIT {{rankCandidates}}),
ends AS (
	{{template "window_end" (side . "pair_first" windowLexemes)}}
	UNION ALL
	{{template "window_end" (side . "pair_second" windowLexemes)}}),
{{template "below_windows" .}}{{end}}

{{/* lead_matches is t for lead and creator_lead: the newest rankCandidates
  packages that match the words (match_lexemes), found by reading the list
  of one word's one lexeme (pair_first_0) newest first, at most pair_window
  entries (pa), and testing the words on each entry's package: for words
  of which only one starts a single lexeme, the others prefixes or several
  lexemes that the index cannot meet. Below the window's last entry, the
  older matches are looked up in the full-text index (below_windows). */}}
{{define "lead_matches"}}pa AS NOT MATERIALIZED ({{template "word_window" (side . "pair_first" 1)}}),
found AS MATERIALIZED (
	SELECT pa.created_at, pa.package_id FROM pa JOIN packages p ON p.id = pa.package_id
	WHERE p.search_vector @@ @match_lexemes::tsquery
	ORDER BY pa.created_at DESC, pa.package_id DESC LIMIT {{rankCandidates}}),
ends AS ({{template "window_end" (side . "pair_first" 1)}}),
{{template "below_windows" .}}{{end}}

{{/* word_window is the newest pair_window entries of a word's lexemes
  (the dot's Arg: @Arg_0 and those of @Arg_1 … @Arg_(Lexemes-1) that are
  bound; @Arg holds them all, for window_end) in the dot's
  Table, package_words or package_creator_words (of @creator), each
  package once, from the index alone: the lists of the lexemes are read
  newest first side by side and merged as they are read (a Merge Append of
  one index range a lexeme), so that a word that starts twenty lexemes
  ("drag": dragon, dragor, …) reads no further than its newest entries.
  A branch of an unbound lexeme is cut before the statement is sent
  (optional branches, search_optional.go). */}}
{{define "word_window"}}
	SELECT DISTINCT ON (x.created_at, x.package_id) x.created_at, x.package_id FROM (
	{{- range $i := .Lexemes}}{{if $i}}
	UNION ALL (/*if @{{$.Arg}}_{{$i}}*/{{else}}
	({{end}}SELECT w.created_at, w.package_id FROM {{$.Table}} w
		WHERE {{if eq $.Table "package_creator_words"}}w.creator = @creator::text AND {{end}}w.word = @{{$.Arg}}_{{$i}}::text
		ORDER BY w.created_at DESC, w.package_id DESC LIMIT @pair_window::int){{end}}) x
	ORDER BY x.created_at DESC, x.package_id DESC LIMIT @pair_window::int{{end}}

{{/* window_end is the last (oldest) entry of the dot's word_window when
  it was cut (holds pair_window entries), else no row. It reads the
  newest pair_window entries of each of the word's lexemes (@Arg, all of
  them) and sorts them, where reading the window again would plan each of
  its branches a second time (0.1 ms apiece); it runs only when the
  windows met fewer than rankCandidates matches (below_windows). */}}
{{define "window_end"}}(SELECT x.created_at, x.package_id FROM unnest(@{{.Arg}}::text[]) AS l(word)
		CROSS JOIN LATERAL (SELECT w.created_at, w.package_id FROM {{.Table}} w
			WHERE {{if eq .Table "package_creator_words"}}w.creator = @creator::text AND {{end}}w.word = l.word
			ORDER BY w.created_at DESC, w.package_id DESC LIMIT @pair_window::int) x
		GROUP BY x.created_at, x.package_id
		ORDER BY x.created_at DESC, x.package_id DESC OFFSET @pair_window::int - 1 LIMIT 1){{end}}

{{/* below_windows is t of pair_matches and lead_matches: what they found,
  and when that is fewer than rankCandidates and a window was cut (ends:
  its last entry), the newest matches below the newest such entry from the
  full-text index (match_lexemes): two common words that seldom meet would
  otherwise read both lists to their ends. */}}
{{define "below_windows"}}cut AS MATERIALIZED (
	SELECT x.created_at, x.package_id FROM ends x
	ORDER BY x.created_at DESC, x.package_id DESC LIMIT 1),
t AS MATERIALIZED (
	SELECT found.package_id AS id FROM found
	UNION ALL
	(SELECT p.id FROM packages p, cut
		WHERE (SELECT count(*) FROM found) < {{rankCandidates}}
		AND p.search_vector @@ @match_lexemes::tsquery
		AND {{if eq . "package_creator_words"}}lower(p.creator) = @creator::text{{else}}TRUE{{end}}
		AND (p.created_at, p.id) < (cut.created_at, cut.package_id)
		ORDER BY p.created_at DESC, p.id DESC LIMIT {{rankCandidates}})){{end}}

{{/* pair_postings: the candidates of words of which two start at most
  maxPairLexemes together (pair_first_N, pair_second_N) and the rest at most
  maxWordLexemes, without filters, from package_words (pair_matches), newest first, with
  their ranks (ts_rank of the words, every one a prefix: rank_tsquery).
  The words_* shapes then serve them as one word's. Planned with its
  arguments: how the lists meet depends on how long they are. */}}
{{define "pair_postings"}}WITH {{template "pair_matches" "package_words"}},
{{template "pair_ranked"}}{{end}}

{{/* creator_pair_postings is pair_postings for the packages of one
  creator, from package_creator_words. */}}
{{define "creator_pair_postings"}}WITH {{template "pair_matches" "package_creator_words"}},
{{template "pair_ranked"}}{{end}}

{{/* lead_postings: pair_postings of words of which one starts a single
  lexeme (pair_first_0) where no pair can be read: a word is a prefix, or
  starts more lexemes than the rest of a pair may (lead_matches). */}}
{{define "lead_postings"}}WITH {{template "lead_matches" "package_words"}},
{{template "pair_ranked"}}{{end}}

{{/* creator_lead_postings is lead_postings for the packages of one creator,
  from package_creator_words. */}}
{{define "creator_lead_postings"}}WITH {{template "lead_matches" "package_creator_words"}},
{{template "pair_ranked"}}{{end}}

{{/* pair_ranked: what the pair statements return, t's packages newest
  first and their ranks. */}}
{{define "pair_ranked"}}ranked AS MATERIALIZED (
	SELECT p.id, p.created_at, ts_rank(p.search_vector, to_tsquery('english', @rank_tsquery::text))::real AS rank
	FROM packages p WHERE p.id IN (SELECT id FROM t))
SELECT ARRAY(SELECT id FROM ranked ORDER BY created_at DESC, id DESC),
	ARRAY(SELECT rank FROM ranked ORDER BY created_at DESC, id DESC){{end}}

{{/* words_candidates are the candidates of the shapes served by
  package_words (word_ids, newest first, with word_ranks), and what the
  order and the groups need of their rows. */}}
{{define "words_candidates"}}candidates AS MATERIALIZED (
	SELECT p.id, p.created_at, p.package_group_id, lower(p.file_name) AS sort_name, p.file_size,
		coalesce(c.rank, 0)::real AS rank
	FROM packages p LEFT JOIN unnest(@word_ids::bigint[], @word_ranks::real[]) AS c(id, rank) ON c.id = p.id
	WHERE p.id IN (SELECT id FROM t UNION SELECT id FROM f)){{end}}

{{/* words_unjoined: one word without filters ranked, its candidates all from
  package_words: nothing of their rows is read before the page's. Prepared. */}}
{{define "words_unjoined"}}WITH t AS MATERIALIZED (SELECT unnest(@word_ids::bigint[]) AS id),
f AS MATERIALIZED (SELECT NULL::bigint AS id WHERE false),
candidates AS MATERIALIZED (SELECT c.id, c.rank FROM unnest(@word_ids::bigint[], @word_ranks::real[]) AS c(id, rank)),
r AS (SELECT c.id AS row_key, c.* FROM candidates c)
{{template "page_rows" .}}{{end}}

{{/* words: one word without filters, with group rows or in another order:
  the candidates' rows give what the order and the groups need. Prepared. */}}
{{define "words"}}WITH t AS MATERIALIZED (SELECT unnest(@word_ids::bigint[]) AS id),
f AS MATERIALIZED (SELECT NULL::bigint AS id WHERE false),
{{template "words_candidates"}},
{{template "page" .}}{{end}}

{{/* words_paths: words, and while they do not fill the candidates, the
  packages whose paths hold the text. Planned with its arguments. */}}
{{define "words_paths"}}WITH t AS MATERIALIZED (SELECT unnest(@word_ids::bigint[]) AS id),
f AS MATERIALIZED ({{template "paths" .}}),
{{template "words_candidates"}},
{{template "page" .}}{{end}}

{{/* estimate_packages asks the planner how many packages match the bound
  filters and text; it plans, it does not execute. */}}
{{define "estimate_packages"}}EXPLAIN (FORMAT JSON) SELECT 1 FROM packages p
WHERE {{template "filters" "p"}}
	AND {{template "match" "p"}}{{end}}

{{/* estimate_paths asks the planner how many chunks of package_paths (of
  the creator, when bound) hold the bound text. */}}
{{define "estimate_paths"}}EXPLAIN (FORMAT JSON) SELECT 1 FROM package_paths pp
WHERE {{template "path_holds" "pp"}}
	AND (@creator::text IS NULL OR pp.creator = @creator::text){{end}}

{{/* estimate_word_entries: the planner's estimate of package_words' entries
  of the lexemes, one per package that holds one: a capped one-word
  search's count. */}}
{{define "estimate_word_entries"}}EXPLAIN (FORMAT JSON) SELECT 1 FROM package_words WHERE word = ANY(@lexemes::text[]){{end}}

{{/* path_tokens: the tokens of package_paths that hold a text (token_like),
  by the trigram index of path_tokens, and "" if listed (a token too long to
  list may hold it). */}}
{{define "path_tokens"}}(SELECT DISTINCT token FROM path_tokens WHERE token LIKE @token_like::text LIMIT @limit::int)
UNION ALL (SELECT token FROM path_tokens WHERE token = '' LIMIT 1){{end}}

{{/* name_tokens: the tokens of names that hold a text (token_like), by the
  trigram index of name_tokens, and "" if listed. */}}
{{define "name_tokens"}}(SELECT DISTINCT token FROM name_tokens WHERE token LIKE @token_like::text LIMIT @limit::int)
UNION ALL (SELECT token FROM name_tokens WHERE token = '' LIMIT 1){{end}}

{{/* name_sample: about @rows lower-cased names, from the share of
  packages' pages that the planner's count of its rows says holds them
  (all of them before any ANALYZE), drawn with a fixed seed so that the
  same table gives the same sample; twice @rows at most. The substring
  fallback's choice of a rare window (store/name_sample.go). */}}
{{define "name_sample"}}SELECT lower(file_name) FROM packages
TABLESAMPLE SYSTEM ((SELECT least(100, 100 * @rows::int / greatest(reltuples, 1)) FROM pg_class WHERE oid = 'packages'::regclass))
REPEATABLE (42) LIMIT 2 * @rows::int{{end}}

{{/* group_row_keys: the key of each package's group row (ids, in their
  order): minus its group's id, else its own (also for a package deleted
  since its id was read). Prepared. */}}
{{define "group_row_keys"}}SELECT coalesce(-p.package_group_id, i.id) FROM unnest(@ids::bigint[]) WITH ORDINALITY AS i(id, n)
LEFT JOIN packages p ON p.id = i.id ORDER BY i.n{{end}}

{{/* resolve_creators and resolve_tags list the catalog's names whose lowered
  form (an expression of their text_pattern_ops index) is LIKE pattern,
  at most limit of them. */}}
{{define "resolve_creators"}}SELECT DISTINCT lower(creator) FROM catalog_creators WHERE lower(creator) LIKE lower(@pattern::text) LIMIT @limit::int{{end}}
{{define "resolve_tags"}}SELECT DISTINCT tag FROM catalog_tags WHERE lower(tag) LIKE lower(@pattern::text) LIMIT @limit::int{{end}}

{{/* match_files: the files of the packages ids whose paths contain the text
  (path_like as in paths), in listing order: how many (at most
  MaxFilesCounted) and the first matchedPathsShown. */}}
{{define "match_files"}}SELECT i.id, count(*), (array_agg(x.path ORDER BY x.ordinal))[1:{{matchedPathsShown}}]
FROM unnest(@ids::bigint[]) AS i(id)
CROSS JOIN LATERAL (
	SELECT f.path, f.ordinal FROM package_files f
	WHERE f.package_id = i.id AND f.path ILIKE @path_like::text
	AND (@path_text::text IS NULL OR strpos(lower(f.path), lower(@path_text::text)) > 0)
	ORDER BY f.ordinal LIMIT {{maxFilesCounted}}) x
GROUP BY i.id{{end}}

{{/* package_files: SearchPackageFiles, packages by the paths of their files
  (pattern: ILIKE), newest first, before before_id when it is not 0. */}}
{{define "package_files"}}SELECT m.n AS matched_files, {{packageColumns "p"}}
FROM (SELECT package_id, count(*) AS n FROM package_files
	WHERE path ILIKE @pattern::text AND (@before_id::bigint = 0 OR package_id < @before_id::bigint)
	GROUP BY package_id ORDER BY package_id DESC LIMIT @limit::int) m
JOIN packages p ON p.id = m.package_id
ORDER BY p.id DESC{{end}}

{{/* word_postings normalises @word, a search word, as search vectors' words
  are (english: "Castles" → castl) and lists up to @max_lexemes+1 lexemes of
  package_words that start with it, stepping through the index from one
  distinct lexeme to the next. When the word normalised to one lexeme (not
  a stop word, rarely two) and at most @max_lexemes lexemes start with it,
  it also lists the newest @limit packages that hold any of them (after
  the cursor @after_key, @after_id when there is one), newest first, with
  their rank for the word: each lexeme's newest from its range of the
  index, merged, a package's lexemes' ranks summed (as ts_rank sums them).
  The newest of the union are among the lists' heads, and each of them is
  in the list of every lexeme it holds: fewer than @limit packages of any
  one list are newer than one of them. A ranked search takes the newest
  rankCandidates; a list newest first takes a page and one more, which
  the full-text index collected and sorted, or walked past non-matches,
  for every page, at a cost that grew with the word's matches. It
  returns how many lexemes the word normalised to, the lexemes, and the
  packages' ids and ranks. Prepared. */}}
{{define "word_postings"}}WITH RECURSIVE {{template "lexemes"}},
{{template "newest_of_lexemes" "package_words"}}
{{template "postings"}}{{end}}

{{/* creator_word_postings is word_postings for the packages of @creators
  (lower-cased names) alone: the newest of each creator and lexeme from
  their range of package_creator_words' index. Prepared. */}}
{{define "creator_word_postings"}}WITH RECURSIVE {{template "lexemes"}},
{{template "newest_of_lexemes" "package_creator_words"}}
{{template "postings"}}{{end}}

{{/* newest_of_lexemes is newest for word_postings from the dot,
  package_words or package_creator_words (of each of @creators). Of
  several lexemes, the first one's @limit-th newest entry (of the first
  creator's) is a floor (cut): @limit packages at or above it hold a
  lexeme already, so none below it is among the newest @limit, and each
  lexeme's entries are read down to it, not @limit of each (a prefix of 18
  lexemes read 1,600 entries for 200 at 1,000,000 packages). */}}
{{define "newest_of_lexemes"}}cut AS MATERIALIZED (
	SELECT coalesce(c.created_at, '-infinity') AS created_at, coalesce(c.package_id, 0) AS package_id
	FROM lexemes LEFT JOIN LATERAL (SELECT w.created_at, w.package_id FROM {{.}} w
		WHERE {{if eq . "package_creator_words"}}w.creator = (@creators::text[])[1] AND {{end}}w.word = lexemes.words[1]
		AND {{template "postings_after" "w"}}
		ORDER BY w.created_at DESC, w.package_id DESC OFFSET @limit::int - 1 LIMIT 1) c ON cardinality(lexemes.words) > 1
),
newest AS MATERIALIZED (
	SELECT x.created_at, x.package_id, sum(x.rank)::real AS rank
	FROM lexemes, unnest(lexemes.words) AS u(word)
	{{- if eq . "package_creator_words"}}, unnest(@creators::text[]) AS cr(creator){{end}}
	CROSS JOIN LATERAL (SELECT w.created_at, w.package_id, w.rank FROM {{.}} w
		WHERE {{if eq . "package_creator_words"}}w.creator = cr.creator AND {{end}}w.word = u.word
		AND {{template "postings_after" "w"}}
		AND (w.created_at, w.package_id) >= ((SELECT created_at FROM cut), (SELECT package_id FROM cut))
		ORDER BY w.created_at DESC, w.package_id DESC LIMIT @limit::int) x
	WHERE (SELECT cardinality(lex) FROM q) = 1 AND cardinality(lexemes.words) <= @max_lexemes::int
	GROUP BY x.created_at, x.package_id
	ORDER BY x.created_at DESC, x.package_id DESC LIMIT @limit::int
){{end}}

{{/* postings_after: the entry of package_words or package_creator_words
  aliased by the dot comes after the page's cursor. */}}
{{define "postings_after"}}(@after_id::bigint IS NULL OR ({{.}}.created_at, {{.}}.package_id) < (@after_key::timestamptz, @after_id::bigint)){{end}}

{{/* words_list: the page of a list whose packages package_words found
  (word_ids, in the order), joined to their rows. Prepared. */}}
{{define "words_list"}}SELECT {{template "list_columns"}}
FROM unnest(@word_ids::bigint[]) AS m(id) JOIN packages p ON p.id = m.id
LEFT JOIN package_groups g ON g.id = p.package_group_id AND @group_rows::bool
ORDER BY {{.By "p"}}
LIMIT @limit::int{{end}}

{{/* lexemes: q, the word normalised; lexemes, the lexemes of package_words
  that start with it (up to @max_lexemes+1), found by stepping through the
  index from one distinct lexeme to the next. */}}
{{define "lexemes"}}q AS MATERIALIZED (
	SELECT {{template "normalised" "@word::text"}} AS lex
), {{template "lexeme_steps" "(SELECT lex[1] FROM q)"}}, lexemes AS MATERIALIZED (
	SELECT ARRAY({{template "lexemes_listed" "(SELECT lex[1] FROM q)"}}) AS words
){{end}}

{{/* normalised is the lexemes of the search word the dot (as search
  vectors' words are normalised). */}}
{{define "normalised"}}tsvector_to_array(to_tsvector('english', {{.}})){{end}}

{{/* lexeme_steps is l, the lexemes of package_words from the first at or
  after the prefix the dot, stepping through the index from one distinct
  lexeme to the next while they start with it (and one after). */}}
{{define "lexeme_steps"}}l(word) AS (
	SELECT (SELECT w.word FROM package_words w WHERE w.word >= {{.}} ORDER BY w.word LIMIT 1)
	UNION ALL
	SELECT (SELECT w.word FROM package_words w WHERE w.word > l.word ORDER BY w.word LIMIT 1)
	FROM l WHERE starts_with(l.word, {{.}})
){{end}}

{{/* lexemes_listed: up to @max_lexemes+1 of lexeme_steps' lexemes that
  start with the prefix the dot. */}}
{{define "lexemes_listed"}}SELECT word FROM l WHERE starts_with(word, {{.}}) LIMIT @max_lexemes::int + 1{{end}}

{{/* postings: what word_postings returns, from the newest packages found. */}}
{{define "postings"}}SELECT (SELECT cardinality(lex) FROM q), (SELECT words FROM lexemes),
	ARRAY(SELECT package_id FROM newest ORDER BY created_at DESC, package_id DESC),
	ARRAY(SELECT rank FROM newest ORDER BY created_at DESC, package_id DESC){{end}}

{{/* word_lexemes normalises each of @words as word_postings does @word and
  lists, in their order, how many lexemes it normalised to, the first, and
  up to @max_lexemes+1 lexemes of package_words that start with it. */}}
{{define "word_lexemes"}}SELECT cardinality(q.lex), coalesce(q.lex[1], ''), ARRAY(
	WITH RECURSIVE {{template "lexeme_steps" "q.lex[1]"}}
	{{template "lexemes_listed" "q.lex[1]"}})
FROM unnest(@words::text[]) WITH ORDINALITY AS u(word, ord)
CROSS JOIN LATERAL (SELECT {{template "normalised" "u.word"}} AS lex) q
ORDER BY u.ord{{end}}

{{/* estimate_creator_word_entries: estimate_word_entries for the packages of
  @creators. */}}
{{define "estimate_creator_word_entries"}}EXPLAIN (FORMAT JSON) SELECT 1 FROM package_creator_words
WHERE creator = ANY(@creators::text[]) AND word = ANY(@lexemes::text[]){{end}}

{{/* page_rows: the page cut from the rows r (of candidates t and f), joined
  to their packages and, for a group's row, its group. */}}
{{define "page_rows"}}SELECT r.row_key, r.rank, lower(p.file_name) AS sort_name,
	(SELECT count(*) FROM t) >= {{rankCandidates}} OR (SELECT count(*) FROM f) >= @paths_want::int AS capped,
	(SELECT count(*) FROM t) >= {{rankCandidates}} AS words_capped,
	(SELECT count(*) FROM r) AS total_rows,
	{{packageColumns "p"}},
	{{groupColumns}}
FROM (SELECT * FROM r WHERE {{.After "r"}} ORDER BY {{.By "r"}} LIMIT @limit::int) r
JOIN packages p ON p.id = r.id
LEFT JOIN package_groups g ON g.id = p.package_group_id AND r.row_key < 0
ORDER BY {{.By "r"}}{{end}}
