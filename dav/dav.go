// Package dav serves the catalog as a read-only WebDAV tree, for file
// managers and tools such as rclone:
//
//	/creators/<creator>/   the files of the packages by that creator
//	/groups/<group>/       the files of the group's packages
//	/tags/<tag>/           the files of the packages with that tag
//	/latest/               the files of the newest packages (store.DavLatest)
//
// A package's files are what download.Service.Files lists: the package
// whole, or each volume of a multi-volume set. Folders list only packages
// published to the destination channel, at most store.DavFolderLimit
// entries each. Listings (PROPFIND) are answered from the database alone;
// a file's bytes are asked of the platform only when it is read (GET,
// with Range).
//
// Names are untrusted text from the platform. Each becomes a safe single
// path segment (Segment) and is unique within its folder: the first entry
// in the folder's order keeps the name, a later one with the same name
// gets " (2)", " (3)", … before its extension. Folders of creators are
// ordered by lower-case name, tags by name, groups by id and files by
// package id, so names are the same from one request to the next while
// the catalog does not change.
//
// Every method that would write (PUT, DELETE, MKCOL, COPY, MOVE,
// PROPPATCH, LOCK, UNLOCK, POST) is answered 405 before WebDAV sees it,
// and the file system refuses writes with os.ErrPermission as well.
// PROPFIND of infinite depth is refused (403, DAV:propfind-finite-depth):
// it would walk the whole catalog.
package dav

import (
	"errors"
	"io/fs"
	"log/slog"
	"net/http"
	"path"
	"strings"

	"github.com/hoard/hoard/download"
	"github.com/hoard/hoard/store"
	"golang.org/x/net/webdav"
)

// allowed are the methods the view answers.
const allowed = "OPTIONS, GET, HEAD, PROPFIND"

// New returns the WebDAV handler of the catalog mounted at prefix (say
// "/dav"; "" for the root): requests must be for paths under prefix, and
// listings name them with it. Files are opened with files; log (nil: the
// default logger) receives the errors of requests. The handler does not
// authenticate or limit downloads per user: mount it behind what does.
// It is safe for concurrent use.
func New(db *store.DB, files *download.Service, prefix string, log *slog.Logger) http.Handler {
	if log == nil {
		log = slog.Default()
	}
	return &handler{dav: &webdav.Handler{
		Prefix:     strings.TrimSuffix(prefix, "/"),
		FileSystem: &fileSystem{db: db, files: files},
		// Never used: LOCK and UNLOCK are refused before webdav sees them,
		// but webdav needs a lock system to serve anything.
		LockSystem: webdav.NewMemLS(),
		Logger: func(r *http.Request, err error) {
			switch {
			case err == nil:
			case errors.Is(err, fs.ErrNotExist):
				log.Debug("dav: not found", "method", r.Method, "path", r.URL.Path)
			default:
				log.Warn("dav: request failed", "method", r.Method, "path", r.URL.Path, "err", err)
			}
		},
	}}
}

// handler answers the read methods through webdav, each request with its
// own memo of listings, and refuses the others.
type handler struct {
	dav *webdav.Handler
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodOptions:
		w.Header().Set("Allow", allowed)
		w.Header().Set("DAV", "1")
		w.Header().Set("MS-Author-Via", "DAV")
		w.WriteHeader(http.StatusOK)
		return
	case http.MethodGet, http.MethodHead:
		// Set here, http.ServeContent does not sniff the bytes: a Range
		// request would otherwise read the file's start as well.
		if !strings.HasSuffix(r.URL.Path, "/") {
			w.Header().Set("Content-Type", contentType(path.Base(r.URL.Path)))
		}
	case "PROPFIND":
		if d := r.Header.Get("Depth"); d != "0" && d != "1" {
			refuseInfiniteDepth(w)
			return
		}
	default:
		w.Header().Set("Allow", allowed)
		http.Error(w, "The catalog is read-only over WebDAV.", http.StatusMethodNotAllowed)
		return
	}
	h.dav.ServeHTTP(w, r.WithContext(withMemo(r.Context())))
}

// refuseInfiniteDepth answers a PROPFIND of infinite depth (RFC 4918
// section 9.1: a server may refuse it with this precondition).
func refuseInfiniteDepth(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/xml; charset=utf-8")
	w.WriteHeader(http.StatusForbidden)
	_, _ = w.Write([]byte(`<?xml version="1.0" encoding="utf-8"?>` +
		`<D:error xmlns:D="DAV:"><D:propfind-finite-depth/></D:error>`))
}
