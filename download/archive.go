package download

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/zipstream"
)

// MaxArchivePackages bounds the packages one ZIP holds.
const MaxArchivePackages = 1000

// Archive returns one ZIP (stored entries, ZIP64 where needed) of every
// file of pkgs — each package whole, or each volume of a set published as
// its volumes — named name.zip. Its length is known before the first byte
// and any range of it can be served: the bytes are a function of the
// packages alone. An entry's CRC-32 is the one kept from an earlier full
// read; the files never read in full are read once first (through the
// cache, which then serves the archive's bytes).
func (s *Service) Archive(ctx context.Context, name string, pkgs []hoard.Package) (*Content, error) {
	if len(pkgs) == 0 {
		return nil, hoard.Errorf(hoard.ENOTFOUND, "There is nothing to download: no package here is published.")
	}
	if len(pkgs) > MaxArchivePackages {
		return nil, hoard.Errorf(hoard.ETOOLARGE, "One download holds at most %d packages; this has %d.", MaxArchivePackages, len(pkgs))
	}
	// Oldest first, whatever the caller's order: the same packages make
	// the same bytes, so a range of one request resumes another's.
	pkgs = slices.Clone(pkgs)
	slices.SortFunc(pkgs, func(a, b hoard.Package) int { return cmp.Compare(a.ID, b.ID) })
	var entries []zipstream.Entry
	for i := range pkgs {
		es, err := s.entries(ctx, &pkgs[i])
		if err != nil {
			return nil, err
		}
		entries = append(entries, es...)
	}
	a, err := zipstream.New(entries)
	if err != nil {
		return nil, fmt.Errorf("archive %q: %w", name, err)
	}
	return NewContent(strings.TrimSuffix(name, ".zip")+".zip", a.Size(), a.ETag(), a.ModTime(), func(ctx context.Context, off int64) (io.ReadCloser, error) {
		r := a.Reader(ctx)
		if _, err := r.Seek(off, io.SeekStart); err != nil {
			_ = r.Close()
			return nil, err
		}
		return r, nil
	}), nil
}

// entries are the ZIP entries of one package: its files with their CRC.
func (s *Service) entries(ctx context.Context, pkg *hoard.Package) ([]zipstream.Entry, error) {
	if pkg.DestChannelID == 0 || len(pkg.DestMessageIDs) == 0 {
		return nil, hoard.Errorf(hoard.ENOTFOUND, "%s is not published in the destination channel yet, so it cannot be downloaded.", pkg.FileName)
	}
	parts, err := s.parts(ctx, pkg)
	if err != nil {
		return nil, err
	}
	var out []zipstream.Entry
	for _, f := range s.Files(pkg, parts) {
		c, err := s.open(ctx, pkg, parts, f.Part)
		if err != nil {
			return nil, err
		}
		crc, err := s.checksum(ctx, pkg, f.Part, c)
		if err != nil {
			return nil, err
		}
		out = append(out, zipstream.Entry{Name: f.Name, Size: c.Size, CRC32: crc, Modified: c.Modified, Open: c.Open})
	}
	return out, nil
}

// checksum returns the CRC-32 of a served file: kept, or computed by
// reading it once from its start (the read keeps it, as every full read
// does).
func (s *Service) checksum(ctx context.Context, pkg *hoard.Package, part int, c *Content) (uint32, error) {
	crc, ok, err := s.DB.PackageChecksum(ctx, pkg, part)
	if err != nil || ok {
		return crc, err
	}
	r, err := c.Open(ctx, 0)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	sum, ok := r.(*checksummer)
	if !ok {
		return 0, fmt.Errorf("checksum of %q: its bytes are not checksummed", c.Name)
	}
	if _, err := io.Copy(io.Discard, r); err != nil {
		return 0, fmt.Errorf("checksum of %q: %w", c.Name, err)
	}
	if sum.read != c.Size {
		return 0, fmt.Errorf("checksum of %q: read %d of %d bytes", c.Name, sum.read, c.Size)
	}
	return sum.crc, nil
}
