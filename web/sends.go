package web

import (
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"reflect"
	"strings"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
	"github.com/riverqueue/river"
)

// queueSends queues deliveries of packages to target's linked account: the
// request rows, their bot_send jobs and the bot_send notification commit in
// one transaction.
func (s *Server) queueSends(ctx context.Context, target *hoard.User, requestedBy int64, packageIDs []int64) ([]hoard.BotSendRequest, error) {
	link, err := s.deps.DB.FindMessengerLink(ctx, target.ID)
	if hoard.ErrorCode(err) == hoard.ENOTFOUND {
		return nil, hoard.Errorf(hoard.ECONFLICT, "Link a messenger account in Settings first.")
	} else if err != nil {
		return nil, err
	}
	var reqs []hoard.BotSendRequest
	err = s.deps.DB.InTx(ctx, func(tx *store.DB) error {
		reqs, err = tx.CreateBotSendRequests(ctx, target.ID, requestedBy, link.PlatformUserID, packageIDs)
		if err != nil || len(reqs) == 0 {
			return err
		}
		params := make([]river.InsertManyParams, len(reqs))
		ids := make([]int64, len(reqs))
		for i, r := range reqs {
			params[i] = river.InsertManyParams{Args: hoard.BotSendArgs{RequestID: r.ID}}
			ids[i] = r.ID
		}
		if _, err := s.deps.Queue.InsertManyTx(ctx, tx.Tx(), params); err != nil {
			return fmt.Errorf("queue bot sends: %w", err)
		}
		payload, _ := json.Marshal(map[string]any{"request_ids": ids})
		return tx.Notify(ctx, "bot_send", string(payload))
	})
	if err != nil {
		return nil, err
	}
	if len(reqs) == 0 {
		return nil, hoard.Errorf(hoard.ECONFLICT, "Nothing to send: the packages are not published yet, or already on their way.")
	}
	return reqs, nil
}

// sendRequest is the body of POST /api/messenger/bot/send.
type sendRequest struct {
	PackageID  int64   `json:"package_id" validate:"omitempty,gt=0"`
	PackageIDs []int64 `json:"package_ids" validate:"omitempty,max=500,dive,gt=0"`
	GroupID    int64   `json:"group_id" validate:"omitempty,gt=0"`
	UserID     int64   `json:"user_id" validate:"omitempty,gt=0"` // administrators may send to another user
}

type sendJSON struct {
	ID        int64  `json:"id"`
	PackageID int64  `json:"package_id"`
	Status    string `json:"status"`
	Error     string `json:"error,omitempty"`
	CreatedAt string `json:"created_at"`
	SentAt    string `json:"sent_at,omitempty"`
	User      string `json:"user,omitempty"`
	Package   string `json:"package,omitempty"`
}

func toSendJSON(r hoard.BotSendRequest) sendJSON {
	out := sendJSON{ID: r.ID, PackageID: r.PackageID, Status: string(r.Status), Error: r.ErrorMessage,
		CreatedAt: r.CreatedAt.UTC().Format(time.RFC3339), User: r.UserEmail, Package: r.PackageName}
	if r.SentAt != nil {
		out.SentAt = r.SentAt.UTC().Format(time.RFC3339)
	}
	return out
}

// handleAPIBotSend answers POST /api/messenger/bot/send: queue delivery of a
// package, several packages or every package of a group to the caller's
// linked account (202 with the requests).
func (s *Server) handleAPIBotSend(w http.ResponseWriter, r *http.Request) error {
	var req sendRequest
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "application/json" {
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			return hoard.Errorf(hoard.EINVALID, "The request body is not valid JSON: %v", err)
		}
	} else {
		ids, err := paramsOf[idsParams](r).selected()
		if err != nil {
			return err
		}
		req.PackageIDs = ids
	}
	if err := validate.Struct(req); err != nil {
		return hoard.Errorf(hoard.EINVALID, "%s", validationMessage(err, reflect.TypeOf(req)))
	}
	ids := req.PackageIDs
	if req.PackageID != 0 {
		ids = append(ids, req.PackageID)
	}
	if req.GroupID != 0 {
		members, _, err := s.deps.DB.ListPackages(r.Context(), store.PackageFilter{GroupID: req.GroupID}, nil, 500)
		if err != nil {
			return err
		}
		for _, p := range members {
			ids = append(ids, p.ID)
		}
	}
	if len(ids) == 0 {
		return hoard.Errorf(hoard.EINVALID, "Name a package_id, package_ids or a group_id.")
	}
	me := userFrom(r.Context())
	target := me
	if req.UserID != 0 && req.UserID != me.ID {
		if !me.IsAdmin() {
			return hoard.Errorf(hoard.EFORBIDDEN, "Only administrators may send packages to another user.")
		}
		u, err := s.deps.DB.FindUserByID(r.Context(), req.UserID)
		if err != nil {
			return err
		}
		target = u
	}
	reqs, err := s.queueSends(r.Context(), target, me.ID, ids)
	if err != nil {
		return err
	}
	out := make([]sendJSON, len(reqs))
	for i, q := range reqs {
		out[i] = toSendJSON(q)
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"requests": out})
	return nil
}

// handleAPIBotSendStatus answers GET /api/messenger/bot/send/{id}: a
// request's status; other users' requests are not found.
func (s *Server) handleAPIBotSendStatus(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	req, err := s.deps.DB.FindBotSendRequest(r.Context(), id)
	me := userFrom(r.Context())
	if hoard.ErrorCode(err) == hoard.ENOTFOUND || (err == nil && req.UserID != me.ID && !me.IsAdmin()) {
		return hoard.Errorf(hoard.ENOTFOUND, "No such send request.")
	} else if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toSendJSON(*req))
	return nil
}

// handleBotSendHistory is getBotSendHistory: the newest deliveries, for the
// Bot Sends tab (GET /api/messenger/bot/sends).
func (s *Server) handleBotSendHistory(w http.ResponseWriter, r *http.Request) error {
	reqs, err := s.deps.DB.ListBotSendRequests(r.Context(), 0, 50)
	if err != nil {
		return err
	}
	out := make([]sendJSON, len(reqs))
	for i, q := range reqs {
		out[i] = toSendJSON(q)
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": out})
	return nil
}

// sendToMeParams are the parameters of POST /packages/send.
type sendToMeParams struct {
	idsParams
	backParams
}

// handleSendToMe queues the selected packages for the caller (the catalog's
// bulk "send to me" and the package page's button).
func (s *Server) handleSendToMe(w http.ResponseWriter, r *http.Request) error {
	ids, err := paramsOf[sendToMeParams](r).selected()
	if err != nil {
		return err
	}
	reqs, err := s.queueSends(r.Context(), userFrom(r.Context()), userFrom(r.Context()).ID, ids)
	if err != nil {
		return err
	}
	back := backTo(r, ids)
	sep := "?"
	if strings.Contains(back, "?") {
		sep = "&"
	}
	return redirect(w, r, fmt.Sprintf("%s%ssent=%d", strings.Replace(back, "?done=saved", "", 1), sep, len(reqs)))
}
