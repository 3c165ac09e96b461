package migrations_test

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/hoard/hoard/store/storetest"
)

// nameGrams019 is hoard_name_grams as migration 019 defined it: the index
// packages_name_grams_idx was built on it, and migration 037 replaced it
// without building the index again.
const nameGrams019 = `CREATE FUNCTION pg_temp.name_grams_019(t TEXT) RETURNS TEXT[]
LANGUAGE sql IMMUTABLE STRICT AS $$
    SELECT coalesce(array_agg(DISTINCT substr(w, i, n)), '{}')
    FROM regexp_split_to_table(lower(t), '[^[:alnum:]]+') AS w,
         generate_series(1, 2) AS n,
         generate_series(1, length(w)) AS i
    WHERE i + n - 1 <= length(w)
$$`

// TestNameGramsAsMigration019Gave checks that hoard_name_grams gives every
// name the set of pieces migration 019's definition gave (the keys of an
// index built on that one), for names of every kind and for random ones
// of letters, digits, separators and marks of several scripts.
func TestNameGramsAsMigration019Gave(t *testing.T) {
	ctx := context.Background()
	pool := connect(t, storetest.URL(t))
	names := []string{"", "--", "a", "A", "ab", "abc", "-a-", "x_y", "Ab-C", "a b c", "ab--cd", "aa aa aaa",
		"Dragon_Bust_v2_supported.zip", "1.2.3-rc4", "ÄÖü ß x1", "  lead trail  ", "日本語 テスト", "Ǆ ǅ İstanbul",
		"tab\there", "e\u0301clair", strings.Repeat("Knight", 200) + ".7z"}
	r := rand.New(rand.NewPCG(19, 37))
	alphabet := []rune("aAbZz09_-. \t/äÖßİ日本ǅé\u0301ΩЖ🐉")
	for range 2000 {
		name := make([]rune, r.IntN(40))
		for i := range name {
			name[i] = alphabet[r.IntN(len(alphabet))]
		}
		names = append(names, string(name))
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, nameGrams019); err != nil {
		t.Fatal(err)
	}
	type differs struct{ Name, Now, Then string }
	rows, err := conn.Query(ctx, `
		SELECT n, now::text, then_::text FROM unnest($1::text[]) AS n,
			LATERAL (SELECT ARRAY(SELECT DISTINCT g FROM unnest(hoard_name_grams(n)) AS g ORDER BY g) AS now,
				pg_temp.name_grams_019(n) AS then_) AS x
		WHERE now IS DISTINCT FROM then_`, names)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []differs
	for rows.Next() {
		var d differs
		if err := rows.Scan(&d.Name, &d.Now, &d.Then); err != nil {
			t.Fatal(err)
		}
		got = append(got, d)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(got) > 0 {
		t.Fatalf("%d of %d names have other pieces than migration 019 gave, the first: %+v", len(got), len(names), got[0])
	}
}
