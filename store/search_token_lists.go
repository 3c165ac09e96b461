package store

import (
	"context"
	"strings"

	"github.com/jackc/pgx/v5"
)

// maxTokenLists is the most tokens holding a fragment whose lists of
// package_name_tokens a substring search merges (list_token_lists): each
// costs a descent of the primary key and a page's worth of its entries,
// about 14 µs, where a fragment that more tokens hold is common enough
// that reading its matches by the trigram index is no dearer.
const maxTokenLists = 1000

// minTokenListRunes is the shortest fragment package_name_tokens serves:
// it lists the tokens of four characters or more (migration 039).
const minTokenListRunes = 4

// searchSubstringTokens resolves the substring fallback's text into what
// it is looked up by: the tokens of names that hold it (tokensHolding), and
// where those can serve the search's page alone (servedByTokenLists), the
// page itself, read from their lists (list_token_lists); else it sets
// nameTokens, or nameWindow for the trigram index (rareWindow), and
// returns nil. An empty result when no name holds the text.
func (db *DB) searchSubstringTokens(ctx context.Context, s *searchPlan) (*SearchResult, error) {
	lists := s.servedByTokenLists()
	most := maxTokens
	if lists {
		most = maxTokenLists
	}
	tokens, err := db.tokensHolding(ctx, "name_tokens", s.text, most)
	switch {
	case err != nil:
		return nil, err
	case tokens != nil && len(tokens) == 0: // no name holds the text
		return &SearchResult{Mode: s.mode, Sort: s.q.Sort, CountExact: true}, nil
	case tokens != nil && lists:
		return db.searchTokenLists(ctx, s, tokens)
	case tokens != nil:
		s.nameTokens = tokens
		return nil, nil
	}
	s.nameWindow, err = db.rareWindow(ctx, s.text)
	return nil, err
}

// servedByTokenLists reports whether the substring fallback s can read its
// page from package_name_tokens: its text is four ASCII letters or digits
// or more, it lists every match newest first (the lists' order), groups
// none and filters them by one creator at most (the lists of a creator's
// entries; another filter or a group could reject every entry of a list's
// page).
func (s *searchPlan) servedByTokenLists() bool {
	if len(s.text) < minTokenListRunes || !asciiAlphanumeric(s.text) || s.q.GroupRows || listOrder(s.q.Sort).name != listNewest.name {
		return false
	}
	filters := pgx.NamedArgs{}
	s.bindFilters(filters)
	_, creator := filters["creator"]
	return len(filters) == 0 || len(filters) == 1 && creator
}

// searchTokenLists reads the page of the substring search s from the lists
// of tokens (list_token_lists), which hold its text.
func (db *DB) searchTokenLists(ctx context.Context, s *searchPlan, tokens []string) (*SearchResult, error) {
	args := pgx.NamedArgs{"token_list": tokens, "name_text": strings.ToLower(s.text), "group_rows": false, "limit": s.q.Limit + 1}
	s.bindFilters(args)
	bindAfter(args, listNewest, s.q.After)
	res, err := db.runSearch(ctx, s, "list_token_lists_"+listNewest.name, args, false)
	if err != nil {
		return nil, err
	}
	if err := countList(res, s, -1, func() (float64, error) { return db.estimateMatches(ctx, s, true, true) }); err != nil {
		return nil, err
	}
	return res, nil
}
