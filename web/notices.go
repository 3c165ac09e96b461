package web

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
)

// countedNotices word the confirmations that say how many packages a form
// changed: the "done" code of the redirect, with the count in "n".
var countedNotices = map[string]string{
	"tags-added":    "Tags added to %s.",
	"tags-removed":  "Tags removed from %s.",
	"tags-set":      "Tags set on %s.",
	"creator-set":   "Creator set on %s.",
	"group-created": "Group created from %s.",
	"linked":        "Linked %s.",
}

// noticeOf returns the confirmation a page shows after a form succeeded:
// the "done" code its redirect carried (countedNotices with their "n",
// then noticeFor's), or a delivery confirmation ("sent").
func noticeOf(r *http.Request) string {
	q := r.URL.Query()
	done := q.Get("done")
	if format, ok := countedNotices[done]; ok {
		if n, err := strconv.Atoi(q.Get("n")); err == nil && n > 0 && n <= maxParamValues {
			return fmt.Sprintf(format, packagesCount(n))
		}
	}
	if n := noticeFor(done); n != "" {
		return n
	}
	return sentNotice(r)
}

// packagesCount says "1 package" or "n packages".
func packagesCount(n int) string {
	if n == 1 {
		return "1 package"
	}
	return strconv.Itoa(n) + " packages"
}

// withNotice returns the local page path with the confirmation done (and
// its count n, when positive) in its query, replacing any earlier one.
func withNotice(path, done string, n int) string {
	u, err := url.Parse(localPath(path))
	if err != nil {
		return "/"
	}
	q := u.Query()
	q.Del("sent")
	q.Set("done", done)
	if n > 0 {
		q.Set("n", strconv.Itoa(n))
	} else {
		q.Del("n")
	}
	u.RawQuery = q.Encode()
	return u.RequestURI()
}

// withoutNotice returns u's path and query without a confirmation, for
// the forms of its page to return to.
func withoutNotice(u *url.URL) string {
	return withParams(u, map[string]string{"done": "", "n": "", "sent": ""})
}
