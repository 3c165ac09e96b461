package store

// PrefixQuery is the to_tsquery text of words matched as prefixes, for
// tests that compare a search with it.
var PrefixQuery = tsQuery
