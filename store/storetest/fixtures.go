package storetest

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// The builders below store one row each through store's own methods where
// one exists (so a fixture is a row hoard could have written) and fail the
// test on an error. Every option has a default: a zero field means "any
// valid value", and names, platform ids and hashes are unique within the
// test process, so tests sharing a database never collide.

// seq numbers the builders' unique values.
var seq atomic.Int64

func next() int64 { return seq.Add(1) }

// queryer is what a store.DB queries with: its transaction (NewTx) or its
// pool (NewDB).
type queryer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

func q(db *store.DB) queryer {
	if tx := db.Tx(); tx != nil {
		return tx
	}
	return db.Pool()
}

// ChannelOpts describes a channel for Channel. Defaults: a unique
// PlatformID and Title "Channel N", Kind source, inactive.
type ChannelOpts struct {
	PlatformID       int64
	Title            string
	Username         string
	InviteLink       string
	Kind             hoard.ChannelKind
	Category         string
	Active           bool
	AutoGroupEnabled bool
	Forum            bool
	Protected        bool
}

// Channel stores a messenger channel.
func Channel(t testing.TB, db *store.DB, o ChannelOpts) *hoard.Channel {
	t.Helper()
	n := next()
	c := &hoard.Channel{PlatformID: o.PlatformID, Title: o.Title, Username: o.Username, InviteLink: o.InviteLink, Kind: o.Kind,
		Category: o.Category, IsActive: o.Active, AutoGroupEnabled: o.AutoGroupEnabled, IsForum: o.Forum, IsProtected: o.Protected}
	if c.PlatformID == 0 {
		c.PlatformID = 1_000_000 + n
	}
	if c.Title == "" {
		c.Title = fmt.Sprintf("Channel %d", n)
	}
	if c.Kind == "" {
		c.Kind = hoard.ChannelSource
	}
	if err := db.UpsertChannel(context.Background(), c); err != nil {
		t.Fatalf("storetest.Channel: %v", err)
	}
	return c
}

// PackageOpts describes a package for Package. Defaults: FileName
// "Pack N.zip", FileSize 1000+N, ArchiveType ZIP, a unique ContentHash,
// one part, unpublished, no source. DestMessageIDs publish it to
// DestChannelID (a destination channel is made when it is 0).
type PackageOpts struct {
	FileName         string
	FileSize         int64
	ArchiveType      hoard.ArchiveType
	ContentHash      string
	PartCount        int
	FileCount        int
	Creator          string
	Tags             []string
	SourceChannelID  int64
	SourceMessageID  int64
	SourceMessageIDs []int64
	SourceTopicID    int64
	SourceCaption    string
	SourcePostedAt   time.Time
	RemoteUniqueID   string
	DestChannelID    int64
	DestMessageIDs   []int64
	PreviewData      []byte
	GroupID          int64
	IngestionRunID   int64
}

// Package stores a package.
func Package(t testing.TB, db *store.DB, o PackageOpts) *hoard.Package {
	t.Helper()
	n := next()
	p := &hoard.Package{FileName: o.FileName, FileSize: o.FileSize, ArchiveType: o.ArchiveType, ContentHash: o.ContentHash,
		PartCount: o.PartCount, FileCount: o.FileCount, Creator: o.Creator, Tags: o.Tags,
		SourceChannelID: o.SourceChannelID, SourceMessageID: o.SourceMessageID, SourceMessageIDs: o.SourceMessageIDs,
		SourceTopicID: o.SourceTopicID, SourceCaption: o.SourceCaption, SourcePostedAt: o.SourcePostedAt,
		RemoteUniqueID: o.RemoteUniqueID, DestChannelID: o.DestChannelID, DestMessageIDs: o.DestMessageIDs,
		PreviewData: o.PreviewData, PackageGroupID: o.GroupID, IngestionRunID: o.IngestionRunID}
	if p.FileName == "" {
		p.FileName = fmt.Sprintf("Pack %d.zip", n)
	}
	if p.FileSize == 0 {
		p.FileSize = 1000 + n
	}
	if p.ArchiveType == "" {
		p.ArchiveType = hoard.ArchiveZIP
	}
	if p.ContentHash == "" {
		// Prefixed, so as not to meet the small numbers tests hash by hand.
		p.ContentHash = fmt.Sprintf("5707e57%057x", n)
	}
	if p.SourceMessageID == 0 && len(p.SourceMessageIDs) > 0 {
		p.SourceMessageID = p.SourceMessageIDs[0]
	}
	if len(p.DestMessageIDs) > 0 {
		if p.DestChannelID == 0 {
			p.DestChannelID = Channel(t, db, ChannelOpts{Kind: hoard.ChannelDestination}).ID
		}
		p.DestMessageID = p.DestMessageIDs[0]
	}
	if err := db.CreatePackage(context.Background(), p); err != nil {
		t.Fatalf("storetest.Package: %v", err)
	}
	return p
}

// AccountOpts describes a messenger account for Account. Defaults: a
// unique Phone, AuthState PENDING.
type AccountOpts struct {
	Phone     string
	AuthState hoard.AuthState
}

// Account stores a messenger account.
func Account(t testing.TB, db *store.DB, o AccountOpts) *hoard.Account {
	t.Helper()
	ctx := context.Background()
	if o.Phone == "" {
		o.Phone = fmt.Sprintf("+1555%07d", next())
	}
	a, err := db.CreateAccount(ctx, o.Phone)
	if err != nil {
		t.Fatalf("storetest.Account: %v", err)
	}
	if o.AuthState != "" && o.AuthState != a.AuthState {
		if err := db.SetAccountAuthState(ctx, a.ID, o.AuthState, ""); err != nil {
			t.Fatalf("storetest.Account: %v", err)
		}
		if a, err = db.FindAccountByID(ctx, a.ID); err != nil {
			t.Fatalf("storetest.Account: %v", err)
		}
	}
	return a
}

// UserOpts describes a web user for User. Defaults: Email
// "userN@example.com", Role user, PasswordHash "x" (no password opens it).
type UserOpts struct {
	Email        string
	Role         hoard.Role
	PasswordHash string
}

// User stores a web user.
func User(t testing.TB, db *store.DB, o UserOpts) *hoard.User {
	t.Helper()
	if o.Email == "" {
		o.Email = fmt.Sprintf("user%d@example.com", next())
	}
	if o.Role == "" {
		o.Role = hoard.RoleUser
	}
	if o.PasswordHash == "" {
		o.PasswordHash = "x"
	}
	u, err := db.CreateUser(context.Background(), o.Email, o.PasswordHash, o.Role)
	if err != nil {
		t.Fatalf("storetest.User: %v", err)
	}
	return u
}

// SessionOpts describes a web session for Session. Defaults: a unique ID,
// a new user, expiring in an hour (ExpiresAt may be in the past).
type SessionOpts struct {
	ID        string
	UserID    int64
	ExpiresAt time.Time
}

// Session stores a web session.
func Session(t testing.TB, db *store.DB, o SessionOpts) *hoard.Session {
	t.Helper()
	s := &hoard.Session{ID: o.ID, UserID: o.UserID, ExpiresAt: o.ExpiresAt}
	if s.ID == "" {
		s.ID = fmt.Sprintf("session-%d", next())
	}
	if s.UserID == 0 {
		s.UserID = User(t, db, UserOpts{}).ID
	}
	if s.ExpiresAt.IsZero() {
		s.ExpiresAt = time.Now().Add(time.Hour)
	}
	if err := db.CreateSession(context.Background(), s); err != nil {
		t.Fatalf("storetest.Session: %v", err)
	}
	return s
}

// InviteOpts describes an invite code for Invite. Defaults: a unique Code,
// Role user, one use, no expiry (ExpiresAt may be in the past).
type InviteOpts struct {
	Code      string
	Role      hoard.Role
	MaxUses   int
	ExpiresAt time.Time
	CreatedBy int64
}

// Invite stores an invite code.
func Invite(t testing.TB, db *store.DB, o InviteOpts) *hoard.InviteCode {
	t.Helper()
	inv := &hoard.InviteCode{Code: o.Code, Role: o.Role, MaxUses: o.MaxUses, CreatedBy: o.CreatedBy}
	if inv.Code == "" {
		inv.Code = fmt.Sprintf("invite-%d", next())
	}
	if !o.ExpiresAt.IsZero() {
		inv.ExpiresAt = &o.ExpiresAt
	}
	if err := db.CreateInvite(context.Background(), inv); err != nil {
		t.Fatalf("storetest.Invite: %v", err)
	}
	return inv
}

// NotificationOpts describes a system notification for Notification.
// Defaults: Type DOWNLOAD_FAILED, a unique Title (and so dedup key).
// DismissedAt dismisses it at that time (for retention tests).
type NotificationOpts struct {
	Type        hoard.NotificationType
	Severity    hoard.Severity
	Title       string
	Message     string
	DedupKey    string
	PackageID   int64
	ChannelID   int64
	DismissedAt time.Time
}

// Notification stores a system notification; a live one with the same
// dedup key fails the test.
func Notification(t testing.TB, db *store.DB, o NotificationOpts) *hoard.Notification {
	t.Helper()
	ctx := context.Background()
	n := &hoard.Notification{Type: o.Type, Severity: o.Severity, Title: o.Title, Message: o.Message, DedupKey: o.DedupKey,
		PackageID: o.PackageID, ChannelID: o.ChannelID}
	if n.Type == "" {
		n.Type = hoard.NotifyDownloadFailed
	}
	if n.Title == "" {
		n.Title = fmt.Sprintf("Problem %d", next())
	}
	created, err := db.CreateNotification(ctx, n)
	if err != nil || !created {
		t.Fatalf("storetest.Notification: created %v, %v", created, err)
	}
	if !o.DismissedAt.IsZero() {
		// No store method dismisses at a chosen time: retention is
		// measured from dismissed_at.
		if err := q(db).QueryRow(ctx, `UPDATE system_notifications SET dismissed = true, dismissed_at = $2 WHERE id = $1
			RETURNING dismissed, dismissed_at`, n.ID, o.DismissedAt).Scan(&n.Dismissed, &n.DismissedAt); err != nil {
			t.Fatalf("storetest.Notification: dismiss: %v", err)
		}
	}
	return n
}

// SkippedOpts describes a skipped package for Skipped. Defaults: a new
// source channel, a unique SourceMessageID, FileName "Skipped N.zip",
// Reason DOWNLOAD_FAILED, Status RETRYING (store's default).
type SkippedOpts struct {
	SourceChannelID int64
	SourceMessageID int64
	FileName        string
	FileSize        int64
	Reason          hoard.SkipReason
	Status          hoard.SkipStatus
	AttemptCount    int
	LastError       string
}

// Skipped stores a skipped package.
func Skipped(t testing.TB, db *store.DB, o SkippedOpts) *hoard.SkippedPackage {
	t.Helper()
	n := next()
	s := &hoard.SkippedPackage{SourceChannelID: o.SourceChannelID, SourceMessageID: o.SourceMessageID, FileName: o.FileName,
		FileSize: o.FileSize, Reason: o.Reason, Status: o.Status, AttemptCount: o.AttemptCount, LastError: o.LastError}
	if s.SourceChannelID == 0 {
		s.SourceChannelID = Channel(t, db, ChannelOpts{}).ID
	}
	if s.SourceMessageID == 0 {
		s.SourceMessageID = n
	}
	if s.FileName == "" {
		s.FileName = fmt.Sprintf("Skipped %d.zip", n)
	}
	if s.Reason == "" {
		s.Reason = hoard.SkipDownloadFailed
	}
	if err := db.UpsertSkippedPackage(context.Background(), s); err != nil {
		t.Fatalf("storetest.Skipped: %v", err)
	}
	return s
}

// Count returns the number of rows of a table, any table (store.CountRows
// counts only the catalog's).
func Count(t testing.TB, db *store.DB, table string) int {
	t.Helper()
	var n int
	if err := q(db).QueryRow(context.Background(), `SELECT count(*) FROM `+pgx.Identifier{table}.Sanitize()).Scan(&n); err != nil {
		t.Fatalf("storetest.Count(%s): %v", table, err)
	}
	return n
}

// Readers: the rows a test checks at the end, read whole through store's
// own finders, where store has no method that lists them all.

func ids(t testing.TB, db *store.DB, table string) []int64 {
	t.Helper()
	rows, err := q(db).Query(context.Background(), `SELECT id FROM `+pgx.Identifier{table}.Sanitize()+` ORDER BY id`)
	if err != nil {
		t.Fatalf("storetest: ids of %s: %v", table, err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		t.Fatalf("storetest: ids of %s: %v", table, err)
	}
	return out
}

// Packages returns every package, oldest first.
func Packages(t testing.TB, db *store.DB) []hoard.Package {
	t.Helper()
	ps, err := db.FindPackagesByID(context.Background(), ids(t, db, "packages"))
	if err != nil {
		t.Fatalf("storetest.Packages: %v", err)
	}
	return ps
}

// Notifications returns every system notification, dismissed ones too,
// oldest first.
func Notifications(t testing.TB, db *store.DB) []hoard.Notification {
	t.Helper()
	return each(t, db, "system_notifications", db.FindNotification)
}

// SendRequestOpts describes a bot delivery request for SendRequest.
// Defaults: a new user, a new package, platform user 4242.
type SendRequestOpts struct {
	UserID, PackageID, PlatformUserID int64
}

// SendRequest stores a PENDING bot delivery request as it is, whether or
// not its package is published (store.CreateBotSendRequests queues only
// published ones): a request whose package was unpublished since.
func SendRequest(t testing.TB, db *store.DB, o SendRequestOpts) int64 {
	t.Helper()
	if o.UserID == 0 {
		o.UserID = User(t, db, UserOpts{}).ID
	}
	if o.PackageID == 0 {
		o.PackageID = Package(t, db, PackageOpts{}).ID
	}
	if o.PlatformUserID == 0 {
		o.PlatformUserID = 4242
	}
	var id int64
	if err := q(db).QueryRow(context.Background(), `INSERT INTO bot_send_requests (user_id, package_id, platform_user_id)
		VALUES ($1, $2, $3) RETURNING id`, o.UserID, o.PackageID, o.PlatformUserID).Scan(&id); err != nil {
		t.Fatalf("storetest.SendRequest: %v", err)
	}
	return id
}
