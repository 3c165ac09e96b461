package store

import (
	"context"

	"github.com/hoard/hoard"
)

// DeclinedRule is the rule learning declined for a manual group because it
// would also take in packages of other groups, with why (for the group
// page, which offers to learn it anyway).
type DeclinedRule struct {
	SignalType hoard.RuleSignal
	Pattern    string
	Note       string
}

// SetDeclinedRule records the rule declined for a group; nil forgets it
// (a rule was learned, or the user decided). ENOTFOUND for an unknown
// group.
func (db *DB) SetDeclinedRule(ctx context.Context, groupID int64, d *DeclinedRule) error {
	var signal, pattern, note any
	if d != nil {
		signal, pattern, note = string(d.SignalType), d.Pattern, truncateRunes(d.Note, 2000)
	}
	tag, err := db.q.Exec(ctx, `UPDATE package_groups SET declined_rule_signal = $2, declined_rule_pattern = $3,
		declined_rule_note = $4 WHERE id = $1`, groupID, signal, pattern, note)
	return notFoundIfNone("set declined rule", tag, err)
}

// FindDeclinedRule returns the rule declined for a group, nil when there
// is none.
func (db *DB) FindDeclinedRule(ctx context.Context, groupID int64) (*DeclinedRule, error) {
	rows, err := db.q.Query(ctx, `SELECT declined_rule_signal AS signal_type, declined_rule_pattern AS pattern,
		coalesce(declined_rule_note, '') AS note FROM package_groups WHERE id = $1 AND declined_rule_signal IS NOT NULL`, groupID)
	if err != nil {
		return nil, wrap("find declined rule", err)
	}
	d, err := collectOptional[DeclinedRule](rows)
	return d, wrap("find declined rule", err)
}

// DeleteGroupRule deletes one learned rule of a group: packages it took in
// stay where they are, and later grouping runs no longer apply it.
// ENOTFOUND when the group has no such rule.
func (db *DB) DeleteGroupRule(ctx context.Context, groupID, ruleID int64) error {
	tag, err := db.q.Exec(ctx, `DELETE FROM grouping_rules WHERE id = $1 AND group_id = $2`, ruleID, groupID)
	return notFoundIfNone("delete group rule", tag, err)
}
