// Package messenger is the port through which hoard talks to the messaging
// platform. It holds small interfaces in SPEC vocabulary (Account for the
// worker's user accounts, Bot for the chat bot), the value types they
// exchange, typed errors, the channel-link parser, a rate limiter and the
// encrypted session store.
//
// The production adapter lives in messenger/telegram (gotd/td); tests and the
// demo run the very same adapter against the MTProto emulator in
// messenger/emulator. This package imports only the standard library and the
// root package.
package messenger

import (
	"context"
	"io"
	"strconv"
	"strings"
	"time"
)

// User is a platform user as seen by the signed-in account or bot.
type User struct {
	ID        int64
	Username  string
	FirstName string
	LastName  string
	Phone     string
	// Premium reports a Premium subscription: it doubles the upload part cap
	// (MaxPartsPremium instead of MaxParts).
	Premium bool
	Bot     bool
}

// Channel is a broadcast channel or a (forum) supergroup. AccessHash is per
// viewer: it is only valid for the account (or bot) that obtained it.
type Channel struct {
	ID         int64
	AccessHash int64
	Title      string
	Username   string
	// Forum reports a supergroup with topics.
	Forum bool
	// Protected reports noforwards: content may not be forwarded or resent,
	// only re-uploaded.
	Protected bool
	// Broadcast reports a broadcast channel (as opposed to a supergroup).
	Broadcast bool
	// Member reports whether the viewer is a member (has not left).
	Member bool
}

// JoinStatus is the outcome of JoinChannel.
type JoinStatus string

// Join outcomes. AlreadyMember and RequestSent are answers, not failures.
const (
	Joined        JoinStatus = "JOINED"
	AlreadyMember JoinStatus = "ALREADY_MEMBER"
	RequestSent   JoinStatus = "REQUEST_SENT"
)

// Topic is a forum topic. The General topic has ID GeneralTopicID.
type Topic struct {
	ID    int
	Title string
	// TopMessageID is the id of the topic's newest message: a scan whose
	// watermark is already there needs no history call.
	TopMessageID int
}

// GeneralTopicID is the id of a forum's General topic.
const GeneralTopicID = 1

// Document is a file attached to a message. ID, AccessHash and
// FileReference locate the bytes; FileReference expires and is refreshed by
// re-fetching the message.
type Document struct {
	ID            int64
	AccessHash    int64
	FileReference []byte
	DCID          int
	FileName      string
	Size          int64
	MimeType      string
}

// RemoteUniqueID returns the platform's stable per-file-content id: equal for
// every message that carries the same document, for any viewer.
func (d *Document) RemoteUniqueID() string {
	return "doc" + strconv.FormatInt(d.ID, 10)
}

// Photo is a photo attached to a message. Thumb is the size type of the
// largest available size (used by Account.DownloadThumbnail).
type Photo struct {
	ID            int64
	AccessHash    int64
	FileReference []byte
	DCID          int
	Thumb         string
	Width, Height int
	Size          int64
}

// Message is one channel post (or a bot's incoming message).
type Message struct {
	ID   int
	Date time.Time
	// GroupedID is the album id; 0 when the message is not part of an album.
	GroupedID int64
	// ReplyToID is the id of the replied-to message, 0 when none. Inside a
	// forum topic a plain topic message has ReplyToID 0.
	ReplyToID int
	// TopicID is the forum topic of the message: 0 outside forums,
	// GeneralTopicID for General.
	TopicID int
	// Text is the caption of a media message or the text of a text message.
	Text      string
	Document  *Document
	Photo     *Photo
	Protected bool
}

// HistoryQuery selects messages of a channel for Account.History.
type HistoryQuery struct {
	// TopicID limits the history to one forum topic (GeneralTopicID for
	// General); 0 means the whole channel.
	TopicID int
	// AfterID is the watermark: only messages with a larger id are returned.
	AfterID int
}

// HistoryPageSize is the most messages one history request returns: the
// platform's limit.
const HistoryPageSize = 100

// HistoryPage is one page of a history read oldest first
// (Account.HistoryPage).
type HistoryPage struct {
	// Messages are the page's messages in ascending id order: those after
	// the query's AfterID the port carries (service messages are left
	// out, and for General the other topics' messages).
	Messages []Message
	// Last is the newest message id the page covered, left-out messages
	// included (the query's AfterID when it covered none): the next page
	// starts after it.
	Last int
	// More reports that the history may go on after Last: the page was
	// full.
	More bool
}

// DownloadRequest describes one download attempt.
type DownloadRequest struct {
	Channel   Channel
	MessageID int
	Document  Document
	// Offset is the number of bytes already present at the start of the
	// destination (resume point).
	Offset int64
	// Threads is the number of chunks in flight; default 4.
	Threads int
	// Progress, when set, is called with the contiguous number of bytes
	// written so far. It must be fast and is called from several goroutines
	// but never concurrently.
	Progress func(done int64)
	// Limit, when positive, stops the download after the chunk that holds
	// byte Limit (a probe that the file can be read, say).
	Limit int64
}

// DownloadError reports a failed download together with the offset up to
// which the destination holds good bytes; pass it as Offset to resume.
type DownloadError struct {
	Offset int64
	Err    error
}

// Error implements error.
func (e *DownloadError) Error() string {
	return "download failed at offset " + strconv.FormatInt(e.Offset, 10) + ": " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *DownloadError) Unwrap() error { return e.Err }

// UploadRequest describes a document upload to a destination channel.
type UploadRequest struct {
	Channel  Channel
	Data     *io.SectionReader
	FileName string
	MimeType string
	Caption  string
	// Threads is the number of parts in flight; default 4.
	Threads int
	// Premium selects the Premium part cap.
	Premium bool
	// Resume continues an upload that failed with an *UploadError (files
	// above 10 MiB): parts already stored by the platform are not sent
	// again. Uploaded parts live for minutes to hours on the platform; when
	// they are gone by the time the file is posted (FILE_PART_X_MISSING),
	// the upload starts again from part 0, once.
	Resume *UploadResume
	// Progress, when set, is told the resume point of a file above 10 MiB
	// each time the platform has stored more of its leading parts. It is
	// called from the upload's goroutines, one call at a time, and must
	// return quickly. Keeping the last point durably lets an upload go on
	// after its process ended.
	Progress func(UploadResume)
}

// UploadResume identifies the parts of an upload already stored by the
// platform: FileID and the first PartsDone parts.
type UploadResume struct {
	FileID    int64
	PartsDone int
}

// UploadError reports a failed upload with its resume point; pass Resume in
// the next UploadRequest for the same bytes.
type UploadError struct {
	Resume UploadResume
	Err    error
}

// Error implements error.
func (e *UploadError) Error() string {
	return "upload failed after " + strconv.Itoa(e.Resume.PartsDone) + " parts: " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *UploadError) Unwrap() error { return e.Err }

// Upload limits of the platform: parts are 512 KiB, at most MaxParts parts
// (MaxPartsPremium for Premium accounts) per file.
const (
	UploadPartSize  = 512 << 10
	MaxParts        = 4000
	MaxPartsPremium = 8000
)

// MaxUploadSize returns the largest file the platform accepts in one upload.
func MaxUploadSize(premium bool) int64 {
	if premium {
		return MaxPartsPremium * UploadPartSize
	}
	return MaxParts * UploadPartSize
}

// Account is a user account used by the worker. Implementations are safe for
// concurrent use; every call of one account shares one rate limiter.
type Account interface {
	// Authorized reports whether the session is signed in.
	Authorized(ctx context.Context) (bool, error)
	// SendCode starts a login: the platform sends a code out of band.
	SendCode(ctx context.Context, phone string) error
	// SignIn completes the login with the code. It returns ErrPasswordNeeded
	// when the account has a 2FA password; then call CheckPassword.
	SignIn(ctx context.Context, code string) error
	// CheckPassword completes a 2FA login.
	CheckPassword(ctx context.Context, password string) error
	// PendingCode returns the login code request in flight since SendCode
	// (false when none is): a worker stores it (encrypted) so that any
	// client of the same session can finish the login with ResumeCode.
	PendingCode() (LoginCode, bool)
	// ResumeCode makes SignIn use a code request made by another client of
	// the same session (another worker process, or before a restart).
	ResumeCode(LoginCode)
	// Self returns the signed-in user, including the Premium flag.
	Self(ctx context.Context) (User, error)
	// ResolveChannel finds a channel by reference. For an invite link of a
	// channel the account has not joined, the returned Channel has only a
	// Title and Member=false.
	ResolveChannel(ctx context.Context, ref ChannelRef) (Channel, error)
	// JoinChannel joins a channel by reference.
	JoinChannel(ctx context.Context, ref ChannelRef) (Channel, JoinStatus, error)
	// ChannelInfo re-reads a channel (title, forum and protected flags).
	ChannelInfo(ctx context.Context, ch Channel) (Channel, error)
	// Topics lists every topic of a forum.
	Topics(ctx context.Context, ch Channel) ([]Topic, error)
	// History returns the messages after q.AfterID in ascending id order.
	History(ctx context.Context, ch Channel, q HistoryQuery) ([]Message, error)
	// HistoryPage returns the oldest page of messages after q.AfterID, at
	// most HistoryPageSize of them, in one request: a long history is
	// read in order, page by page, each page after the previous one's
	// Last, so that a reader can keep what it read before a flood wait
	// or a crash.
	HistoryPage(ctx context.Context, ch Channel, q HistoryQuery) (HistoryPage, error)
	// Messages fetches messages by id; missing ids are left out.
	Messages(ctx context.Context, ch Channel, ids []int) ([]Message, error)
	// LatestDocument returns the newest message of ch (any forum topic)
	// that carries a document; false when there is none.
	LatestDocument(ctx context.Context, ch Channel) (Message, bool, error)
	// Download writes a document to w from req.Offset on. Errors are
	// *DownloadError carrying the resume offset.
	Download(ctx context.Context, req DownloadRequest, w io.WriterAt) error
	// DownloadThumbnail returns the bytes of a photo.
	DownloadThumbnail(ctx context.Context, ch Channel, msg Message) ([]byte, error)
	// Upload uploads req.Data as a document with a caption and returns the
	// message id in the destination. Failures of files above 10 MiB are
	// *UploadError carrying the resume point, except refusals of the post
	// itself (400), after which no stored part is worth resuming. Parts the
	// platform dropped by the time of the post (FILE_PART_X_MISSING) are
	// uploaded again from part 0, once per call.
	Upload(ctx context.Context, req UploadRequest) (int, error)
	// Resend posts an existing document to dest without uploading it. The
	// source must not be Protected (ErrProtected).
	Resend(ctx context.Context, dest Channel, src Channel, msg Message, caption string) (int, error)
	// AddBotAdmin makes the bot @botUsername an administrator of ch with
	// the least right there is (managing the channel, which lets it read
	// and copy posts), so that the bot learns the channel and can deliver
	// from it. Doing it again is harmless. An account that may not make
	// administrators there gets ErrAdminRequired.
	AddBotAdmin(ctx context.Context, ch Channel, botUsername string) error
	// DeleteMessages deletes posts of a channel the account may post in
	// (stale posts of a repaired package); ids that are gone already are
	// no error.
	DeleteMessages(ctx context.Context, ch Channel, ids []int) error
}

// LoginCode is a login code request in flight: the phone number and the
// platform's hash of the code sent to it. The hash is not the code, but
// keep it out of logs and pages all the same.
type LoginCode struct {
	Phone string `json:"phone"`
	Hash  string `json:"hash"`
}

// EscapeHTML escapes text for the HTML subset of bot messages (Bot.Reply,
// captions): &, < and > become entities, quotes too (safe in attributes).
func EscapeHTML(s string) string {
	return htmlReplacer.Replace(s)
}

var htmlReplacer = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;")
