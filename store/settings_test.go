package store_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/store/storetest"
)

func TestSettings(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	key := fmt.Sprintf("test_setting_%d", seq.Add(1))

	dst := 99
	ok, err := db.GetSetting(ctx, key, &dst)
	if err != nil || ok || dst != 99 {
		t.Fatalf("missing key: ok = %v, err = %v, dst = %d (want untouched 99)", ok, err, dst)
	}

	must(t, db.SetSetting(ctx, key, 1))
	must(t, db.SetSetting(ctx, key, 2))
	ok, err = db.GetSetting(ctx, key, &dst)
	must(t, err)
	if !ok || dst != 2 {
		t.Fatalf("after overwrite: ok = %v, dst = %d", ok, dst)
	}

	must(t, db.SetSetting(ctx, store.SettingUsersCanCurate, true))
	var curate bool
	ok, err = db.GetSetting(ctx, store.SettingUsersCanCurate, &curate)
	must(t, err)
	if !ok || !curate {
		t.Fatalf("bool setting: ok = %v, value = %v", ok, curate)
	}

	type limits struct {
		MaxSize int64             `json:"max_size"`
		Types   []string          `json:"types"`
		Labels  map[string]string `json:"labels"`
	}
	in := limits{MaxSize: 2 << 30, Types: []string{"ZIP", "RAR"}, Labels: map[string]string{"a": "ü"}}
	skey := key + "_struct"
	must(t, db.SetSetting(ctx, skey, in))
	var out limits
	ok, err = db.GetSetting(ctx, skey, &out)
	must(t, err)
	if !ok || !reflect.DeepEqual(in, out) {
		t.Fatalf("struct round trip: %+v, want %+v", out, in)
	}

	// A value of another shape is a decode error, not a silent miss.
	var wrong []int
	ok, err = db.GetSetting(ctx, skey, &wrong)
	if err == nil || ok {
		t.Fatalf("decoding a struct into []int: ok = %v, err = %v", ok, err)
	}
	if err := db.SetSetting(ctx, key, func() {}); err == nil || !strings.Contains(err.Error(), "encode") {
		t.Fatalf("unencodable value: %v", err)
	}
	for _, bad := range []string{"", strings.Repeat("k", 129)} {
		err := savepoint(db, func(tx *store.DB) error { return tx.SetSetting(ctx, bad, 1) })
		wantCode(t, err, hoard.EINVALID)
	}

	must(t, db.DeleteSetting(ctx, key))
	dst = 7
	ok, err = db.GetSetting(ctx, key, &dst)
	if err != nil || ok || dst != 7 {
		t.Fatalf("deleted key: ok = %v, err = %v, dst = %d", ok, err, dst)
	}
	must(t, db.DeleteSetting(ctx, key)) // missing is fine
	ok, _ = db.GetSetting(ctx, skey, &out)
	if !ok {
		t.Fatal("deleting one key removed another")
	}
}
