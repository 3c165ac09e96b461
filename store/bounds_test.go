package store_test

import (
	"context"
	"math"
	"testing"

	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/store/storetest"
)

// TestFiltersTakeAnyID: list filters take any int64 id or cursor — the
// largest one included — and find nothing rather than fail. (A parameter
// PostgreSQL typed from an INTEGER literal, as in "$1 = 0", refused ids
// past 2^31: a 500 for /api/notifications?before=99999999999.)
func TestFiltersTakeAnyID(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	for _, id := range []int64{math.MaxInt64, math.MaxInt32 + 1, math.MinInt64} {
		for _, c := range []struct {
			name string
			list func() (int, error)
		}{
			{"ListNotifications before", func() (int, error) { n, err := db.ListNotifications(ctx, id, 10); return len(n), err }},
			{"ListCrowdfunds host", func() (int, error) {
				n, err := db.ListCrowdfunds(ctx, 1, store.CrowdfundFilter{HostID: id})
				return len(n), err
			}},
			{"ListSkippedPackages before", func() (int, error) { n, err := db.ListSkippedPackages(ctx, "", id, 10); return len(n), err }},
			{"ListBotSendRequests user", func() (int, error) { n, err := db.ListBotSendRequests(ctx, id, 10); return len(n), err }},
			{"ListManualUploads user", func() (int, error) { n, err := db.ListManualUploads(ctx, id, 10); return len(n), err }},
			{"SearchPackageFiles before", func() (int, error) { n, _, err := db.SearchPackageFiles(ctx, "dragon", id, 10); return len(n), err }},
			{"ListPackageFiles after", func() (int, error) { n, err := db.ListPackageFiles(ctx, 1, int(id), 10, "x"); return len(n), err }},
		} {
			n, err := c.list()
			if err != nil || (id != math.MinInt64 && n != 0) {
				t.Errorf("%s %d = %d rows, %v", c.name, id, n, err)
			}
		}
	}
}
