package web

import (
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-chi/chi/v5"
	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
)

// pathID reads a positive id path parameter; anything else is not found.
func pathID(r *http.Request, name string) (int64, error) {
	id, err := strconv.ParseInt(chi.URLParam(r, name), 10, 64)
	if err != nil || id <= 0 {
		return 0, errNotFound
	}
	return id, nil
}

// findPackage loads the package of the {id} path parameter.
func (s *Server) findPackage(r *http.Request) (*hoard.Package, error) {
	id, err := pathID(r, "id")
	if err != nil {
		return nil, err
	}
	p, err := s.deps.DB.FindPackageByID(r.Context(), id)
	if hoard.ErrorCode(err) == hoard.ENOTFOUND {
		return nil, hoard.Errorf(hoard.ENOTFOUND, "No such package.")
	}
	return p, err
}

// filesPageSize is how many archive entries one page of a file list shows.
const filesPageSize = 100

type packagePage struct {
	P       *hoard.Package
	Channel string
	// SourceURL and DestURL open the source post and the published post
	// in the messenger ("" when unknown).
	SourceURL, DestURL string
	Group              *hoard.PackageGroup
	Files              []hoard.PackageFile
	FileQ              string
	NextFile           string
	Curate             bool
	Admin              bool // may repair the package
	// Problem is set when a live warning or error is about the package:
	// Repair is offered openly, else behind a disclosure.
	Problem bool
	// Images are the archive's image entries offered by "Choose preview"
	// (curators only).
	Images []hoard.PackageFile
	// Extraction is the preview extraction to show: the latest one while
	// it is unfinished, or the one the page was sent back with.
	Extraction *extractionJSON
	// ExtractionText describes it; ExtractionFailed marks a failure.
	ExtractionText   string
	ExtractionFailed bool
}

// packageParams are the package page's parameters: the file list's search
// and page, and the preview extraction the page was sent back with.
type packageParams struct {
	FileQ      string `form:"fq"`
	FileAfter  int32  `form:"fafter" validate:"gte=0"`
	Extraction int64  `form:"extraction" validate:"gte=0"`
}

// handlePackage renders a package: preview, metadata, file list (searchable,
// paged) and, for curators, tag and creator editing.
func (s *Server) handlePackage(w http.ResponseWriter, r *http.Request) error {
	p, err := s.findPackage(r)
	if err != nil {
		return err
	}
	in := paramsOf[packageParams](r)
	fileQ, after := in.FileQ, int(in.FileAfter)
	files, err := s.listPackageFiles(r.Context(), p, after-1, filesPageSize+1, fileQ)
	if err != nil {
		return err
	}
	pp := packagePage{P: p, FileQ: fileQ, Curate: s.canCurate(r), Admin: userFrom(r.Context()).IsAdmin()}
	if len(files) > filesPageSize {
		files = files[:filesPageSize]
		pp.NextFile = withParams(r.URL, map[string]string{"fafter": strconv.Itoa(files[len(files)-1].Ordinal + 1)})
	}
	pp.Files = files
	if pp.Admin {
		if pp.Problem, err = s.deps.DB.PackageHasProblem(r.Context(), p.ID); err != nil {
			return err
		}
	}
	if pp.Curate {
		if err := s.loadPreviewChoice(r, p, &pp); err != nil {
			return err
		}
	}
	if p.SourceChannelID != 0 {
		if c, err := s.deps.DB.FindChannelByID(r.Context(), p.SourceChannelID); err == nil {
			pp.Channel, pp.SourceURL = c.Title, hoard.PostURL(c, p.SourceMessageID, p.SourceTopicID)
		}
	}
	if p.DestChannelID != 0 && len(p.DestMessageIDs) > 0 {
		if c, err := s.deps.DB.FindChannelByID(r.Context(), p.DestChannelID); err == nil {
			pp.DestURL = hoard.PostURL(c, p.DestMessageIDs[0], 0)
		}
	}
	if p.PackageGroupID != 0 {
		if g, err := s.deps.DB.FindGroupByID(r.Context(), p.PackageGroupID); err == nil {
			pp.Group = g
		}
	}
	return s.render(w, r, http.StatusOK, "package", page{Title: p.FileName, Data: pp})
}

// loadPreviewChoice fills the "Choose preview" part of a package page: the
// image entries and the extraction to show.
func (s *Server) loadPreviewChoice(r *http.Request, p *hoard.Package, pp *packagePage) error {
	if p.ArchiveType == hoard.ArchiveDocument || len(p.DestMessageIDs) == 0 {
		return nil
	}
	images, err := s.deps.DB.ListPackageImageFiles(r.Context(), p.ID, maxPreviewEntryBytes, previewChoices)
	if err != nil {
		return err
	}
	pp.Images = images
	x, err := s.deps.DB.FindLatestPreviewExtraction(r.Context(), p.ID)
	if hoard.ErrorCode(err) == hoard.ENOTFOUND {
		return nil
	} else if err != nil {
		return err
	}
	if !x.Status.Final() || paramsOf[packageParams](r).Extraction == x.ID {
		pp.Extraction = toExtractionJSON(x)
		switch x.Status {
		case hoard.ExtractionPending:
			pp.ExtractionText = "Queued: extracting " + x.EntryPath + "…"
		case hoard.ExtractionRunning:
			pp.ExtractionText = "Extracting " + x.EntryPath + "…"
			if x.ErrorMessage != "" {
				pp.ExtractionText += " (" + x.ErrorMessage + ")"
			}
		case hoard.ExtractionDone:
			pp.ExtractionText = "Preview set from " + x.EntryPath + "."
		case hoard.ExtractionFailed:
			pp.ExtractionText, pp.ExtractionFailed = "Could not use "+x.EntryPath+": "+x.ErrorMessage, true
		}
	}
	return nil
}

// handleAPIPackage answers GET /api/packages/{id}.
func (s *Server) handleAPIPackage(w http.ResponseWriter, r *http.Request) error {
	p, err := s.findPackage(r)
	if err != nil {
		return err
	}
	channels, err := s.channelTitles(r)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toPackageJSON(p, channels))
	return nil
}

// filesParams are the parameters of GET /api/packages/{id}/files: a search
// text (at most 200 characters), the ordinal to continue after, the page
// size.
type filesParams struct {
	Q     string `form:"q"`
	After *int32 `form:"after" validate:"omitempty,gte=-1"`
	Limit *int   `form:"limit" validate:"omitempty,min=1,max=1000"`
}

// handleAPIPackageFiles answers GET /api/packages/{id}/files?q=&after=&limit=
// with {"items":[…],"next":<ordinal>|null}.
func (s *Server) handleAPIPackageFiles(w http.ResponseWriter, r *http.Request) error {
	in := paramsOf[filesParams](r)
	p, err := s.findPackage(r)
	if err != nil {
		return err
	}
	limit, after := filesPageSize, -1
	if in.Limit != nil {
		limit = *in.Limit
	}
	if in.After != nil {
		after = int(*in.After)
	}
	files, err := s.listPackageFiles(r.Context(), p, after, limit+1, in.Q)
	if err != nil {
		return err
	}
	type fileJSON struct {
		Ordinal        int     `json:"ordinal"`
		Path           string  `json:"path"`
		Size           int64   `json:"size"`
		CompressedSize int64   `json:"compressed_size"`
		CRC32          *uint32 `json:"crc32,omitempty"`
	}
	items := []fileJSON{}
	var next *int
	for i, f := range files {
		if i == limit {
			n := files[i-1].Ordinal
			next = &n
			break
		}
		items = append(items, fileJSON{f.Ordinal, f.Path, f.Size, f.CompressedSize, f.CRC32})
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": items, "next": next})
	return nil
}

// handlePackagePreview serves a package's preview image. Only image types
// are served (sniffed from the bytes, never trusted from upload names).
func (s *Server) handlePackagePreview(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	data, err := s.deps.DB.FindPackagePreview(r.Context(), id)
	if err != nil {
		return notFoundAs(err, "This package has no preview.")
	}
	return serveImage(w, data)
}

// serveImage writes image bytes with a sniffed image content type.
func serveImage(w http.ResponseWriter, data []byte) error {
	ct := http.DetectContentType(data)
	if !strings.HasPrefix(ct, "image/") {
		return hoard.Errorf(hoard.ENOTFOUND, "The preview is not an image.")
	}
	h := w.Header()
	h.Set("Content-Type", ct)
	h.Set("Content-Security-Policy", "default-src 'none'")
	h.Set("Cache-Control", "private, max-age=300")
	h.Set("Content-Length", strconv.Itoa(len(data)))
	_, err := w.Write(data)
	return err
}

// idsParams are the packages a bulk action names: repeated "id" values.
type idsParams struct {
	IDs []int64 `form:"id" validate:"max=500,dive,gt=0"`
}

// selected returns the named packages; none is EINVALID.
func (p idsParams) selected() ([]int64, error) {
	if len(p.IDs) == 0 {
		return nil, invalidField("id", "Select at least one package.")
	}
	return p.IDs, nil
}

// backParams name the local page a form returns to.
type backParams struct {
	Back string `form:"back" validate:"max=2048"`
}

// Tag bounds: a tag's length, the tags one request names, the tags a
// package may carry.
const (
	maxTagLen         = 64
	maxTagsPerRequest = 64
	maxTagsPerPackage = 64
)

// splitTags reads a comma-separated tag list: trimmed, empty ones dropped;
// a tag longer than maxTagLen characters or more than maxTagsPerRequest
// tags are EINVALID.
func splitTags(s string) ([]string, error) {
	var out []string
	for _, t := range strings.Split(s, ",") {
		t = strings.TrimSpace(t)
		switch {
		case t == "":
			continue
		case utf8.RuneCountInString(t) > maxTagLen:
			return nil, hoard.Errorf(hoard.EINVALID, "A tag is at most %d characters long: %q… is longer.", maxTagLen, string([]rune(t)[:20]))
		case len(out) == maxTagsPerRequest:
			return nil, hoard.Errorf(hoard.EINVALID, "Name at most %d tags at a time.", maxTagsPerRequest)
		}
		out = append(out, t)
	}
	return out, nil
}

// tagsParams are the parameters of POST /packages/tags.
type tagsParams struct {
	idsParams
	backParams
	Mode string `form:"mode" validate:"omitempty,oneof=set add remove"`
	Tags string `form:"tags" validate:"max=4200"` // comma-separated
}

// handleEditTags edits the tags of one or many packages (single and bulk
// "edit tags"): mode set, add or remove with a comma-separated list.
func (s *Server) handleEditTags(w http.ResponseWriter, r *http.Request) error {
	in := paramsOf[tagsParams](r)
	ids, err := in.selected()
	if err != nil {
		return err
	}
	tags, err := splitTags(in.Tags)
	if err != nil {
		return aboutField("tags", err)
	}
	edit, done := store.TagEdit{Max: maxTagsPerPackage}, "tags-added"
	switch in.Mode {
	case "set":
		edit.Set, done = append([]string{}, tags...), "tags-set"
	case "add", "":
		edit.Add = tags
	case "remove":
		edit.Remove, done = tags, "tags-removed"
	}
	if len(tags) == 0 && edit.Set == nil {
		return invalidField("tags", "Name the tags to %s, separated by commas.", map[string]string{"tags-added": "add", "tags-removed": "remove"}[done])
	}
	if _, err := s.deps.DB.EditPackageTags(r.Context(), ids, edit); err != nil {
		return aboutField("tags", err)
	}
	return redirect(w, r, withNotice(backTo(r, ids), done, len(ids)))
}

// creatorParams are the parameters of POST /packages/creator.
type creatorParams struct {
	idsParams
	backParams
	Creator string `form:"creator"`
}

// handleSetCreator sets the creator of one or many packages.
func (s *Server) handleSetCreator(w http.ResponseWriter, r *http.Request) error {
	in := paramsOf[creatorParams](r)
	ids, err := in.selected()
	if err != nil {
		return err
	}
	if err := s.deps.DB.SetPackageCreator(r.Context(), ids, in.Creator); err != nil {
		return aboutField("creator", err)
	}
	return redirect(w, r, withNotice(backTo(r, ids), "creator-set", len(ids)))
}

// backTo is where a form returns: the "back" field when local, else the
// package page of a single package, else the catalog.
func backTo(r *http.Request, ids []int64) string {
	if b := r.PostFormValue("back"); b != "" {
		return localPath(b)
	}
	if len(ids) == 1 {
		return "/packages/" + strconv.FormatInt(ids[0], 10)
	}
	return "/"
}
