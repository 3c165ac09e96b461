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
	river.WorkerDefaults[hoard.LearnGroupRuleArgs]
	deps Deps
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
// completes it without a rule. A prefix longer than a rule may hold is cut
// to the limit.
func (w *LearnGroupRuleWorker) Work(ctx context.Context, job *river.Job[hoard.LearnGroupRuleArgs]) error {
	err := w.deps.DB.InTx(ctx, func(tx *store.DB) error {
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
		err = fmt.Errorf("learn group rule %d: %w", job.Args.GroupID, err)
		if code := hoard.ErrorCode(err); code == hoard.ENOTFOUND || code == hoard.EINVALID {
			return river.JobCancel(err) // the group is gone, or nothing valid can be learned
		}
		return err
	}
	return nil
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
	r, ok := grouping.LearnRule(groupingPackages(members))
	if !ok {
		return learned{learnResult: learnResult{Note: "the members share no file-name prefix or creator"}}, nil
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
	return learned{
		learnResult: learnResult{RuleID: rule.ID, Pattern: rule.Pattern, Signal: string(rule.SignalType)},
		channelID:   g.SourceChannelID,
	}, nil
}
