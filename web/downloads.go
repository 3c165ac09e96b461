package web

import (
	"context"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/download"
)

// downloadParams are the parameters of GET /packages/{id}/download: part
// 0 (or none) is the package whole, N its N-th volume.
type downloadParams struct {
	Part int `form:"part" validate:"min=0,max=100000"`
}

// errNoDownloads answers downloads on a server without a download service.
var errNoDownloads = hoard.Errorf(hoard.EUNAVAILABLE, "Downloads are not set up on this server.")

// handleDownloadPackage streams a package (or one of its volumes) from the
// destination channel: Content-Length, a safe Content-Disposition, an
// ETag, and single Range requests answered 206 so that browsers and
// download managers resume.
func (s *Server) handleDownloadPackage(w http.ResponseWriter, r *http.Request) error {
	in := paramsOf[downloadParams](r)
	pkg, err := s.findPackage(r)
	if err != nil {
		return err
	}
	kind := "package"
	if in.Part > 0 {
		kind = "part"
	}
	return s.serveDownload(w, r, kind, func(ctx context.Context) (*download.Content, error) {
		return s.deps.Downloads.Open(ctx, pkg, in.Part)
	})
}

// serveDownload opens a content within the user's download limit and
// serves it; a download that cannot start says why.
func (s *Server) serveDownload(w http.ResponseWriter, r *http.Request, kind string, open func(context.Context) (*download.Content, error)) error {
	if s.deps.Downloads == nil {
		s.deps.Metrics.Download(kind, "refused")
		return errNoDownloads
	}
	end, err := s.deps.Downloads.Begin(userFrom(r.Context()).ID)
	if err != nil {
		s.deps.Metrics.Download(kind, "refused")
		return err
	}
	defer end()
	c, err := open(r.Context())
	if err != nil {
		s.deps.Metrics.Download(kind, "refused")
		return err
	}
	s.deps.Metrics.Download(kind, "served")
	h := w.Header()
	h.Set("Content-Type", "application/octet-stream")
	h.Set("Content-Disposition", contentDisposition(c.Name))
	h.Set("ETag", c.ETag)
	h.Set("Cache-Control", "private, no-cache")
	h.Set("X-Content-Type-Options", "nosniff")
	body := c.ReadSeeker(r.Context())
	defer body.Close()
	http.ServeContent(w, r, "", c.Modified, body)
	return nil
}

// contentDisposition is an attachment header for a file name (RFC 6266):
// an ASCII fallback in filename, the name itself in filename* (RFC 5987,
// UTF-8, percent-encoded). Path separators, quotes and control characters
// never pass.
func contentDisposition(name string) string {
	name = safeFileName(name)
	var ascii, ext strings.Builder
	for _, r := range name {
		if r < 0x80 && r != '"' && r != '\\' && r != '%' {
			ascii.WriteRune(r)
		} else {
			ascii.WriteByte('_')
		}
	}
	for _, b := range []byte(name) {
		if isAttrChar(b) {
			ext.WriteByte(b)
		} else {
			ext.WriteString("%" + strings.ToUpper(string("0123456789abcdef"[b>>4])+string("0123456789abcdef"[b&15])))
		}
	}
	return `attachment; filename="` + ascii.String() + `"; filename*=UTF-8''` + ext.String()
}

// isAttrChar reports the bytes RFC 5987's attr-char allows unencoded.
func isAttrChar(b byte) bool {
	switch {
	case b >= 'a' && b <= 'z', b >= 'A' && b <= 'Z', b >= '0' && b <= '9':
		return true
	}
	return strings.IndexByte("!#$&+-.^_`|~", b) >= 0
}

// safeFileName is a file name fit for a header or a folder: valid UTF-8,
// no path separators or control characters, not empty nor a dot name, at
// most 255 bytes.
func safeFileName(name string) string {
	name = strings.ToValidUTF8(name, "_")
	name = strings.Map(func(r rune) rune {
		switch {
		case r == '/' || r == '\\' || r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			return '_'
		case r == 0x2028 || r == 0x2029 || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069):
			return '_'
		}
		return r
	}, name)
	name = strings.TrimSpace(name)
	for len(name) > 255 {
		_, size := utf8.DecodeLastRuneInString(name)
		name = name[:len(name)-size]
	}
	if name == "" || strings.Trim(name, ".") == "" {
		return "download"
	}
	return name
}
