package web

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
)

// NewInviteCode returns a random invite code: 12 bytes, hex.
func NewInviteCode() (string, error) {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// InviteOptions describe invite codes to create.
type InviteOptions struct {
	Count     int
	MaxUses   int
	ExpiresIn time.Duration // 0 = never
	Role      hoard.Role
	Note      string
	CreatedBy int64
}

// CreateInvites creates opt.Count invite codes in one transaction.
func CreateInvites(ctx context.Context, db *store.DB, opt InviteOptions) ([]hoard.InviteCode, error) {
	if opt.Count < 1 || opt.Count > 50 {
		return nil, invalidField("count", "Create between 1 and 50 codes at a time.")
	}
	if opt.MaxUses < 1 || opt.MaxUses > 1000 {
		return nil, invalidField("max_uses", "Uses per code must be between 1 and 1000.")
	}
	if opt.ExpiresIn < 0 {
		return nil, invalidField("expires_days", "The expiry must not be in the past.")
	}
	var out []hoard.InviteCode
	err := db.InTx(ctx, func(tx *store.DB) error {
		for range opt.Count {
			code, err := NewInviteCode()
			if err != nil {
				return err
			}
			inv := hoard.InviteCode{Code: code, MaxUses: opt.MaxUses, Role: opt.Role, Note: opt.Note, CreatedBy: opt.CreatedBy}
			if opt.ExpiresIn > 0 {
				t := time.Now().Add(opt.ExpiresIn)
				inv.ExpiresAt = &t
			}
			if err := tx.CreateInvite(ctx, &inv); err != nil {
				return err
			}
			out = append(out, inv)
		}
		return nil
	})
	return out, err
}

// InviteLink is the registration link that pre-fills a code.
func InviteLink(appURL, code string) string {
	return strings.TrimRight(appURL, "/") + "/register?code=" + code
}

// firstAdminNote marks the invite that registers the first administrator.
const firstAdminNote = "first administrator"

// FirstAdminLink returns a one-time link that registers an administrator
// when the database has no users yet ("" otherwise). It reuses a usable
// link made earlier, so restarts do not multiply them.
func FirstAdminLink(ctx context.Context, db *store.DB, appURL string) (string, error) {
	n, err := db.CountUsers(ctx)
	if err != nil || n > 0 {
		return "", err
	}
	invites, err := db.ListInvites(ctx)
	if err != nil {
		return "", err
	}
	for _, inv := range invites {
		if inv.Role == hoard.RoleAdmin && inv.Note == firstAdminNote && inv.Usable(time.Now()) {
			return InviteLink(appURL, inv.Code), nil
		}
	}
	created, err := CreateInvites(ctx, db, InviteOptions{Count: 1, MaxUses: 1, ExpiresIn: 24 * time.Hour,
		Role: hoard.RoleAdmin, Note: firstAdminNote})
	if err != nil {
		return "", err
	}
	return InviteLink(appURL, created[0].Code), nil
}

// EnsureAdmin makes sure an administrator with this email exists: it creates
// one with the password, or promotes an existing user (whose password stays).
// Processes call it as they start (serve, demo).
func EnsureAdmin(ctx context.Context, db *store.DB, email, password string) (created bool, err error) {
	if err := checkEmail(email); err != nil {
		return false, err
	}
	user, err := db.FindUserByEmail(ctx, email)
	switch {
	case err == nil:
		if user.Role != hoard.RoleAdmin {
			return false, db.SetUserRole(ctx, user.ID, hoard.RoleAdmin)
		}
		return false, nil
	case hoard.ErrorCode(err) != hoard.ENOTFOUND:
		return false, err
	}
	if err := checkNewPassword(password); err != nil {
		return false, err
	}
	hash, err := hashPassword(ctx, password)
	if err != nil {
		return false, err
	}
	// The hash's argonMemory (19 MiB) is garbage now, in a process that is
	// starting and whose heap is small otherwise: collected at once, its
	// pages are reused by what the process does next, instead of the heap
	// growing to twice them before its next collection (a demo worker's
	// peak resident set).
	runtime.GC()
	if _, err := db.CreateUser(ctx, email, hash, hoard.RoleAdmin); err != nil {
		if hoard.ErrorCode(err) == hoard.ECONFLICT { // created concurrently
			return false, nil
		}
		return false, err
	}
	return true, nil
}

type invitesPage struct {
	Invites []inviteRow
	AppURL  string
}

// inviteRow is an invite code as the invites page shows it.
type inviteRow struct {
	hoard.InviteCode
	Active bool // can still register someone
}

func (s *Server) handleInvites(w http.ResponseWriter, r *http.Request) error {
	return s.renderInvites(w, r, http.StatusOK, "", noticeFor(r.URL.Query().Get("done")))
}

func noticeFor(done string) string {
	switch done {
	case "created":
		return "Invite codes created."
	case "deleted":
		return "Invite code deleted."
	case "saved":
		return "Saved."
	case "renamed":
		return "Group renamed."
	case "dissolved":
		return "Group dissolved: its packages stay in the catalog, ungrouped."
	case "triggered":
		return "Ingestion cycle queued: the worker starts it in a moment."
	case "cycle-pending":
		return "A cycle is already queued or running: it picks up the latest channels and settings."
	case "rescan":
		return "Rescan queued: the channel is scanned again from its first message in the next cycle."
	case "repair":
		return "Repair queued: the package is downloaded and published again in the next cycle."
	case "retry":
		return "Retry queued: the message gets a fresh set of attempts in the next cycle."
	case "topic-skipped":
		return "Topic disabled: the file in flight finishes, the rest of the topic is skipped, and later cycles leave it out."
	case "no-topic":
		return "That forum topic is not being processed right now; nothing was changed."
	case "upload-deleted":
		return "Upload deleted: its files were removed from the server; the packages it published stay in the catalog."
	case "upload-retry":
		return "Retry queued: the failed files are published again in a moment."
	case "rebuild":
		return "Rebuild from the destination channel started."
	case "join":
		return "Join queued: the worker joins the channel in a moment and then scans it; its outcome shows below."
	case "destination":
		return "Destination channel saved."
	case "account-added":
		return "Account added: the worker asks the platform for a login code; type it below when it arrives."
	case "login":
		return "Login started: the worker checks the session and asks for a new code if needed."
	case "login-code":
		return "Code submitted: the worker is checking it."
	case "login-password":
		return "Password submitted: the worker is checking it."
	case "extract":
		return "Extracting the image from the archive: the preview changes when it is done."
	case "account-removed":
		return "Account removed."
	case "merge-started":
		return "Merge started: open the group to merge it into (below) and choose “Merge here” there."
	case "merged":
		return "Groups merged: the packages of the other group are in this one now."
	case "rule-removed":
		return "Rule removed: later grouping runs no longer apply it; the packages it took in stay."
	case "rule-learned":
		return "Rule learned: matching packages join this group in a moment."
	}
	return ""
}

func (s *Server) renderInvites(w http.ResponseWriter, r *http.Request, status int, errMsg, notice string) error {
	invites, err := s.deps.DB.ListInvites(r.Context())
	if err != nil {
		return err
	}
	rows := make([]inviteRow, len(invites))
	for i, inv := range invites {
		rows[i] = inviteRow{InviteCode: inv, Active: inv.Usable(time.Now())}
	}
	return s.render(w, r, status, "invites", page{Title: "Invites", Error: errMsg, Notice: notice,
		Data: invitesPage{Invites: rows, AppURL: s.deps.AppURL}})
}

// invitesParams are the invites form: how many codes, uses per code, days
// until they expire (0: never); absent ones take their defaults (1, 1, 7).
type invitesParams struct {
	Count       *int `form:"count" validate:"omitempty,min=1,max=50"`
	MaxUses     *int `form:"max_uses" validate:"omitempty,min=1,max=1000"`
	ExpiresDays *int `form:"expires_days" validate:"omitempty,min=0,max=3650"`
}

// handleCreateInvites creates one or many codes from the invites form.
func (s *Server) handleCreateInvites(w http.ResponseWriter, r *http.Request) error {
	in := paramsOf[invitesParams](r)
	or := func(v *int, def int) int {
		if v == nil {
			return def
		}
		return *v
	}
	_, err := CreateInvites(r.Context(), s.deps.DB, InviteOptions{
		Count: or(in.Count, 1), MaxUses: or(in.MaxUses, 1),
		ExpiresIn: time.Duration(or(in.ExpiresDays, 7)) * 24 * time.Hour,
		Role:      hoard.RoleUser, CreatedBy: userFrom(r.Context()).ID,
	})
	if err != nil {
		return err // a bad number shows the form again beside its field
	}
	return redirect(w, r, "/admin/invites?done=created")
}

func (s *Server) handleDeleteInvite(w http.ResponseWriter, r *http.Request) error {
	id, err := strconv.ParseInt(chi.URLParam(r, "id"), 10, 64)
	if err != nil {
		return errNotFound
	}
	if err := s.deps.DB.DeleteInvite(r.Context(), id); err != nil {
		return notFoundAs(err, "That invite code does not exist.")
	}
	return redirect(w, r, "/admin/invites?done=deleted")
}
