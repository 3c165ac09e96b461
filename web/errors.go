package web

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
)

// handlerFunc is a handler that reports failure by returning an error.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

var errNotFound = hoard.Errorf(hoard.ENOTFOUND, "Page not found.")

// statusOf maps root error codes, codeTimeout, codeProviderDown and codeNoSpace to HTTP
// status codes.
var statusOf = map[string]int{
	hoard.EINVALID:      http.StatusUnprocessableEntity,
	hoard.ENOTFOUND:     http.StatusNotFound,
	hoard.ECONFLICT:     http.StatusConflict,
	hoard.EUNAUTHORIZED: http.StatusUnauthorized,
	hoard.EFORBIDDEN:    http.StatusForbidden,
	hoard.ETOOLARGE:     http.StatusRequestEntityTooLarge,
	hoard.ERATELIMITED:  http.StatusTooManyRequests,
	hoard.EINTERNAL:     http.StatusInternalServerError,
	hoard.EUNAVAILABLE:  http.StatusServiceUnavailable,
	codeTimeout:         http.StatusServiceUnavailable,
	codeProviderDown:    http.StatusBadGateway,
	codeNoSpace:         http.StatusInsufficientStorage,
}

// notFoundAs returns err, with the user-facing message for a missing thing
// when err is a not-found error (the store's own messages name tables).
func notFoundAs(err error, message string) error {
	if hoard.ErrorCode(err) == hoard.ENOTFOUND {
		return hoard.Errorf(hoard.ENOTFOUND, "%s", message)
	}
	return err
}

// codeTimeout is the error code of a request whose statement ran past the
// statement timeout (store.IsStatementTimeout): the database is busy or the
// request too broad, nothing the server failed at.
const codeTimeout = "timeout"

// describe maps an error to its status, code and message: by its root
// error code (statusOf), except that a statement timeout, whatever wraps
// it, is 503 with codeTimeout.
func describe(err error) (status int, code, message string) {
	if store.IsStatementTimeout(err) {
		err = hoard.WrapError(codeTimeout, err, "The database took too long to answer this request. Try again in a moment, or narrow it down.")
	}
	status, ok := statusOf[hoard.ErrorCode(err)]
	if !ok {
		status = http.StatusInternalServerError
	}
	return status, hoard.ErrorCode(err), hoard.ErrorMessage(err)
}

// statusFor returns the HTTP status of an error (describe).
func statusFor(err error) int {
	status, _, _ := describe(err)
	return status
}

// handle adapts a handlerFunc: an error becomes a JSON error for API
// requests and an HTML status page otherwise. Internal errors are logged
// with their cause; users see only the safe message.
func (s *Server) handle(h handlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		err := h(w, r)
		if err == nil {
			return
		}
		status, code, msg := describe(err)
		switch {
		case status == http.StatusServiceUnavailable:
			w.Header().Set("Retry-After", "5")
			s.deps.Logger.Warn("request timed out", "method", r.Method, "path", r.URL.Path, "err", err)
		case status >= 500:
			s.deps.Logger.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
		}
		if refillable(r, status) && s.showFormAgain(w, r, status, err) {
			return
		}
		if wantsJSON(r) {
			writeJSON(w, status, map[string]any{"error": map[string]string{"code": code, "message": msg}})
			return
		}
		data := map[string]any{"Status": status, "StatusText": http.StatusText(status), "Message": msg}
		var offer *offerError
		if errors.As(err, &offer) {
			data["Action"], data["ActionLabel"] = offer.href, offer.label
		}
		if rerr := s.render(w, r, status, "error", page{Title: http.StatusText(status), Data: data}); rerr != nil {
			s.deps.Logger.Error("render error page", "err", rerr)
			http.Error(w, msg, status)
		}
	}
}

// wantsJSON tells API requests from page requests.
// An /api/ route posted by a page's own form (?from=page) answers with pages.
func wantsJSON(r *http.Request) bool {
	if r.URL.Query().Get("from") == "page" {
		return false
	}
	return strings.HasPrefix(r.URL.Path, "/api/") || strings.Contains(r.Header.Get("Accept"), "application/json")
}

// writeJSON writes v as a JSON response.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// offerError is an error whose page offers what to do about it: a link
// (href, a path of hoard's) labelled label.
type offerError struct {
	error
	href, label string
}

func (e *offerError) Unwrap() error { return e.error }
