package web

import (
	"context"
	"errors"
	"fmt"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/archive"
)

// previewImage re-encodes an uploaded preview the way every preview is
// (archive.MakeThumbnail: a JPEG of at most 800 pixels, its dimensions
// checked before a pixel is decoded, the decode within the process's
// decode budget), so that no viewer's browser and no bot photo ever gets
// the image as it was uploaded. Refusals are invalid input naming the
// limit; the request's end is its own error.
func previewImage(ctx context.Context, data []byte) ([]byte, error) {
	out, err := archive.MakeThumbnail(ctx, data, archive.ThumbnailOptions{})
	if err == nil {
		return out, nil
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("preview image: %w", err)
	}
	var big *archive.ImageTooLargeError
	switch {
	case errors.As(err, &big):
		return nil, hoard.Errorf(hoard.EINVALID, "%s", big.Message())
	case errors.Is(err, archive.ErrWebPTooLarge):
		return nil, hoard.Errorf(hoard.EINVALID, "A WebP image is kept as it is, so it may be at most %d × %d pixels; upload a JPEG or PNG instead.",
			archive.DefaultThumbnailDimension, archive.DefaultThumbnailDimension)
	case errors.Is(err, archive.ErrNotImage):
		return nil, hoard.Errorf(hoard.EINVALID, "The file is not a JPEG, PNG, GIF or WebP image.")
	}
	return nil, hoard.Errorf(hoard.EINVALID, "The image could not be decoded: it is damaged or incomplete.")
}
