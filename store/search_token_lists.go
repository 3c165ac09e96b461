package store

import (
	"context"

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

// resolveSubstring resolves the substring fallback's text into what it is
// looked up by: the tokens of names that hold it (tokensHolding), whose
// lists in package_name_tokens give the page where they can serve it
// alone (tokenLists, servedByTokenLists), else whose entries in the names'
// index of tokens give the matches (nameTokens); or, when too many tokens
// hold it, the trigram index, asked for its rarest window where the sample
// of names knows one (nameWindow). none: no name holds the text.
func (db *DB) resolveSubstring(ctx context.Context, s *searchPlan) (none bool, err error) {
	lists := s.servedByTokenLists()
	most := maxTokens
	if lists {
		most = maxTokenLists
	}
	tokens, err := db.tokensHolding(ctx, "name_tokens", s.text, most)
	switch {
	case err != nil:
		return false, err
	case tokens != nil && len(tokens) == 0:
		return true, nil
	case tokens != nil && lists:
		s.tokenLists = tokens
	case tokens != nil:
		s.nameTokens = tokens
	default:
		s.nameWindow, err = db.rareWindow(ctx, s.text)
	}
	return false, err
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
