package hoard

import (
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// River queues. Each process works only the queues of its role (see
// queue.QueuesFor); jobs name their queue in InsertOpts so that web and bot
// can enqueue by args type without importing the workers.
const (
	// QueueIngest runs cycles and channel/topic scans: many short jobs.
	QueueIngest = "ingest"
	// QueueTransfer runs downloads and uploads: few long jobs that hold
	// spool disk and platform bandwidth.
	QueueTransfer = "transfer"
	// QueueMaintenance runs audits, grouping, re-tagging, clean-up and
	// other database-only work.
	QueueMaintenance = "maintenance"
	// QueueBot runs deliveries and notifications through the bot account.
	QueueBot = "bot"
)

// Queues lists every queue hoard uses.
var Queues = []string{QueueIngest, QueueTransfer, QueueMaintenance, QueueBot}

// CleanupArgs removes rows nobody needs any more: expired web sessions and
// link codes, stale sign-in throttles, and dismissed notifications older than
// the retention period. It runs periodically on the worker.
type CleanupArgs struct{}

// Kind implements river.JobArgs.
func (CleanupArgs) Kind() string { return "cleanup" }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (CleanupArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueMaintenance, MaxAttempts: 3}
}

// uniqueUnfinished is the ByState of jobs that must not be queued twice
// while one is waiting or running, yet may run again once it has finished
// (River's default includes completed, which would block re-runs for a day).
var uniqueUnfinished = []rivertype.JobState{rivertype.JobStateAvailable, rivertype.JobStatePending,
	rivertype.JobStateRunning, rivertype.JobStateRetryable, rivertype.JobStateScheduled}

// Timing of GroupChannelArgs; see its doc.
const (
	GroupChannelPeriod = 5 * time.Second
	GroupChannelMargin = 2 * time.Second
)

// GroupChannelArgs runs the grouping passes over one source channel and
// applies the result: new groups, packages joining existing groups, and
// GROUPING_CONFLICT notifications. It is idempotent: a run over an unchanged
// channel changes nothing. Enqueue it in the transaction that indexes a
// package (or changes what grouping sees) and commit within
// GroupChannelMargin.
//
// Inserts coalesce: all inserts for a channel within one GroupChannelPeriod
// bucket of wall time become one job, scheduled GroupChannelMargin after the
// bucket ends. A job therefore never starts before every insert it absorbed
// was made (plus the margin for their transactions to commit), and an insert
// made while a job runs falls into a later bucket and queues a new job
// instead of being dropped as a duplicate of the running one: a package
// indexed during a run is never missed. The cost is a delay of a few seconds
// before a new package is grouped.
type GroupChannelArgs struct {
	ChannelID int64 `json:"channel_id"`
}

// Kind implements river.JobArgs.
func (GroupChannelArgs) Kind() string { return "group_channel" }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (GroupChannelArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{
		Queue:       QueueMaintenance,
		MaxAttempts: 5,
		ScheduledAt: groupChannelSchedule(time.Now()),
		UniqueOpts:  river.UniqueOpts{ByArgs: true, ByPeriod: GroupChannelPeriod, ByState: uniqueUnfinished},
	}
}

// groupChannelSchedule is the run time of a group_channel job inserted at
// now: the end of now's period bucket plus the margin. River derives the
// unique bucket from this time, and as the margin is shorter than the
// period, that bucket is the one after now's.
func groupChannelSchedule(now time.Time) time.Time {
	return now.Truncate(GroupChannelPeriod).Add(GroupChannelPeriod + GroupChannelMargin)
}

// LearnGroupRuleArgs learns the grouping rule of a group a user created by
// hand (from its members' common file-name prefix or shared creator), stores
// it and enqueues GroupChannelArgs for the group's channel, so that matching
// packages join the group. The web application enqueues it in the
// transaction that creates the group (store.CreateManualGroup): the rule
// needs the grouping engine, which only jobs may import.
type LearnGroupRuleArgs struct {
	GroupID int64 `json:"group_id"`
}

// Kind implements river.JobArgs.
func (LearnGroupRuleArgs) Kind() string { return "learn_group_rule" }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (LearnGroupRuleArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{
		Queue:       QueueMaintenance,
		MaxAttempts: 5,
		UniqueOpts:  river.UniqueOpts{ByArgs: true, ByState: uniqueUnfinished},
	}
}

// BotSendArgs delivers one BotSendRequest: the bot copies every part of the
// package (all destMessageIds) to the linked account. Inserted with the
// request row; the bot_send notification only wakes the bot sooner.
type BotSendArgs struct {
	RequestID int64 `json:"request_id"`
}

// Kind implements river.JobArgs.
func (BotSendArgs) Kind() string { return "bot_send" }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (BotSendArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueBot, MaxAttempts: 5}
}

// ManualUploadArgs processes a manual upload on the worker: hash, inspect,
// split, upload and index each file, then group several files of one
// upload. Inserted with the upload's rows; the manual_upload notification
// only wakes the worker sooner.
type ManualUploadArgs struct {
	UploadID int64 `json:"upload_id"`
}

// Kind implements river.JobArgs.
func (ManualUploadArgs) Kind() string { return "manual_upload" }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (ManualUploadArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueTransfer, MaxAttempts: 5}
}

// AuditArgs runs the integrity audit after an ingestion cycle (SPEC rule
// 16): MISSING_PART for multi-part packages whose stored destination ids
// (more than one) differ from their part count, ORPHANED_INDEX for packages
// with a destination channel and no destination message. Notifications are
// de-duplicated per package.
type AuditArgs struct {
	RunID int64 `json:"run_id,omitempty"`
}

// Kind implements river.JobArgs.
func (AuditArgs) Kind() string { return "audit" }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (AuditArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueMaintenance, MaxAttempts: 5,
		UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: uniqueUnfinished}}
}
