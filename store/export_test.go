package store

// PrefixQuery is the to_tsquery text of words matched as prefixes, for
// tests that compare a search with it.
var PrefixQuery = tsQuery

// SetPathsWalk makes the DB's searches with one creator test probe of the
// creator's chunks of package_paths first and then batch at a time
// (pathsProbe, pathsBatch).
func (db *DB) SetPathsWalk(probe, batch int) {
	t := db.tuned()
	t.pathsProbe, t.pathsBatch = probe, batch
	db.tuning = &t
}

// SetPair makes the DB serve every search it can as a pair or a lead
// whatever the planner expects of it (pairMeetsSoon), reading window
// entries of each lexeme (pairWindow, leadWindow).
func (db *DB) SetPair(window int) {
	t := db.tuned()
	t.pairWindow, t.leadWindow, t.pairAlways = window, window, true
	db.tuning = &t
}

// SetNameSample makes the DB's substring fallback probe a window of three
// characters alone once its sample holds minNames names, when at most one
// sampled name in share holds it (rareWindowMinSample, rareWindowShare).
func (db *DB) SetNameSample(minNames, share int) {
	db.names = &nameSample{minNames: minNames, share: share}
}

// CountWindows is countWindows, for tests.
var CountWindows = countWindows
