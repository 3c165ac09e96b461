package jobs

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/grouping"
	"github.com/hoard/hoard/store"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
)

// LearnGroupRuleWorker learns the rule of a group a user created by hand
// (grouping.LearnRule over its members), stores it, and enqueues grouping of
// the group's channel so that matching ungrouped packages join the group at
// once. All three happen in the transaction that completes the job.
type LearnGroupRuleWorker struct {
	worker[hoard.LearnGroupRuleArgs]
	db *store.DB
}

func newLearnGroupRuleWorker(p *parts) *LearnGroupRuleWorker {
	return &LearnGroupRuleWorker{worker: worker[hoard.LearnGroupRuleArgs]{fail: p.fail}, db: p.db}
}

// learnResult is the job's recorded output.
type learnResult struct {
	RuleID  int64  `json:"rule_id,omitempty"`
	Pattern string `json:"pattern,omitempty"`
	Signal  string `json:"signal,omitempty"`
	Note    string `json:"note,omitempty"`
}

// Work implements river.Worker. A group deleted in the meantime cancels the
// job; a group that is not MANUAL, or whose members share nothing to learn,
// completes it without a rule. A rule that would also match packages of
// other groups of the channel is not learned (grouping.LearnRuleAmong): the
// group records it as declined, with why, and its page offers it. A prefix
// longer than a rule may hold is cut to the limit.
func (w *LearnGroupRuleWorker) Work(ctx context.Context, job *river.Job[hoard.LearnGroupRuleArgs]) error {
	err := w.db.InTx(ctx, func(tx *store.DB) error {
		out, err := learnGroupRule(ctx, tx, job.Args.GroupID)
		if err != nil {
			return err
		}
		if out.channelID != 0 {
			client := river.ClientFromContext[pgx.Tx](ctx)
			if _, err := client.InsertTx(ctx, tx.Tx(), hoard.GroupChannelArgs{ChannelID: out.channelID}, nil); err != nil {
				return fmt.Errorf("enqueue group_channel: %w", err)
			}
		}
		if err := river.RecordOutput(ctx, out.learnResult); err != nil {
			return err
		}
		_, err = river.JobCompleteTx[*riverpgxv5.Driver](ctx, tx.Tx(), job)
		return err
	})
	if err != nil {
		// The group is gone, or nothing valid can be learned: cancelled
		// (its policy).
		err = fmt.Errorf("learn group rule %d: %w", job.Args.GroupID, err)
	}
	return w.finish(ctx, job, err, nil)
}

// maxRulePattern is the longest pattern the store accepts, in characters.
const maxRulePattern = 512

type learned struct {
	learnResult
	channelID int64 // the group's channel, to regroup; 0 when nothing was learned
}

// learnGroupRule learns and stores the rule of a MANUAL group from its
// current members. ENOTFOUND when the group does not exist.
func learnGroupRule(ctx context.Context, db *store.DB, groupID int64) (learned, error) {
	g, err := db.FindGroupByID(ctx, groupID)
	if err != nil {
		return learned{}, err
	}
	if g.GroupingSource != hoard.GroupManual {
		return learned{learnResult: learnResult{Note: "not a manual group"}}, nil
	}
	members, err := db.LoadGroupMembers(ctx, groupID)
	if err != nil {
		return learned{}, err
	}
	l, err := learnAmongChannel(ctx, db, g, members)
	if err != nil {
		return learned{}, err
	}
	if l.Declined != nil {
		d := declinedRule(*l.Declined, l)
		return learned{learnResult: learnResult{Note: d.Note}}, db.SetDeclinedRule(ctx, groupID, &d)
	}
	r, ok := l.Rule, l.OK
	if !ok {
		return learned{learnResult: learnResult{Note: "the members share no file-name prefix or creator"}}, db.SetDeclinedRule(ctx, groupID, nil)
	}
	if utf8.RuneCountInString(r.Pattern) > maxRulePattern {
		if r.Kind != grouping.RulePrefix {
			return learned{learnResult: learnResult{Note: "the shared creator is too long for a rule"}}, nil
		}
		// A shorter prefix of the prefix still names the same project.
		r.Pattern = strings.TrimSpace(string([]rune(r.Pattern)[:maxRulePattern]))
	}
	rule := &hoard.GroupingRule{GroupID: groupID, Pattern: r.Pattern, SignalType: hoard.RuleSignal(r.Kind), Confidence: r.Confidence}
	if _, err := db.AddGroupingRule(ctx, rule); err != nil {
		return learned{}, err
	}
	if err := db.SetDeclinedRule(ctx, groupID, nil); err != nil {
		return learned{}, err
	}
	return learned{
		learnResult: learnResult{RuleID: rule.ID, Pattern: rule.Pattern, Signal: string(rule.SignalType)},
		channelID:   g.SourceChannelID,
	}, nil
}

// learnAmongChannel learns the rule of group g from its members among the
// other packages of its channel (grouping.LearnRuleAmong).
func learnAmongChannel(ctx context.Context, db *store.DB, g *hoard.PackageGroup, members []hoard.GroupingPackage) (grouping.Learning, error) {
	var others []hoard.GroupingPackage
	if g.SourceChannelID != 0 {
		snap, err := db.LoadGroupingSnapshot(ctx, g.SourceChannelID, store.SnapshotOptions{All: true})
		if err != nil {
			return grouping.Learning{}, err
		}
		for _, p := range snap.Packages {
			if p.GroupID != g.ID {
				others = append(others, p)
			}
		}
	}
	return grouping.LearnRuleAmong(groupingPackages(members), groupingPackages(others)), nil
}

// declinedRule words a rule learning declined: what it would match, and
// the packages and groups it would also take in.
func declinedRule(r grouping.Rule, l grouping.Learning) store.DeclinedRule {
	rule := hoard.GroupingRule{SignalType: hoard.RuleSignal(r.Kind), Pattern: r.Pattern}
	names := make([]string, 0, 3)
	for _, c := range l.Clashes[:min(3, len(l.Clashes))] {
		names = append(names, c.FileName)
	}
	more := ""
	if len(l.Clashes) > len(names) {
		more = ", …"
	}
	groups := "another group"
	if len(l.ClashGroups) > 1 {
		groups = fmt.Sprintf("%d other groups", len(l.ClashGroups))
	}
	return store.DeclinedRule{SignalType: rule.SignalType, Pattern: rule.Pattern,
		Note: fmt.Sprintf("No rule learned: %s would also match packages of %s (%s%s), which would raise grouping conflicts.",
			rule.Words(), groups, strings.Join(names, ", "), more)}
}
