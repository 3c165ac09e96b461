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
// link codes, stale sign-in throttles, dismissed notifications older than
// the retention period, and the search's tokens that nothing holds. It runs
// periodically on the worker.
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

// uniqueByArgs is the insert options of a job kind on queue that runs at
// most maxAttempts times and is queued once per distinct unique-tagged args
// while unfinished (uniqueUnfinished).
func uniqueByArgs(queue string, maxAttempts int) river.InsertOpts {
	return river.InsertOpts{Queue: queue, MaxAttempts: maxAttempts,
		UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: uniqueUnfinished}}
}

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

// BotSendArgs delivers one BotSendRequest (RequestID) or every request of
// a batch in order after its header (BatchID): the bot copies every part of
// each package (all destMessageIds) to the linked account, exactly once
// however often the job is retried or resumed. Inserted with the request
// rows; the bot_send notification only wakes the bot sooner.
type BotSendArgs struct {
	RequestID int64 `json:"request_id,omitempty"`
	BatchID   int64 `json:"batch_id,omitempty"`
}

// Kind implements river.JobArgs.
func (BotSendArgs) Kind() string { return "bot_send" }

// InsertOpts implements river.JobArgsWithInsertOpts. Flood waits snooze
// the job without spending an attempt; other failures retry, and the last
// attempt marks the requests FAILED.
func (BotSendArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueBot, MaxAttempts: 8}
}

// Timing of NotifySubscribersArgs; see its doc.
const (
	NotifySubscribersPeriod = 5 * time.Second
	NotifySubscribersMargin = 2 * time.Second
)

// NotifySubscribersArgs tells linked users about new packages that match
// their subscriptions: one notice per (subscription, package), ever, with
// the matches of one user folded into one digest message. The packages it
// considers are the rows of bot_notify_inbox, written in the transaction
// that indexes each package; enqueue it in that same transaction (next to
// GroupChannelArgs). Inserts coalesce by period like GroupChannelArgs, and
// the worker waits until new packages stop arriving for a moment (bounded),
// so a burst of matches becomes one digest, not a burst of messages.
type NotifySubscribersArgs struct{}

// Kind implements river.JobArgs.
func (NotifySubscribersArgs) Kind() string { return "notify_subscribers" }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (NotifySubscribersArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{
		Queue:       QueueBot,
		MaxAttempts: 10,
		ScheduledAt: time.Now().Truncate(NotifySubscribersPeriod).Add(NotifySubscribersPeriod + NotifySubscribersMargin),
		UniqueOpts:  river.UniqueOpts{ByPeriod: NotifySubscribersPeriod, ByState: uniqueUnfinished},
	}
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
// with a destination channel and no destination message, ORPHANED_POST for
// documents posted to the destination since the previous audit that no
// package or publication points to. Notifications are de-duplicated per
// package (per message for orphaned posts).
type AuditArgs struct {
	RunID int64 `json:"run_id,omitempty"`
}

// Kind implements river.JobArgs.
func (AuditArgs) Kind() string { return "audit" }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (AuditArgs) InsertOpts() river.InsertOpts {
	return uniqueByArgs(QueueMaintenance, 5)
}

// IngestCycleArgs runs one ingestion cycle: it creates the IngestionRun,
// fans out a scan per active source channel, waits (snoozing, without
// holding a worker) until every job of the run is final, then runs the
// integrity audit and completes the run. It is periodic every
// WORKER_INTERVAL_MINUTES and inserted on demand (ingestion_trigger, the
// web's trigger action, `hoard demo --once`); at most one is queued or
// running at a time, so a trigger during a cycle is a no-op.
type IngestCycleArgs struct {
	Trigger RunTrigger `json:"trigger"`
}

// Kind implements river.JobArgs.
func (IngestCycleArgs) Kind() string { return "ingest_cycle" }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (IngestCycleArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueIngest, MaxAttempts: 10,
		UniqueOpts: river.UniqueOpts{ByState: uniqueUnfinished}}
}

// ScanChannelArgs scans one source channel map of a run: the history after
// its watermark for a plain channel, the topic list (fanning out
// ScanTopicArgs) for a forum.
type ScanChannelArgs struct {
	RunID int64 `json:"run_id"`
	MapID int64 `json:"map_id"`
}

// Kind implements river.JobArgs.
func (ScanChannelArgs) Kind() string { return "scan_channel" }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (ScanChannelArgs) InsertOpts() river.InsertOpts {
	return uniqueByArgs(QueueIngest, 5)
}

// ScanTopicArgs scans one forum topic of a channel map after the topic's
// watermark.
type ScanTopicArgs struct {
	RunID   int64 `json:"run_id" river:"unique"`
	MapID   int64 `json:"map_id" river:"unique"`
	TopicID int64 `json:"topic_id" river:"unique"`
	// TopMessageID is the topic's newest message when the topic list was
	// read (0: unknown). The scan sees every message up to it, so the
	// watermark may advance that far even when that message is one the
	// history leaves out (a service message, or for General a message of
	// another topic).
	TopMessageID int64 `json:"top_message_id,omitempty"`
}

// Kind implements river.JobArgs.
func (ScanTopicArgs) Kind() string { return "scan_topic" }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (ScanTopicArgs) InsertOpts() river.InsertOpts {
	return uniqueByArgs(QueueIngest, 5)
}

// SourcePart is one message of a source set, in part order.
type SourcePart struct {
	MessageID int64  `json:"message_id"`
	Name      string `json:"name"`
	Size      int64  `json:"size"`
}

// IngestMessageArgs ingests one source set (a single file or the parts of a
// multi-part archive): download with the hash computed on the fly, dedup by
// content, then publish through UploadPartArgs jobs. One job exists per set
// (unique by channel and first message) while it is unfinished. Its
// MaxAttempts is WORKER_MAX_SKIP_ATTEMPTS, set at insert; each failed attempt
// is mirrored on the SkippedPackage.
type IngestMessageArgs struct {
	RunID     int64 `json:"run_id,omitempty"`
	ChannelID int64 `json:"channel_id" river:"unique"`
	// MessageID is the first part's message id.
	MessageID int64        `json:"message_id" river:"unique"`
	MapID     int64        `json:"map_id"`
	TopicID   int64        `json:"topic_id,omitempty"`
	FileName  string       `json:"file_name"`
	Size      int64        `json:"size"`
	Parts     []SourcePart `json:"parts"`
	// PhotoMessageID is a photo posted with the set (same album, or a
	// caption naming it) whose thumbnail becomes the preview.
	PhotoMessageID int64 `json:"photo_message_id,omitempty"`
}

// Kind implements river.JobArgs.
func (IngestMessageArgs) Kind() string { return "ingest_message" }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (IngestMessageArgs) InsertOpts() river.InsertOpts {
	return uniqueByArgs(QueueTransfer, 5)
}

// UploadPartArgs posts one part of a Transfer to the destination (re-sends
// the source message, or uploads a byte range of the spool files) and
// records its destination message id; the last part to finish enqueues
// VerifyTransferArgs.
type UploadPartArgs struct {
	RunID      int64 `json:"run_id,omitempty"`
	TransferID int64 `json:"transfer_id" river:"unique"`
	PartNo     int   `json:"part_no" river:"unique"`
}

// Kind implements river.JobArgs.
func (UploadPartArgs) Kind() string { return "upload_part" }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (UploadPartArgs) InsertOpts() river.InsertOpts {
	return uniqueByArgs(QueueTransfer, 5)
}

// VerifyTransferArgs re-hashes a posted Transfer's spool files against its
// content hash (SPEC rules 6 and 8), inspects them (listing, preview) and
// indexes the package in one transaction.
type VerifyTransferArgs struct {
	RunID      int64 `json:"run_id,omitempty"`
	TransferID int64 `json:"transfer_id" river:"unique"`
}

// Kind implements river.JobArgs.
func (VerifyTransferArgs) Kind() string { return "verify" }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (VerifyTransferArgs) InsertOpts() river.InsertOpts {
	return uniqueByArgs(QueueTransfer, 5)
}

// RecoverTransfersArgs checks the publications that were in flight when a
// worker stopped (SPEC rule 15): parts posted but not recorded are found in
// the destination, recorded parts that vanished are posted again, and a
// transfer whose parts are all posted gets its verify job. It runs when a
// worker starts.
type RecoverTransfersArgs struct{}

// Kind implements river.JobArgs.
func (RecoverTransfersArgs) Kind() string { return "recover_transfers" }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (RecoverTransfersArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueMaintenance, MaxAttempts: 5,
		UniqueOpts: river.UniqueOpts{ByState: uniqueUnfinished}}
}

// RescanChannelArgs rescans a channel from its first message (SPEC rule
// 20): its watermarks and topic progress are reset and a cycle is queued.
// Dedup keeps what is already indexed from being ingested twice.
type RescanChannelArgs struct {
	ChannelID int64 `json:"channel_id" river:"unique"`
}

// Kind implements river.JobArgs.
func (RescanChannelArgs) Kind() string { return "rescan_channel" }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (RescanChannelArgs) InsertOpts() river.InsertOpts {
	return uniqueByArgs(QueueMaintenance, 5)
}

// RepairPackageArgs reprocesses a package whose destination is broken
// (MISSING_PART, HASH_MISMATCH): its destination info is cleared and the
// watermark is reset to just before its source message, so the next cycle
// downloads and publishes it again into the same row (group, tags and
// crowdfund links stay).
type RepairPackageArgs struct {
	PackageID int64 `json:"package_id" river:"unique"`
}

// Kind implements river.JobArgs.
func (RepairPackageArgs) Kind() string { return "repair_package" }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (RepairPackageArgs) InsertOpts() river.InsertOpts {
	return uniqueByArgs(QueueMaintenance, 5)
}

// DeleteStalePostsArgs deletes a repaired package's stale destination posts
// (store.ListStalePosts) once its new publication is verified: verify
// queues it in the transaction that indexes the package again. Posts that
// are the package's again are only forgotten, so the package never loses
// its only copy.
type DeleteStalePostsArgs struct {
	PackageID int64 `json:"package_id" river:"unique"`
}

// Kind implements river.JobArgs.
func (DeleteStalePostsArgs) Kind() string { return "delete_stale_posts" }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (DeleteStalePostsArgs) InsertOpts() river.InsertOpts {
	return uniqueByArgs(QueueMaintenance, 5)
}

// RetrySkippedArgs gives a skipped source message a fresh attempt budget:
// the record goes back to RETRYING with no attempts, the watermark moves
// back before the message and a cycle is queued.
type RetrySkippedArgs struct {
	SkippedID int64 `json:"skipped_id" river:"unique"`
}

// Kind implements river.JobArgs.
func (RetrySkippedArgs) Kind() string { return "retry_skipped" }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (RetrySkippedArgs) InsertOpts() river.InsertOpts {
	return uniqueByArgs(QueueMaintenance, 5)
}

// RebuildFromDestinationArgs recreates missing package rows from the
// destination channel (SPEC rule 19): it reads the channel's history, groups
// the files into part sets and indexes every set no package holds yet, with
// live progress on its RebuildRun. The web inserts it with the run's row;
// only one is queued or running at a time (unique by kind while
// unfinished), and the run's unique RUNNING index backs that up.
type RebuildFromDestinationArgs struct {
	RebuildID int64 `json:"rebuild_id"`
}

// Kind implements river.JobArgs.
func (RebuildFromDestinationArgs) Kind() string { return "rebuild_from_destination" }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (RebuildFromDestinationArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueIngest, MaxAttempts: 5,
		UniqueOpts: river.UniqueOpts{ByState: uniqueUnfinished}}
}

// JoinChannelArgs works a ChannelJoin: the chosen account resolves and joins
// the channel, the channel becomes an active source with a READER map (and
// the request's category), and the outcome is recorded on the request, all
// in one transaction with the job's completion. The web inserts it with the
// request's row.
type JoinChannelArgs struct {
	JoinID int64 `json:"join_id" river:"unique"`
}

// Kind implements river.JobArgs.
func (JoinChannelArgs) Kind() string { return "join_channel" }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (JoinChannelArgs) InsertOpts() river.InsertOpts {
	return uniqueByArgs(QueueIngest, 3)
}

// AddBotAdminArgs makes the chat bot an administrator of a destination
// channel through the account that posts there, in the process that holds
// that account's session: a bot process asks for it this way when another
// process (the worker) holds the session, since one session is never used
// by two processes at once.
type AddBotAdminArgs struct {
	ChannelID   int64  `json:"channel_id" river:"unique"`
	BotUsername string `json:"bot_username" river:"unique"`
}

// Kind implements river.JobArgs.
func (AddBotAdminArgs) Kind() string { return "add_bot_admin" }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (AddBotAdminArgs) InsertOpts() river.InsertOpts {
	return uniqueByArgs(QueueMaintenance, 3)
}

// AccountLoginArgs starts (or repeats) the sign-in of a messenger account on
// the worker, which holds the account's client: a session that is still
// signed in only refreshes the profile; otherwise the platform sends a login
// code and the account waits for it (AWAITING_CODE). It runs once: a code is
// never re-sent in a loop (that earns day-long flood waits); a failure is
// recorded on the account for the administrator to retry.
type AccountLoginArgs struct {
	AccountID int64 `json:"account_id" river:"unique"`
}

// Kind implements river.JobArgs.
func (AccountLoginArgs) Kind() string { return "account_login" }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (AccountLoginArgs) InsertOpts() river.InsertOpts {
	return uniqueByArgs(QueueIngest, 1)
}

// AccountSignInArgs checks the login code or 2FA password an administrator
// submitted for an account. The secret is not in the args (River keeps args
// of finished jobs and shows them in its UI): it waits on the account row,
// encrypted with AUTH_SECRET, and is cleared in the transaction that records
// the outcome, whatever it is. It runs once; a wrong code or password leaves
// the account waiting for another.
type AccountSignInArgs struct {
	AccountID int64 `json:"account_id" river:"unique"`
}

// Kind implements river.JobArgs.
func (AccountSignInArgs) Kind() string { return "account_sign_in" }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (AccountSignInArgs) InsertOpts() river.InsertOpts {
	return uniqueByArgs(QueueIngest, 1)
}

// ExtractPreviewArgs extracts one image entry of a package's archive and
// makes a bounded JPEG thumbnail of it the package's preview, recording the
// outcome on the PreviewExtraction the package page polls. A ZIP entry is
// read with ranged downloads of the package's messages (only the archive's
// index and the entry's bytes); RAR and 7z archives, or a ZIP whose index
// cannot be used, are downloaded whole within a byte budget. The web
// inserts it with the extraction's row; one job per package and entry path
// is queued or running at a time.
type ExtractPreviewArgs struct {
	PackageID    int64  `json:"package_id" river:"unique"`
	EntryPath    string `json:"entry_path" river:"unique"`
	ExtractionID int64  `json:"extraction_id"`
}

// Kind implements river.JobArgs.
func (ExtractPreviewArgs) Kind() string { return "extract_preview" }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (ExtractPreviewArgs) InsertOpts() river.InsertOpts {
	return uniqueByArgs(QueueTransfer, 3)
}
