package web

import (
	"context"
	"encoding/json"
	"mime"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/queue"
	"github.com/hoard/hoard/store"
)

// errNotLinked is what queueing a send for a user without a messenger link
// answers.
var errNotLinked = hoard.Errorf(hoard.ECONFLICT, "Link a messenger account in Settings first.")

// queueSends queues deliveries of packages (in order; with a title, as one
// batch after a header naming it) to target's linked account: the request
// rows, their bot_send jobs and the bot_send notification commit in one
// transaction. Packages not published, or already on their way, are left
// out: the result may be empty. A target without a link is errNotLinked.
func (s *Server) queueSends(ctx context.Context, target *hoard.User, requestedBy int64, packageIDs []int64, title string) ([]hoard.BotSendRequest, error) {
	link, err := s.deps.DB.FindMessengerLink(ctx, target.ID)
	if hoard.ErrorCode(err) == hoard.ENOTFOUND {
		return nil, errNotLinked
	} else if err != nil {
		return nil, err
	}
	return s.deps.DB.QueueBotSends(ctx, store.SendOrder{UserID: target.ID, RequestedBy: requestedBy,
		PlatformUserID: link.PlatformUserID, PackageIDs: packageIDs, Title: title}, queue.InsertBotSends(ctx, s.deps.Queue))
}

// sendRedirect ends a page's send action: back to the page with the number
// queued (sentNotice says it), or to Settings when the user has no link.
func sendRedirect(w http.ResponseWriter, r *http.Request, back string, reqs []hoard.BotSendRequest, err error) error {
	if err == errNotLinked {
		return redirect(w, r, "/settings?done=link-first")
	} else if err != nil {
		return err
	}
	u, perr := url.Parse(back)
	if perr != nil {
		u = &url.URL{Path: "/"}
	}
	q := u.Query()
	q.Del("done")
	q.Set("sent", strconv.Itoa(len(reqs)))
	u.RawQuery = q.Encode()
	return redirect(w, r, u.String())
}

// sendRequest is the body of POST /api/messenger/bot/send.
type sendRequest struct {
	PackageID  int64   `json:"package_id" validate:"omitempty,gt=0"`
	PackageIDs []int64 `json:"package_ids" validate:"omitempty,max=500,dive,gt=0"`
	GroupID    int64   `json:"group_id" validate:"omitempty,gt=0"`
	UserID     int64   `json:"user_id" validate:"omitempty,gt=0"` // administrators may send to another user
}

type sendJSON struct {
	ID         int64  `json:"id"`
	PackageID  int64  `json:"package_id"`
	Status     string `json:"status"`
	PartsSent  int    `json:"parts_sent"`
	PartsTotal int    `json:"parts_total"`
	Error      string `json:"error,omitempty"`
	CreatedAt  string `json:"created_at"`
	SentAt     string `json:"sent_at,omitempty"`
	User       string `json:"user,omitempty"`
	Package    string `json:"package,omitempty"`
}

func toSendJSON(r hoard.BotSendRequest) sendJSON {
	out := sendJSON{ID: r.ID, PackageID: r.PackageID, Status: string(r.Status), Error: r.ErrorMessage,
		PartsSent: r.PartsSent, PartsTotal: r.PartsTotal,
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
	title := ""
	if req.GroupID != 0 {
		g, err := s.deps.DB.FindGroupByID(r.Context(), req.GroupID)
		if err != nil {
			return notFoundAs(err, "No such group.")
		}
		members, err := s.deps.DB.ListGroupDeliveryOrder(r.Context(), g.ID)
		if err != nil {
			return err
		}
		ids, title = append(ids, members...), groupTitle(g)
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
	reqs, err := s.queueSends(r.Context(), target, me.ID, ids, title)
	if err != nil {
		return err
	}
	if len(reqs) == 0 {
		return errNothingToSend
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
// Bot Sends tab (GET /api/messenger/bot/sends), and the bot's status.
func (s *Server) handleBotSendHistory(w http.ResponseWriter, r *http.Request) error {
	reqs, err := s.deps.DB.ListBotSendRequests(r.Context(), 0, 50)
	if err != nil {
		return err
	}
	out := make([]sendJSON, len(reqs))
	for i, q := range reqs {
		out[i] = toSendJSON(q)
	}
	var bot *botStatusJSON
	if st, err := s.deps.DB.FindBotStatus(r.Context()); err == nil {
		bot = toBotStatusJSON(st)
	} else if hoard.ErrorCode(err) != hoard.ENOTFOUND {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": out, "bot": bot})
	return nil
}

// botStatusJSON is the bot's status as the admin page polls it.
type botStatusJSON struct {
	Username     string `json:"username"`
	SignedIn     bool   `json:"signed_in"`
	Holder       string `json:"holder"`
	LastUpdateAt string `json:"last_update_at,omitempty"`
	QueueLength  int    `json:"queue_length"`
	CanReadDest  *bool  `json:"can_read_destination"`
	SetupHint    string `json:"setup_hint,omitempty"`
	Error        string `json:"error,omitempty"`
	UpdatedAt    string `json:"updated_at"`
}

func toBotStatusJSON(st *hoard.BotStatus) *botStatusJSON {
	out := &botStatusJSON{Username: st.Username, SignedIn: st.SignedIn, Holder: st.Holder, QueueLength: st.QueueLength,
		CanReadDest: st.CanReadDest, SetupHint: st.SetupHint, Error: st.ErrorMessage, UpdatedAt: st.UpdatedAt.UTC().Format(time.RFC3339)}
	if st.LastUpdateAt != nil {
		out.LastUpdateAt = st.LastUpdateAt.UTC().Format(time.RFC3339)
	}
	return out
}

// errNothingToSend answers an API send that queued nothing.
var errNothingToSend = hoard.Errorf(hoard.ECONFLICT, "Nothing to send: the packages are not published yet, or already on their way.")

// groupTitle is the header of a group's delivery.
func groupTitle(g *hoard.PackageGroup) string { return "🗂 " + g.Name }

// handleSendToMe queues the selected packages for the caller (the catalog's
// bulk "send to me" and the package page's button).
func (s *Server) handleSendToMe(w http.ResponseWriter, r *http.Request) error {
	ids, err := paramsOf[sendToMeParams](r).selected()
	if err != nil {
		return err
	}
	reqs, err := s.queueSends(r.Context(), userFrom(r.Context()), userFrom(r.Context()).ID, ids, "")
	return sendRedirect(w, r, backTo(r, ids), reqs, err)
}

// handleMySends answers GET /api/messenger/bot/my-sends: the caller's
// newest deliveries with status and progress, for the live table on
// Settings.
func (s *Server) handleMySends(w http.ResponseWriter, r *http.Request) error {
	reqs, err := s.deps.DB.ListBotSendRequests(r.Context(), userFrom(r.Context()).ID, 20)
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
