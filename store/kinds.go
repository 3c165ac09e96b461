package store

import "strings"

// extensionFilter is the condition of SearchQuery.Extensions on the
// packages aliased alias: the file name ends with one of exts, whatever
// its case. add binds a parameter and returns its placeholder.
func extensionFilter(alias string, add func(any) string, exts []string) string {
	patterns := make([]string, len(exts))
	for i, e := range exts {
		patterns[i] = "%" + escapeLike(strings.ToLower(e))
	}
	return "lower(" + alias + ".file_name) LIKE ANY(" + add(patterns) + "::text[])"
}
