package web

import (
	"context"
	"html/template"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
)

// suggestionsShown bounds the creators and the tags the filter bar offers.
const suggestionsShown = 300

// filterSuggestions returns the filter bar's datalists of creators and
// tags, looked up at most every titlesTTL (every catalog page shows them)
// and rendered by html/template once per look-up: 600 options escaped again
// for every page were most of its cost.
func (s *Server) filterSuggestions(ctx context.Context) (template.HTML, error) {
	s.suggestMu.Lock()
	defer s.suggestMu.Unlock()
	if s.suggestAt.IsZero() || time.Since(s.suggestAt) >= titlesTTL {
		creators, tags, err := s.deps.DB.ListFilterNames(ctx, suggestionsShown)
		if err != nil {
			return "", err
		}
		var b strings.Builder
		if err := fragments.ExecuteTemplate(&b, "suggestions", suggestionsData{Creators: creators, Tags: tags}); err != nil {
			return "", hoard.WrapError(hoard.EINTERNAL, err, "Could not render the page.")
		}
		s.suggestHTML = template.HTML(b.String()) // #nosec G203 -- the output of html/template
		s.suggestAt = time.Now()
	}
	return s.suggestHTML, nil
}

// suggestionsData is what the "suggestions" template renders: the names
// the filter bar's creator and tag fields offer.
type suggestionsData struct {
	Creators, Tags []string
}

// highlightHTML is platform text (a file path) made displayable
// (hoard.DisplayText) and escaped, with every case-insensitive occurrence
// of the search's text in a <mark>: safe whatever the text and the path
// hold, since every piece is escaped on its own.
func highlightHTML(text, query string) template.HTML {
	text, query = hoard.DisplayText(text), strings.TrimSpace(query)
	if query == "" || utf8.RuneCountInString(query) > utf8.RuneCountInString(text) {
		return template.HTML(template.HTMLEscapeString(text)) // #nosec G203 -- escaped
	}
	rs, n := []rune(text), utf8.RuneCountInString(query)
	var b strings.Builder
	last := 0
	for i := 0; i+n <= len(rs); {
		if !strings.EqualFold(string(rs[i:i+n]), query) {
			i++
			continue
		}
		b.WriteString(template.HTMLEscapeString(string(rs[last:i])))
		b.WriteString("<mark>" + template.HTMLEscapeString(string(rs[i:i+n])) + "</mark>")
		i += n
		last = i
	}
	b.WriteString(template.HTMLEscapeString(string(rs[last:])))
	return template.HTML(b.String()) // #nosec G203 -- every piece escaped
}

// filesMatchedText says how many files of a package match ("1 file
// matches", "3 files match", "1000+ files match" at the count's bound).
func filesMatchedText(n int) string {
	switch {
	case n == 1:
		return "1 file matches"
	case n >= store.MaxFilesCounted:
		return thousands(int64(n)) + "+ files match"
	}
	return thousands(int64(n)) + " files match"
}
