package web

import (
	"bytes"
	"compress/zlib"
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"html"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hoard/hoard"
)

// bombPNG is a w×h one-bit grayscale PNG of one colour, streamed without
// holding the image: a few kilobytes that would decode to w×h bytes.
func bombPNG(t testing.TB, w, h int) []byte {
	var out bytes.Buffer
	chunk := func(typ string, data []byte) {
		b := binary.BigEndian.AppendUint32(nil, uint32(len(data)))
		b = append(append(b, typ...), data...)
		out.Write(binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b[4:])))
	}
	out.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := binary.BigEndian.AppendUint32(nil, uint32(w))
	chunk("IHDR", append(binary.BigEndian.AppendUint32(ihdr, uint32(h)), 1, 0, 0, 0, 0))
	var idat bytes.Buffer
	zw := zlib.NewWriter(&idat)
	row := make([]byte, 1+(w+7)/8)
	for range h {
		if _, err := zw.Write(row); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	chunk("IDAT", idat.Bytes())
	chunk("IEND", nil)
	return out.Bytes()
}

// photoPNG is a w×h PNG with some detail, as a curator's picture would be.
func photoPNG(t testing.TB, w, h int) []byte {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.SetNRGBA(x, y, color.NRGBA{uint8(x), uint8(y), uint8(x ^ y), 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// webpOf is the header of a lossless WebP declaring w×h (no picture).
func webpOf(w, h int) []byte {
	b := append([]byte("RIFF\x40\x00\x00\x00WEBPVP8L"), 32, 0, 0, 0, 0x2f)
	b = binary.LittleEndian.AppendUint32(b, uint32(w-1)|uint32(h-1)<<14)
	return append(b, make([]byte, 32)...)
}

// postImageBody posts data as the form's "image" file and returns the
// status and the page.
func (e *testEnv) postImageBody(path string, data []byte, c *http.Cookie) (int, string) {
	e.t.Helper()
	resp, body := e.postImageResponse(path, data, c)
	return resp.StatusCode, body
}

// postImageResponse posts data as the form's "image" file, as a browser on
// a page of hoard's does, and returns the response (not followed) and its
// body.
func (e *testEnv) postImageResponse(path string, data []byte, c *http.Cookie) (*http.Response, string) {
	e.t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	w, _ := mw.CreateFormFile("image", "p.png")
	_, _ = w.Write(data)
	_ = mw.Close()
	req, _ := http.NewRequest("POST", e.ts.URL+path, &b)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Origin", e.ts.URL)
	req.AddCookie(c)
	resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

// previewResult is what an upload did and what viewers then get.
type previewResult struct {
	Status        int    // of the upload
	Message       string // the refusal's message found on the page ("" when none is expected)
	PreviewType   string // Content-Type of the served preview ("" when none)
	Width, Height int    // of the served preview
}

// TestPreviewUploadsAreReencoded: a curator's preview, for a package or a
// group, is never stored as it came: a pixel bomb is refused by its
// header (422 naming the limit), a large picture is re-encoded to an
// 800-pixel JPEG, a WebP that cannot be re-encoded is kept only when small.
func TestPreviewUploadsAreReencoded(t *testing.T) {
	e := newEnv(t)
	pk := e.seedCatalog()
	admin, _ := e.user(hoard.RoleAdmin)
	c := e.session(admin)
	a, b := pk["Dragon_Bust_v2.stl"], pk["Red Dragon Pack.zip"]
	resp, body := e.do(e.client(), "POST", "/groups", url.Values{"name": {"Dragons"}, "id": {fmt.Sprint(a.ID), fmt.Sprint(b.ID)}}, c)
	m := regexp.MustCompile(`/groups/(\d+)`).FindStringSubmatch(resp.Header.Get("Location"))
	if m == nil {
		t.Fatalf("create group = %d %s", resp.StatusCode, body)
	}
	gid, _ := strconv.ParseInt(m[1], 10, 64)
	targets := map[string]string{"package": fmt.Sprintf("/packages/%d/preview", a.ID), "group": fmt.Sprintf("/groups/%d/preview", gid)}
	bomb := bombPNG(t, 16000, 16000)
	if len(bomb) > 2<<20 {
		t.Fatalf("the bomb is %d bytes, over the upload limit", len(bomb))
	}
	for _, tc := range []struct {
		name string
		data []byte
		want previewResult
	}{
		{"pixel bomb refused", bomb, previewResult{Status: 422, Message: "The image is 16,000 × 16,000 pixels; previews may have at most 24 megapixels and 16,384 pixels a side."}},
		{"large picture re-encoded", photoPNG(t, 2400, 1200), previewResult{Status: 303, PreviewType: "image/jpeg", Width: 800, Height: 400}},
		{"small picture re-encoded at its size", photoPNG(t, 300, 200), previewResult{Status: 303, PreviewType: "image/jpeg", Width: 300, Height: 200}},
		{"huge webp refused", webpOf(16000, 16000), previewResult{Status: 422, Message: "A WebP image is kept as it is, so it may be at most 800 × 800 pixels; upload a JPEG or PNG instead."}},
	} {
		for kind, path := range targets {
			t.Run(kind+": "+tc.name, func(t *testing.T) {
				for _, p := range []*hoard.Package{a, b} { // nothing to show but the upload
					if err := e.db.SetPackagePreview(context.Background(), p.ID, nil, 0); err != nil {
						t.Fatal(err)
					}
				}
				if err := e.db.SetGroupPreview(context.Background(), gid, nil); err != nil {
					t.Fatal(err)
				}
				var got previewResult
				var page string
				got.Status, page = e.postImageBody(path, tc.data, c)
				if tc.want.Message != "" && strings.Contains(page, html.EscapeString(tc.want.Message)) {
					got.Message = tc.want.Message
				}
				if resp, body := e.do(nil, "GET", path, nil, c); resp.StatusCode == 200 {
					got.PreviewType = resp.Header.Get("Content-Type")
					if cfg, err := jpeg.DecodeConfig(strings.NewReader(body)); err == nil {
						got.Width, got.Height = cfg.Width, cfg.Height
					}
				}
				if got != tc.want {
					t.Errorf("got %+v, want %+v\n%s", got, tc.want, excerpt(page))
				}
			})
		}
	}
}
