package web

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/hoard/hoard"
)

// notificationJSON is a notification as the bell shows it.
type notificationJSON struct {
	ID         int64           `json:"id"`
	Type       string          `json:"type"`
	Severity   string          `json:"severity"`
	Title      string          `json:"title"`
	Message    string          `json:"message"`
	Context    json.RawMessage `json:"context"`
	PackageID  int64           `json:"package_id,omitempty"`
	ChannelID  int64           `json:"channel_id,omitempty"`
	IsRead     bool            `json:"is_read"`
	Repairable bool            `json:"repairable"`
	CreatedAt  string          `json:"created_at"`
	// Links open what the notification is about beyond its package: the
	// two groups of a grouping conflict.
	Links []noteLink `json:"links,omitempty"`
}

// noteLink is a link of a notification: a local path and its words.
type noteLink struct {
	Href  string `json:"href"`
	Label string `json:"label"`
}

// conflictLinks are the links to the groups of a GROUPING_CONFLICT, from
// its context (group_a, group_b and, since issue #16, their names).
func conflictLinks(n hoard.Notification) []noteLink {
	if n.Type != hoard.NotifyGroupingConflict {
		return nil
	}
	var c struct {
		A     int64  `json:"group_a"`
		B     int64  `json:"group_b"`
		NameA string `json:"name_a"`
		NameB string `json:"name_b"`
	}
	if json.Unmarshal(n.Context, &c) != nil {
		return nil
	}
	var out []noteLink
	for _, g := range []struct {
		id   int64
		name string
	}{{c.A, c.NameA}, {c.B, c.NameB}} {
		if g.id <= 0 {
			continue
		}
		label := "Open group " + strconv.FormatInt(g.id, 10)
		if g.name != "" {
			label = "Open “" + hoard.DisplayText(g.name) + "”"
		}
		out = append(out, noteLink{Href: groupURL(g.id, ""), Label: label})
	}
	return out
}

// uploadLinks is the link to the upload of an UPLOAD_FAILED notification
// about a manual upload (context upload_id), where its retry button is.
func uploadLinks(n hoard.Notification) []noteLink {
	if n.Type != hoard.NotifyUploadFailed {
		return nil
	}
	var c struct {
		UploadID int64 `json:"upload_id"`
	}
	if json.Unmarshal(n.Context, &c) != nil || c.UploadID <= 0 {
		return nil
	}
	return []noteLink{{Href: "/uploads/" + strconv.FormatInt(c.UploadID, 10), Label: "Open upload"}}
}

func toNotificationJSON(n hoard.Notification) notificationJSON {
	// Titles and messages quote platform text; the bell shows them as
	// they come.
	return notificationJSON{ID: n.ID, Type: string(n.Type), Severity: string(n.Severity), Title: hoard.DisplayText(n.Title),
		Message: hoard.DisplayText(n.Message),
		Context: n.Context, PackageID: n.PackageID, ChannelID: n.ChannelID, IsRead: n.IsRead,
		Repairable: n.Type.Repairable() && n.PackageID != 0, CreatedAt: n.CreatedAt.UTC().Format("2006-01-02T15:04:05Z"),
		Links: append(conflictLinks(n), uploadLinks(n)...)}
}

// notificationsPageSize is how many notifications one page lists.
const notificationsPageSize = 30

// notificationsParams page the notifications: those older than before.
type notificationsParams struct {
	Before int64 `form:"before" validate:"gte=0"`
}

// listNotifications reads a page of live notifications and the unread count.
func (s *Server) listNotifications(r *http.Request) ([]hoard.Notification, int64, int64, error) {
	items, err := s.deps.DB.ListNotifications(r.Context(), paramsOf[notificationsParams](r).Before, notificationsPageSize+1)
	if err != nil {
		return nil, 0, 0, err
	}
	var next int64
	if len(items) > notificationsPageSize {
		items = items[:notificationsPageSize]
		next = items[len(items)-1].ID
	}
	unread, err := s.deps.DB.CountUnreadNotifications(r.Context())
	return items, unread, next, err
}

// handleAPINotifications answers GET /api/notifications:
// {"items":[…],"unread":N,"next":<before id>|null}. The bell polls it.
func (s *Server) handleAPINotifications(w http.ResponseWriter, r *http.Request) error {
	items, unread, next, err := s.listNotifications(r)
	if err != nil {
		return err
	}
	out := make([]notificationJSON, len(items))
	for i, n := range items {
		out[i] = toNotificationJSON(n)
	}
	var nextP *int64
	if next != 0 {
		nextP = &next
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": out, "unread": unread, "next": nextP})
	return nil
}

type notificationsPage struct {
	Items []notificationJSON
	Next  int64
}

// handleNotifications renders the notifications page (the bell's list
// without JavaScript).
func (s *Server) handleNotifications(w http.ResponseWriter, r *http.Request) error {
	items, _, next, err := s.listNotifications(r)
	if err != nil {
		return err
	}
	out := make([]notificationJSON, len(items))
	for i, n := range items {
		out[i] = toNotificationJSON(n)
	}
	return s.render(w, r, http.StatusOK, "notifications", page{Title: "Notifications", Notice: noticeFor(r.URL.Query().Get("done")),
		Data: notificationsPage{Items: out, Next: next}})
}

// notificationAction answers a notification action: JSON for API callers,
// back to the notifications page for the page's forms (from=page).
func notificationAction(w http.ResponseWriter, r *http.Request, result map[string]any) error {
	if r.PostFormValue("from") == "page" {
		return redirect(w, r, "/notifications")
	}
	writeJSON(w, http.StatusOK, result)
	return nil
}

func (s *Server) handleReadNotification(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	if err := s.deps.DB.MarkNotificationRead(r.Context(), id); err != nil {
		return notFoundAs(err, "No such notification.")
	}
	return notificationAction(w, r, map[string]any{"id": id, "is_read": true})
}

func (s *Server) handleReadAllNotifications(w http.ResponseWriter, r *http.Request) error {
	n, err := s.deps.DB.MarkAllNotificationsRead(r.Context())
	if err != nil {
		return err
	}
	return notificationAction(w, r, map[string]any{"updated": n})
}

func (s *Server) handleDismissNotification(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	if err := s.deps.DB.DismissNotification(r.Context(), id); err != nil {
		return notFoundAs(err, "No such notification.")
	}
	return notificationAction(w, r, map[string]any{"id": id, "dismissed": true})
}

func (s *Server) handleClearNotifications(w http.ResponseWriter, r *http.Request) error {
	n, err := s.deps.DB.DismissAllNotifications(r.Context())
	if err != nil {
		return err
	}
	return notificationAction(w, r, map[string]any{"dismissed": n})
}
