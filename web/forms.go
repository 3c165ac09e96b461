package web

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/go-chi/chi/v5"
	"github.com/hoard/hoard"
)

// A form post that fails (bad input, a conflict) shows the page it came
// from again, with the message beside the field it is about and what the
// user typed kept: the adapter (handle) serves the form's page in place of
// an error page, answering with the error's status (422, 409, 413). The page
// is the form's "back" field when it has one, else the page the browser
// says the form was on (Referer, same site only), else the path posted to
// when it is a page too (the error page otherwise). The page's handler runs
// as for a GET of that page and renders it with the failed post's
// formState, which templates read through page.Form:
//
//	{{$f := $.Form.On "/packages/tags" "tags"}}
//	<input name="tags" value="{{$f.Value "tags" ""}}"> {{template "field-error" $f.Err "tags"}}
//	{{template "form-error" $f.Message}}
//
// On names the form by its action (the path it posts to) and lists the
// fields that show their error beside them; Message is the error when it
// is about none of those (say, "Select at least one package" about the
// checkboxes of a list). A message no template showed appears at the top of
// the page (formState.Unshown), so none is lost. Nothing is stored between
// requests: a reload asks to post the form again, as browsers do after any
// failed post.

// fieldError is an error about one field of a form: its root error (code
// and message) plus the field's name.
type fieldError struct {
	field string
	err   *hoard.Error
	// link, when set, is where the user can act on what the message says
	// (shown beside it: formView.Link).
	link *noteLink
}

func (e *fieldError) Error() string { return e.err.Error() }
func (e *fieldError) Unwrap() error { return e.err }

// invalidField returns an EINVALID error about the form field field.
func invalidField(field, format string, args ...any) error {
	return &fieldError{field: field, err: hoard.Errorf(hoard.EINVALID, format, args...)}
}

// aboutField returns err as an error about field, unless it is about one
// already (or nil).
func aboutField(field string, err error) error {
	var he *hoard.Error
	if err == nil || fieldOf(err) != "" || !errors.As(err, &he) {
		return err
	}
	return &fieldError{field: field, err: he}
}

// linkOf returns the link an error about a field carries, nil when none.
func linkOf(err error) *noteLink {
	var fe *fieldError
	if errors.As(err, &fe) {
		return fe.link
	}
	return nil
}

// fieldOf returns the field an error is about, "" when none.
func fieldOf(err error) string {
	var fe *fieldError
	if errors.As(err, &fe) {
		return fe.field
	}
	return ""
}

// formState is a failed form post, for the page that shows the form again.
// The zero value is no failure: every form shows its defaults.
type formState struct {
	Action  string     // the path the form posted to
	Values  url.Values // what it posted
	Field   string     // the field the error is about ("" for the form)
	Message string
	// Link is where to act on the message (a channel's settings, say), or
	// nil.
	Link *noteLink
	// shown is set once a template showed the message (formView.Err or
	// Message); the layout shows it at the top of the page otherwise.
	shown *bool
}

// Unshown returns the message when no template showed it beside its form,
// for the layout to show at the top of the page ("" otherwise).
func (f formState) Unshown() string {
	if f.Action == "" || f.shown != nil && *f.shown {
		return ""
	}
	return f.Message
}

// Posted returns the values posted for field, whichever form of the page
// failed ("" values dropped); nil when none did.
func (f formState) Posted(field string) []string {
	return formView{state: f}.List(field)
}

// claim returns the message, noting that a template shows it.
func (f formState) claim() string {
	if f.shown != nil {
		*f.shown = true
	}
	return f.Message
}

type formKey struct{}

// formFrom returns the failed post a page is rendered for, if any.
func formFrom(ctx context.Context) formState {
	f, _ := ctx.Value(formKey{}).(formState)
	return f
}

// On returns the view of one form of the page, named by its action; inline
// are the fields that show their errors beside them (see Message).
func (f formState) On(action string, inline ...string) formView {
	if f.Action == "" || f.Action != action {
		return formView{}
	}
	return formView{state: f, inline: inline}
}

// formView is one form's side of a formState (see formState.On).
type formView struct {
	state  formState
	inline []string
}

// Failed reports whether this form's post failed.
func (v formView) Failed() bool { return v.state.Action != "" }

// Err returns the error message about field, "" when there is none.
func (v formView) Err(field string) string {
	if v.Failed() && v.state.Field == field && field != "" {
		return v.state.claim()
	}
	return ""
}

// Link returns the link that goes with the error about field, nil when
// there is none.
func (v formView) Link(field string) *noteLink {
	if v.Failed() && v.state.Field == field && field != "" {
		return v.state.Link
	}
	return nil
}

// Message returns the error message when it is about the form as a whole
// or about a field not shown inline, and no template showed it yet; ""
// otherwise.
func (v formView) Message() string {
	if !v.Failed() || v.state.Field != "" && slices.Contains(v.inline, v.state.Field) || v.state.shown != nil && *v.state.shown {
		return ""
	}
	return v.state.claim()
}

// Value returns what was posted for field when the post failed, else def
// (the field's value on a fresh page), as text.
func (v formView) Value(field string, def any) string {
	if v.Failed() {
		return v.state.Values.Get(field)
	}
	switch d := def.(type) {
	case nil:
		return ""
	case []string:
		return strings.Join(d, ", ")
	}
	return fmt.Sprint(def)
}

// Checked reports whether value was among the posted values of field (a
// checkbox or option to show selected again); def when the post did not
// fail.
func (v formView) Checked(field, value string, def bool) bool {
	if v.Failed() {
		return slices.Contains(v.state.Values[field], value)
	}
	return def
}

// List returns the posted values of field ("" values dropped), nil when the
// post did not fail.
func (v formView) List(field string) []string {
	if !v.Failed() {
		return nil
	}
	return slices.DeleteFunc(slices.Clone(v.state.Values[field]), func(s string) bool { return s == "" })
}

// refillable reports whether a failed post of a form should show its page
// again rather than an error page: the user can correct what they sent.
func refillable(r *http.Request, status int) bool {
	if r.Method != http.MethodPost || wantsJSON(r) {
		return false
	}
	switch status {
	case http.StatusUnprocessableEntity, http.StatusConflict, http.StatusRequestEntityTooLarge:
		return true
	}
	return false
}

// formOrigin returns the local page a form was posted from: its "back"
// field, else its Referer when that is this site, else the path it posted
// to (a page whose form posts to itself, such as /admin/invites).
func formOrigin(r *http.Request) string {
	if b := r.PostFormValue("back"); b != "" {
		return localPath(b)
	}
	if ref, err := url.Parse(r.Referer()); err == nil && ref.Host == r.Host && (ref.Scheme == "http" || ref.Scheme == "https") {
		return localPath(ref.RequestURI())
	}
	return r.URL.Path
}

// showFormAgain answers a failed form post with the page the form was on,
// rendered with the post's values and error (formState), under the error's
// status. It reports false, having written nothing, when the page is not
// known or does not render (then the caller shows the error page).
func (s *Server) showFormAgain(w http.ResponseWriter, r *http.Request, status int, err error) bool {
	u, perr := url.Parse(formOrigin(r))
	if perr != nil {
		return false
	}
	state := formState{Action: r.URL.Path, Values: r.PostForm, Field: fieldOf(err), Message: hoard.ErrorMessage(err), Link: linkOf(err),
		shown: new(bool)}
	ctx := context.WithValue(r.Context(), formKey{}, state)
	// A fresh route for the page (chi reuses a route context it finds).
	ctx = context.WithValue(ctx, chi.RouteCtxKey, (*chi.Context)(nil))
	page := r.Clone(ctx)
	page.Method, page.URL, page.RequestURI = http.MethodGet, u, u.RequestURI()
	page.Body, page.ContentLength, page.Form, page.PostForm, page.MultipartForm = http.NoBody, 0, nil, nil, nil
	page.Header.Del("Content-Type")
	page.Header.Del("Content-Length")
	rec := &pageRecorder{header: http.Header{}}
	s.router.ServeHTTP(rec, page)
	if rec.status != http.StatusOK || !strings.HasPrefix(rec.header.Get("Content-Type"), "text/html") {
		return false
	}
	for k, v := range rec.header {
		w.Header()[k] = v
	}
	w.WriteHeader(status)
	if _, werr := w.Write(rec.body.Bytes()); werr != nil {
		s.deps.Logger.Debug("write page", "err", werr)
	}
	return true
}

// pageRecorder keeps a page's response to be sent under another status.
type pageRecorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (p *pageRecorder) Header() http.Header { return p.header }

func (p *pageRecorder) WriteHeader(status int) {
	if p.status == 0 {
		p.status = status
	}
}

func (p *pageRecorder) Write(b []byte) (int, error) {
	if p.status == 0 {
		p.status = http.StatusOK
	}
	return p.body.Write(b)
}
