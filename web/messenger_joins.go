package web

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/store"
)

// joinJSON is a request to add a source channel, with its outcome.
type joinJSON struct {
	ID           int64   `json:"id"`
	Ref          string  `json:"ref"`
	AccountID    int64   `json:"account_id,omitempty"`
	Category     string  `json:"category,omitempty"`
	Status       string  `json:"status"`
	ChannelID    int64   `json:"channel_id,omitempty"`
	Title        string  `json:"title,omitempty"`
	ErrorMessage string  `json:"error_message,omitempty"`
	CreatedAt    string  `json:"created_at"`
	FinishedAt   *string `json:"finished_at"`
}

func toJoinJSON(j *hoard.ChannelJoin) joinJSON {
	out := joinJSON{ID: j.ID, Ref: j.Ref, AccountID: j.AccountID, Category: j.Category, Status: string(j.Status),
		ChannelID: j.ChannelID, Title: j.Title, ErrorMessage: j.ErrorMessage, CreatedAt: j.CreatedAt.UTC().Format(time.RFC3339)}
	if j.FinishedAt != nil {
		v := j.FinishedAt.UTC().Format(time.RFC3339)
		out.FinishedAt = &v
	}
	return out
}

// joinParams are the parameters of POST /admin/messenger/joins.
type joinParams struct {
	Ref       string `form:"ref"`
	Category  string `form:"category" validate:"max=64"`
	AccountID int64  `form:"account_id" validate:"gte=0"`
}

// handleJoinChannel adds a source channel by platform link, @username or
// invite link: the reference is validated and normalised here, and the
// request row and its join_channel job are inserted in one transaction;
// the worker joins with the chosen account (`account_id`, default the
// oldest signed-in one) and records the outcome on the row. `category`
// becomes the channel's category. Asking again while a request for the same
// channel is pending returns that request.
func (s *Server) handleJoinChannel(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	in := paramsOf[joinParams](r)
	ref, err := messenger.ParseChannelRef(in.Ref)
	if err != nil {
		return aboutField("ref", err)
	}
	category, accountID := in.Category, in.AccountID
	j := &hoard.ChannelJoin{Ref: ref.String(), Category: category}
	if u := userFrom(ctx); u != nil {
		j.RequestedBy = u.ID
	}
	created := false
	err = s.deps.DB.InTx(ctx, func(tx *store.DB) error {
		acc, err := s.joiningAccount(r, tx, accountID)
		if err != nil {
			return err
		}
		j.AccountID = acc.ID
		if err := alreadyAdded(ctx, tx, ref, j); err != nil {
			return err
		}
		if created, err = tx.CreateChannelJoin(ctx, j); err != nil || !created {
			return err
		}
		res, err := s.deps.Queue.InsertTx(ctx, tx.Tx(), hoard.JoinChannelArgs{JoinID: j.ID}, nil)
		if err != nil {
			return fmt.Errorf("queue join channel: %w", err)
		}
		j.RiverJobID = res.Job.ID
		return tx.SetChannelJoinJob(ctx, j.ID, res.Job.ID)
	})
	if err != nil {
		return err
	}
	if created {
		s.deps.Logger.Info("channel join requested", "join", j.ID, "account", j.AccountID)
	}
	if wantsJSON(r) {
		status := http.StatusAccepted
		if !created {
			status = http.StatusOK
		}
		writeJSON(w, status, map[string]any{"join": toJoinJSON(j), "created": created})
		return nil
	}
	return redirect(w, r, "/admin/messenger?done=join#joins")
}

// joiningAccount returns the account that joins: the chosen one, which must
// be signed in, or the oldest signed-in active account.
func (s *Server) joiningAccount(r *http.Request, tx *store.DB, id int64) (*hoard.Account, error) {
	if id != 0 {
		acc, err := tx.FindAccountByID(r.Context(), id)
		if hoard.ErrorCode(err) == hoard.ENOTFOUND {
			return nil, hoard.Errorf(hoard.EINVALID, "No such account.")
		} else if err != nil {
			return nil, err
		}
		if acc.AuthState != hoard.AuthAuthenticated {
			return nil, hoard.Errorf(hoard.EINVALID, "The account %s is not signed in.", acc.Phone)
		}
		return acc, nil
	}
	accounts, err := tx.ListAccounts(r.Context())
	if err != nil {
		return nil, err
	}
	for i := range accounts {
		if accounts[i].AuthState == hoard.AuthAuthenticated && accounts[i].IsActive {
			return &accounts[i], nil
		}
	}
	return nil, hoard.Errorf(hoard.EINVALID, "No messenger account is signed in: add an account and log in first.")
}

// handleAPIJoins answers GET /api/messenger/joins with the latest requests
// to add a channel: {"items":[…],"pending":bool}; the admin page polls while
// one is pending.
func (s *Server) handleAPIJoins(w http.ResponseWriter, r *http.Request) error {
	joins, err := s.deps.DB.ListChannelJoins(r.Context(), 20)
	if err != nil {
		return err
	}
	items := make([]joinJSON, len(joins))
	pending := false
	for i := range joins {
		items[i] = toJoinJSON(&joins[i])
		pending = pending || !joins[i].Status.Final()
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": items, "pending": pending})
	return nil
}

// categoryWords tells a channel's category in a sentence: " (category X)",
// or " (no category)".
func categoryWords(category string) string {
	if category == "" {
		return " (no category)"
	}
	return " (category " + hoard.DisplayText(category) + ")"
}

// alreadyAdded refuses to add a channel hoard has already (by its
// @username or invite link) when that would do nothing or change it behind
// the user's back: the account of the join reads it already, or the join
// names another category than the channel's (categories change in the
// channel's settings, which re-tag its packages). The error is about the
// "ref" field and links to those settings. Another account joining a
// known channel with no or the same category goes on.
func alreadyAdded(ctx context.Context, tx *store.DB, ref messenger.ChannelRef, j *hoard.ChannelJoin) error {
	ch, err := tx.FindChannelByRef(ctx, ref.Username, ref.String())
	if hoard.ErrorCode(err) == hoard.ENOTFOUND {
		return nil
	}
	if err != nil {
		return err
	}
	maps, err := tx.ListChannelMaps(ctx, ch.ID)
	if err != nil {
		return err
	}
	read := slices.ContainsFunc(maps, func(m hoard.ChannelMap) bool { return m.AccountID == j.AccountID })
	if !read && (j.Category == "" || j.Category == ch.Category) {
		return nil
	}
	msg := fmt.Sprintf("%s is already added as “%s”%s", ref, hoard.DisplayText(ch.Title), categoryWords(ch.Category))
	if !read {
		msg += ": change its category in its settings"
	}
	return &fieldError{field: "ref", err: hoard.Errorf(hoard.ECONFLICT, "%s.", msg),
		link: &noteLink{Href: "/admin/messenger/channels/" + strconv.FormatInt(ch.ID, 10), Label: "Open its settings"}}
}
