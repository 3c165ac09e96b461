package web

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
)

// maxPreviewEntryBytes is the largest archive entry offered as a preview:
// the extract_preview job refuses larger ones (archive.MaxPreviewSize; web
// does not import archive).
const maxPreviewEntryBytes = 10 << 20

// previewChoices is how many image entries "Choose preview" lists.
const previewChoices = 200

// extractionJSON is a preview extraction as the package page polls it.
type extractionJSON struct {
	ID              int64   `json:"id"`
	PackageID       int64   `json:"package_id"`
	EntryPath       string  `json:"entry_path"`
	Status          string  `json:"status"`
	Method          string  `json:"method,omitempty"`
	BytesDownloaded int64   `json:"bytes_downloaded"`
	Error           string  `json:"error_message,omitempty"`
	CreatedAt       string  `json:"created_at"`
	UpdatedAt       string  `json:"updated_at"`
	FinishedAt      *string `json:"finished_at"`
	StatusURL       string  `json:"status_url"`
	PreviewURL      string  `json:"preview_url,omitempty"`
}

func extractionURL(x *hoard.PreviewExtraction) string {
	return "/api/packages/" + strconv.FormatInt(x.PackageID, 10) + "/preview/extract/" + strconv.FormatInt(x.ID, 10)
}

func toExtractionJSON(x *hoard.PreviewExtraction) *extractionJSON {
	out := &extractionJSON{ID: x.ID, PackageID: x.PackageID, EntryPath: x.EntryPath, Status: string(x.Status), Method: x.Method,
		BytesDownloaded: x.BytesDownloaded, Error: x.ErrorMessage, CreatedAt: x.CreatedAt.UTC().Format(time.RFC3339),
		UpdatedAt: x.UpdatedAt.UTC().Format(time.RFC3339), StatusURL: extractionURL(x)}
	if x.FinishedAt != nil {
		v := x.FinishedAt.UTC().Format(time.RFC3339)
		out.FinishedAt = &v
	}
	if x.Status == hoard.ExtractionDone {
		// A new address per extraction, so that browsers drop the cached
		// preview.
		out.PreviewURL = "/packages/" + strconv.FormatInt(x.PackageID, 10) + "/preview?v=" + strconv.FormatInt(x.ID, 10)
	}
	return out
}

// extractParams are the parameters of POST /packages/{id}/preview/extract:
// an entry's path as listed (not trimmed: paths may hold any spaces).
type extractParams struct {
	Entry string `form:"entry,raw" validate:"max=4096"`
}

// handleExtractPreview chooses a package's preview from its archive (POST
// /packages/{id}/preview/extract, form field "entry": an image entry's path
// as listed): it records a PENDING preview extraction and queues its
// extract_preview job in one transaction, so neither exists without the
// other. While the same entry is already being extracted, that extraction
// is answered instead and nothing is inserted ("queued": false). Entries
// that are not listed, not images or too large are refused (422), as are
// packages that are not published (409): the job reads the bytes from the
// destination channel. Scripts get 202 with the extraction; the page's form
// returns to the package page, which polls the status.
func (s *Server) handleExtractPreview(w http.ResponseWriter, r *http.Request) error {
	p, err := s.findPackage(r)
	if err != nil {
		return err
	}
	entry := paramsOf[extractParams](r).Entry
	if entry == "" {
		return hoard.Errorf(hoard.EINVALID, "Choose an image of the archive.")
	}
	if p.ArchiveType == hoard.ArchiveDocument {
		return hoard.Errorf(hoard.EINVALID, "%s is a document, not an archive.", p.FileName)
	}
	if p.DestChannelID == 0 || len(p.DestMessageIDs) == 0 {
		return hoard.Errorf(hoard.ECONFLICT, "%s is not published to the destination channel yet, so no image can be extracted from it.", p.FileName)
	}
	ctx := r.Context()
	var (
		x      *hoard.PreviewExtraction
		queued bool
	)
	err = s.deps.DB.InTx(ctx, func(tx *store.DB) error {
		f, err := tx.FindPackageFileByPath(ctx, p.ID, entry)
		if hoard.ErrorCode(err) == hoard.ENOTFOUND {
			return hoard.Errorf(hoard.EINVALID, "The archive has no entry %q.", entry)
		} else if err != nil {
			return err
		}
		switch f.Extension {
		case "jpg", "jpeg", "png", "gif", "webp":
		default:
			return hoard.Errorf(hoard.EINVALID, "%q is not a JPEG, PNG, GIF or WebP image.", entry)
		}
		if f.Size > maxPreviewEntryBytes {
			return hoard.Errorf(hoard.EINVALID, "%q is larger than %d MiB.", entry, maxPreviewEntryBytes>>20)
		}
		x, err = tx.FindUnfinishedPreviewExtraction(ctx, p.ID, entry)
		if err == nil {
			return nil // already under way: answer it
		} else if hoard.ErrorCode(err) != hoard.ENOTFOUND {
			return err
		}
		if x, err = tx.CreatePreviewExtraction(ctx, p.ID, entry, userFrom(ctx).ID); err != nil {
			return err
		}
		res, err := s.insertJob(ctx, tx, hoard.ExtractPreviewArgs{PackageID: p.ID, EntryPath: entry, ExtractionID: x.ID})
		if err != nil {
			return err
		}
		if res.UniqueSkippedAsDuplicate {
			// The job of an extraction that ended early still runs: retry
			// in a moment (the transaction rolls the new row back).
			return hoard.Errorf(hoard.ECONFLICT, "This image is still being extracted; try again in a moment.")
		}
		x.RiverJobID, queued = res.Job.ID, true
		return tx.SetPreviewExtractionJob(ctx, x.ID, res.Job.ID)
	})
	if err != nil {
		return fmt.Errorf("extract preview of package %d: %w", p.ID, err)
	}
	s.deps.Logger.Info("preview extraction queued", "package", p.ID, "extraction", x.ID, "queued", queued, "user", userFrom(ctx).ID)
	return answerQueued(w, r, "/packages/"+strconv.FormatInt(p.ID, 10)+"?extraction="+strconv.FormatInt(x.ID, 10), "extract", nil,
		map[string]any{"extraction": toExtractionJSON(x), "queued": queued})
}

// handleExtractionStatus answers GET
// /api/packages/{id}/preview/extract/{extractionId} with {"extraction": …}
// for the package page's polling; 404 for an extraction of another package.
func (s *Server) handleExtractionStatus(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	xid, err := pathID(r, "extractionId")
	if err != nil {
		return err
	}
	x, err := s.deps.DB.FindPreviewExtraction(r.Context(), id, xid)
	if err != nil {
		return notFoundAs(err, "No such preview extraction.")
	}
	writeJSON(w, http.StatusOK, map[string]any{"extraction": toExtractionJSON(x)})
	return nil
}
