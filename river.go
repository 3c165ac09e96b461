package hoard

import "github.com/riverqueue/river"

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
