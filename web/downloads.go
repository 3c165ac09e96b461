package web

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/download"
	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/zipstream"
)

// downloadParams are the parameters of GET /packages/{id}/download: part
// 0 (or none) is the package whole, N its N-th volume.
type downloadParams struct {
	Part int `form:"part" validate:"min=0,max=100000"`
}

// errNoDownloads answers downloads on a server without a download service
// (one made without Deps.Downloads): there is nothing to download here.
var errNoDownloads = hoard.Errorf(hoard.ENOTFOUND, "Downloads are not set up on this server.")

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
		c, err := s.deps.Downloads.Open(ctx, pkg, in.Part)
		if hoard.ErrorCode(err) == hoard.ENOTFOUND && userFrom(ctx).IsAdmin() && pkg.SourceMessageID != 0 {
			// The package page holds Repair, open when it has a problem.
			err = &offerError{error: err, href: "/packages/" + strconv.FormatInt(pkg.ID, 10) + "#repair", label: "Repair this package"}
		}
		return c, err
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
	name = zipstream.SafeName(name)
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

// handleDownloadGroup streams one ZIP of every published package of a
// group (Range resumes it; its length is known up front).
func (s *Server) handleDownloadGroup(w http.ResponseWriter, r *http.Request) error {
	g, err := s.findGroup(r)
	if err != nil {
		return err
	}
	return s.serveDownload(w, r, "group", func(ctx context.Context) (*download.Content, error) {
		pkgs, err := s.groupPackages(ctx, g.ID)
		if err != nil {
			return nil, err
		}
		return s.deps.Downloads.Archive(ctx, g.Name, pkgs)
	})
}

// handleDownloadCrowdfund streams one ZIP of the published packages
// linked to one of the user's crowdfund records.
func (s *Server) handleDownloadCrowdfund(w http.ResponseWriter, r *http.Request) error {
	c, err := s.findCrowdfund(r)
	if err != nil {
		return err
	}
	return s.serveDownload(w, r, "group", func(ctx context.Context) (*download.Content, error) {
		pkgs, err := s.deps.DB.ListCrowdfundPackages(ctx, c.UserID, c.ID)
		if err != nil {
			return nil, err
		}
		return s.deps.Downloads.Archive(ctx, c.Name, published(pkgs))
	})
}

// handleDownloadSelection streams one ZIP of the selected packages
// (`id`…), or the package itself when one is selected.
func (s *Server) handleDownloadSelection(w http.ResponseWriter, r *http.Request) error {
	ids, err := paramsOf[idsParams](r).selected()
	if err != nil {
		return err
	}
	return s.serveDownload(w, r, "group", func(ctx context.Context) (*download.Content, error) {
		pkgs, err := s.deps.DB.FindPackagesByID(ctx, ids)
		if err != nil {
			return nil, err
		}
		if len(pkgs) < len(slices.Compact(slices.Sorted(slices.Values(ids)))) {
			return nil, hoard.Errorf(hoard.ENOTFOUND, "A selected package no longer exists.")
		}
		if len(pkgs) == 1 {
			return s.deps.Downloads.Open(ctx, &pkgs[0], 0)
		}
		return s.deps.Downloads.Archive(ctx, "hoard selection", published(pkgs))
	})
}

// groupPackages lists every package of a group, up to what one archive
// holds.
func (s *Server) groupPackages(ctx context.Context, groupID int64) ([]hoard.Package, error) {
	var all []hoard.Package
	var cursor *store.PackageCursor
	for {
		page, next, err := s.deps.DB.ListPackages(ctx, store.PackageFilter{GroupID: groupID}, cursor, 500)
		if err != nil {
			return nil, err
		}
		all = append(all, page...)
		if next == nil || len(all) > download.MaxArchivePackages {
			return published(all), nil
		}
		cursor = next
	}
}

// published keeps the packages that are in the destination channel.
func published(pkgs []hoard.Package) []hoard.Package {
	out := pkgs[:0:0]
	for _, p := range pkgs {
		if p.DestChannelID != 0 && len(p.DestMessageIDs) > 0 {
			out = append(out, p)
		}
	}
	return out
}
