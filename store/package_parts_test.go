package store_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store/storetest"
)

// What a package's posts hold is kept for its current posts only: a
// repaired package (new posts) forgets its parts and checksums; two
// downloads learning it at once both succeed.
func TestPackagePartsFollowThePosts(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	dest := mustChannel(t, db, func(c *hoard.Channel) { c.Kind = hoard.ChannelDestination })
	pkg := mustPackage(t, db, func(p *hoard.Package) {
		p.DestChannelID, p.DestMessageID, p.DestMessageIDs, p.PartCount = dest.ID, 10, []int64{10, 11}, 2
	})
	parts := []hoard.PackagePart{{PartNo: 1, DestMessageID: 10, Name: "a.zip.001", Size: 5}, {PartNo: 2, DestMessageID: 11, Name: "a.zip.002", Size: 3}}
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() { errs[i] = db.RecordPackageParts(ctx, pkg.ID, parts) })
	}
	wg.Wait()
	if err := db.RecordPackageChecksum(ctx, pkg.ID, 0, pkg.DestMessageIDs, 0xdeadbeef); err != nil {
		t.Fatal(err)
	}
	type state struct {
		Errs  string
		Parts string
		CRC   uint32
		Known bool
	}
	read := func(p *hoard.Package, errs []error) state {
		got, err := db.PackageParts(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		crc, ok, err := db.PackageChecksum(ctx, p, 0)
		if err != nil {
			t.Fatal(err)
		}
		return state{fmt.Sprint(errs), fmt.Sprint(got), crc, ok}
	}
	if got, want := read(pkg, errs), (state{"[<nil> <nil> <nil> <nil>]", fmt.Sprint(parts), 0xdeadbeef, true}); got != want {
		t.Fatalf("after learning:\n got %+v\nwant %+v", got, want)
	}
	if err := db.SetPackageDestination(ctx, pkg.ID, dest.ID, []int64{20, 21}); err != nil {
		t.Fatal(err)
	}
	repaired, err := db.FindPackageByID(ctx, pkg.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := read(repaired, nil), (state{"[]", "[]", 0, false}); got != want {
		t.Fatalf("after a repair:\n got %+v\nwant %+v", got, want)
	}
}
