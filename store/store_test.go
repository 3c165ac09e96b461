package store_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/store/storetest"
	"github.com/jackc/pgx/v5/pgconn"
)

func TestOpen(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("unparsable URL", func(t *testing.T) {
		db, err := store.Open(ctx, "postgres://host:notaport/db", store.Options{})
		if err == nil {
			db.Close()
			t.Fatal("Open accepted a malformed URL")
		}
		if !strings.Contains(err.Error(), "parse DATABASE_URL") {
			t.Fatalf("error %q does not name DATABASE_URL parsing", err)
		}
	})

	t.Run("server not answering", func(t *testing.T) {
		// Nothing listens on port 1: the pool is created lazily, so the
		// failure comes from the ping.
		db, err := store.Open(ctx, "postgres://postgres@127.0.0.1:1/postgres?connect_timeout=2", store.Options{})
		if err == nil {
			db.Close()
			t.Fatal("Open succeeded without a server")
		}
		if !strings.Contains(err.Error(), "ping") {
			t.Fatalf("error %q does not come from the ping", err)
		}
	})

	t.Run("connect_timeout of the URL is honoured", func(t *testing.T) {
		// A server that accepts connections and never answers.
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		must(t, err)
		defer ln.Close()
		go func() {
			var held []net.Conn
			for {
				c, err := ln.Accept()
				if err != nil { // listener closed at the end of the subtest
					for _, c := range held {
						c.Close()
					}
					return
				}
				held = append(held, c)
			}
		}()
		start := time.Now()
		db, err := store.Open(ctx, "postgres://postgres@"+ln.Addr().String()+"/postgres?connect_timeout=1&sslmode=disable", store.Options{})
		if err == nil {
			db.Close()
			t.Fatal("Open succeeded against a silent server")
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("Open waited %v; the URL asked for 1s", d)
		}
	})

	t.Run("pool sizes of the URL win", func(t *testing.T) {
		type sizes struct{ Max, Min int32 }
		url := storetest.URL(t)
		sep := "?"
		if strings.Contains(url, "?") {
			sep = "&"
		}
		for _, tc := range []struct {
			name  string
			query string
			opts  store.Options
			want  sizes
		}{
			{"the process's sizes", "", store.Options{MaxConns: 40, MinConns: 20}, sizes{40, 20}},
			{"the URL's maximum caps the process's minimum", "pool_max_conns=6", store.Options{MaxConns: 40, MinConns: 20}, sizes{6, 6}},
			{"both from the URL", "pool_max_conns=6&pool_min_conns=1", store.Options{MaxConns: 40, MinConns: 20}, sizes{6, 1}},
			{"the URL's minimum, the process's maximum", "pool_min_conns=2", store.Options{MaxConns: 5, MinConns: 4}, sizes{5, 2}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				u := url
				if tc.query != "" {
					u += sep + tc.query
				}
				db, err := store.Open(ctx, u, tc.opts)
				must(t, err)
				defer db.Close()
				cfg := db.Pool().Config()
				if got := (sizes{cfg.MaxConns, cfg.MinConns}); got != tc.want {
					t.Fatalf("pool sizes %+v, want %+v", got, tc.want)
				}
			})
		}
	})

	t.Run("good URL", func(t *testing.T) {
		db, err := store.Open(ctx, storetest.URL(t), store.Options{MaxConns: 3})
		must(t, err)
		if db.Pool() == nil || db.Tx() != nil {
			t.Fatalf("pool DB: Pool() = %v, Tx() = %v", db.Pool(), db.Tx())
		}
		if got := db.Pool().Config().MaxConns; got != 3 {
			t.Fatalf("MaxConns = %d, want 3", got)
		}
		must(t, db.Ping(ctx))
		// The schema is there: a method works.
		a, err := db.CreateAccount(ctx, "+15550000001")
		must(t, err)
		if a.ID == 0 {
			t.Fatal("no id")
		}

		// New wraps the same pool.
		other := store.New(db.Pool())
		if other.Pool() != db.Pool() || other.Tx() != nil {
			t.Fatal("New does not wrap the pool")
		}
		got, err := other.FindAccountByPhone(ctx, "+15550000001")
		must(t, err)
		if got.ID != a.ID {
			t.Fatalf("New sees account %d, want %d", got.ID, a.ID)
		}

		db.Close()
		if err := db.Ping(ctx); err == nil {
			t.Fatal("Ping succeeded after Close")
		}
		err = db.InTx(ctx, func(*store.DB) error { return nil })
		if err == nil || !strings.Contains(err.Error(), "begin transaction") {
			t.Fatalf("InTx on a closed pool = %v", err)
		}
	})
}

func TestWithTx(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.NewTx(t)
	tx := db.Tx()
	if tx == nil || db.Pool() != nil {
		t.Fatalf("transaction DB: Tx() = %v, Pool() = %v", tx, db.Pool())
	}
	same := store.WithTx(tx)
	if same.Tx() != tx || same.Pool() != nil {
		t.Fatal("WithTx does not bind the transaction")
	}
	a := mustAccount(t, same)
	// Both DBs run in the one transaction: each sees the other's rows.
	got, err := db.FindAccountByID(ctx, a.ID)
	must(t, err)
	if got.Phone != a.Phone {
		t.Fatalf("phone = %q", got.Phone)
	}
	// Close on a transaction-bound DB leaves the transaction alone.
	same.Close()
	must(t, db.Ping(ctx))
	must(t, same.Ping(ctx))
}

func TestInTx(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.NewDB(t)
	exists := func(t *testing.T, phone string) bool {
		t.Helper()
		_, err := db.FindAccountByPhone(ctx, phone)
		if err != nil && hoard.ErrorCode(err) != hoard.ENOTFOUND {
			t.Fatal(err)
		}
		return err == nil
	}
	phone := func() string { return fmt.Sprintf("+1666%07d", seq.Add(1)) }

	t.Run("commits on nil", func(t *testing.T) {
		p := phone()
		must(t, db.InTx(ctx, func(tx *store.DB) error {
			if tx.Tx() == nil {
				t.Error("fn got a DB without a transaction")
			}
			_, err := tx.CreateAccount(ctx, p)
			return err
		}))
		if !exists(t, p) {
			t.Fatal("committed account missing")
		}
	})

	t.Run("rolls back on error", func(t *testing.T) {
		p := phone()
		sentinel := errors.New("stop")
		err := db.InTx(ctx, func(tx *store.DB) error {
			if _, err := tx.CreateAccount(ctx, p); err != nil {
				return err
			}
			return fmt.Errorf("wrapped: %w", sentinel)
		})
		if !errors.Is(err, sentinel) {
			t.Fatalf("InTx = %v, want fn's error", err)
		}
		if exists(t, p) {
			t.Fatal("account of a failed transaction was committed")
		}
	})

	t.Run("rolls back on a database error", func(t *testing.T) {
		p := phone()
		dup := mustAccount(t, db)
		err := db.InTx(ctx, func(tx *store.DB) error {
			if _, err := tx.CreateAccount(ctx, p); err != nil {
				return err
			}
			_, err := tx.CreateAccount(ctx, dup.Phone)
			return err
		})
		wantCode(t, err, hoard.ECONFLICT)
		if exists(t, p) {
			t.Fatal("account of a failed transaction was committed")
		}
	})

	t.Run("rolls back on panic and re-panics", func(t *testing.T) {
		p := phone()
		var recovered any
		func() {
			defer func() { recovered = recover() }()
			_ = db.InTx(ctx, func(tx *store.DB) error {
				if _, err := tx.CreateAccount(ctx, p); err != nil {
					t.Error(err)
				}
				panic("boom")
			})
		}()
		if recovered != "boom" {
			t.Fatalf("recovered %v, want the original panic", recovered)
		}
		if exists(t, p) {
			t.Fatal("account of a panicking transaction was committed")
		}
		// The connection went back to the pool.
		if n := db.Pool().Stat().AcquiredConns(); n != 0 {
			t.Fatalf("%d connections still acquired", n)
		}
	})

	t.Run("swallowed database error fails the commit", func(t *testing.T) {
		p := phone()
		dup := mustAccount(t, db)
		err := db.InTx(ctx, func(tx *store.DB) error {
			if _, err := tx.CreateAccount(ctx, p); err != nil {
				return err
			}
			_, _ = tx.CreateAccount(ctx, dup.Phone) // error ignored: the transaction is aborted
			return nil
		})
		if err == nil || !strings.Contains(err.Error(), "commit transaction") {
			t.Fatalf("InTx = %v, want a commit error", err)
		}
		if exists(t, p) {
			t.Fatal("account of an aborted transaction was committed")
		}
	})

	t.Run("nested uses a savepoint", func(t *testing.T) {
		outer, failed, kept := phone(), phone(), phone()
		must(t, db.InTx(ctx, func(tx *store.DB) error {
			if _, err := tx.CreateAccount(ctx, outer); err != nil {
				return err
			}
			err := tx.InTx(ctx, func(inner *store.DB) error {
				if _, err := inner.CreateAccount(ctx, failed); err != nil {
					return err
				}
				_, err := inner.CreateAccount(ctx, outer) // unique violation aborts the savepoint only
				return err
			})
			wantCode(t, err, hoard.ECONFLICT)
			// The outer transaction is still usable and sees its own row
			// but not the inner one.
			if _, err := tx.FindAccountByPhone(ctx, outer); err != nil {
				return err
			}
			if _, err := tx.FindAccountByPhone(ctx, failed); hoard.ErrorCode(err) != hoard.ENOTFOUND {
				t.Errorf("inner account visible after its savepoint rolled back: %v", err)
			}
			return tx.InTx(ctx, func(inner *store.DB) error {
				_, err := inner.CreateAccount(ctx, kept)
				return err
			})
		}))
		if !exists(t, outer) || !exists(t, kept) {
			t.Fatal("outer work or successful inner work lost")
		}
		if exists(t, failed) {
			t.Fatal("failed inner work committed")
		}
	})

	t.Run("nested panic rolls back the savepoint", func(t *testing.T) {
		outer, inner := phone(), phone()
		must(t, db.InTx(ctx, func(tx *store.DB) error {
			if _, err := tx.CreateAccount(ctx, outer); err != nil {
				return err
			}
			func() {
				defer func() { _ = recover() }()
				_ = tx.InTx(ctx, func(in *store.DB) error {
					if _, err := in.CreateAccount(ctx, inner); err != nil {
						t.Error(err)
					}
					panic("inner")
				})
			}()
			return nil
		}))
		if !exists(t, outer) || exists(t, inner) {
			t.Fatalf("outer kept = %v (want true), inner kept = %v (want false)", exists(t, outer), exists(t, inner))
		}
	})
}

func TestInTxSavepointKeepsTestTransactionUsable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.NewTx(t)
	a := mustAccount(t, db)
	err := db.InTx(ctx, func(tx *store.DB) error {
		_, err := tx.CreateAccount(ctx, a.Phone)
		return err
	})
	wantCode(t, err, hoard.ECONFLICT)
	// Without the savepoint this would fail with "current transaction is
	// aborted".
	got, err := db.FindAccountByID(ctx, a.ID)
	must(t, err)
	if got.Phone != a.Phone {
		t.Fatalf("phone = %q", got.Phone)
	}
}

func TestNotify(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.NewDB(t)
	conn, err := db.Pool().Acquire(ctx)
	must(t, err)
	defer conn.Release()
	_, err = conn.Exec(ctx, "LISTEN hoard_test")
	must(t, err)

	wait := func(d time.Duration) (*pgconn.Notification, error) {
		wctx, cancel := context.WithTimeout(ctx, d)
		defer cancel()
		return conn.Conn().WaitForNotification(wctx)
	}
	none := func(t *testing.T, when string) {
		t.Helper()
		if n, err := wait(150 * time.Millisecond); err == nil {
			t.Fatalf("%s: got notification %q", when, n.Payload)
		} else if !errors.Is(err, context.DeadlineExceeded) && !pgconn.Timeout(err) {
			t.Fatalf("%s: wait: %v", when, err)
		}
	}

	// Inside a transaction: nothing before the commit, delivered after.
	must(t, db.InTx(ctx, func(tx *store.DB) error {
		if err := tx.Notify(ctx, "hoard_test", `{"id":1}`); err != nil {
			return err
		}
		none(t, "before commit")
		return nil
	}))
	n, err := wait(5 * time.Second)
	must(t, err)
	if n.Channel != "hoard_test" || n.Payload != `{"id":1}` {
		t.Fatalf("notification = %s %q", n.Channel, n.Payload)
	}

	// A rolled-back transaction never notifies.
	err = db.InTx(ctx, func(tx *store.DB) error {
		if err := tx.Notify(ctx, "hoard_test", "rolled back"); err != nil {
			return err
		}
		return errors.New("abort")
	})
	if err == nil {
		t.Fatal("InTx did not return fn's error")
	}
	none(t, "after rollback")

	// Outside a transaction it is delivered at once; other channels are
	// not heard.
	must(t, db.Notify(ctx, "hoard_other", "elsewhere"))
	must(t, db.Notify(ctx, "hoard_test", "direct"))
	n, err = wait(5 * time.Second)
	must(t, err)
	if n.Payload != "direct" {
		t.Fatalf("payload = %q, want direct", n.Payload)
	}
}

func TestNotifyError(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	for name, call := range map[string]func(tx *store.DB) error{
		"empty channel":    func(tx *store.DB) error { return tx.Notify(ctx, "", "x") },
		"payload too long": func(tx *store.DB) error { return tx.Notify(ctx, "hoard_test", strings.Repeat("x", 9000)) },
	} {
		err := savepoint(db, call)
		if err == nil || !strings.Contains(err.Error(), "notify") {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}

func TestErrorMapping(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.NewTx(t)
	acc := mustAccount(t, db)
	ch := mustChannel(t, db)
	tests := []struct {
		name   string
		call   func(tx *store.DB) error
		code   string
		pgCode string // "" when the error does not come from PostgreSQL
		op     string
	}{
		{"unique violation", func(tx *store.DB) error { _, err := tx.CreateAccount(ctx, acc.Phone); return err },
			hoard.ECONFLICT, "23505", "create account"},
		{"foreign key violation", func(tx *store.DB) error {
			_, err := tx.UpsertChannelMap(ctx, -1, ch.ID, 1, hoard.MapReader)
			return err
		}, hoard.EINVALID, "23503", "upsert channel map"},
		{"check violation", func(tx *store.DB) error { return tx.SetAccountAuthState(ctx, acc.ID, "BOGUS", "") },
			hoard.EINVALID, "23514", "set account auth state"},
		{"not null violation", func(tx *store.DB) error { return tx.SaveMessengerSession(ctx, "k", nil) },
			hoard.EINVALID, "23502", "save messenger session"},
		{"invalid byte sequence", func(tx *store.DB) error {
			_, _, err := tx.FindIngestDuplicate(ctx, ch.ID, nil, nil, "evil\x00nul.stl", 10)
			return err
		}, hoard.EINVALID, "22021", "find duplicate by name_and_size"},
		{"index entry too large", func(tx *store.DB) error {
			// 3,000 distinct CJK characters: 9,000 bytes that do not
			// compress, over a b-tree entry's 2,704.
			var b strings.Builder
			for i := range 3000 {
				b.WriteRune(rune(0x4E00 + i*7919%20000))
			}
			return tx.UpsertChannel(ctx, &hoard.Channel{PlatformID: 77, Username: b.String()})
		}, hoard.EINVALID, "54000", "upsert channel"},
		{"missing row", func(tx *store.DB) error { _, err := tx.FindAccountByID(ctx, -1); return err },
			hoard.ENOTFOUND, "", "find account"},
		{"no row updated", func(tx *store.DB) error { return tx.SetAccountActive(ctx, -1, true) },
			hoard.ENOTFOUND, "", "set account active"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := savepoint(db, tt.call)
			wantCode(t, err, tt.code)
			if !strings.Contains(err.Error(), tt.op) {
				t.Errorf("error %q does not name the operation %q", err, tt.op)
			}
			var pgErr *pgconn.PgError
			if tt.pgCode != "" && (!errors.As(err, &pgErr) || pgErr.Code != tt.pgCode) {
				t.Errorf("cause = %v, want PostgreSQL error %s", err, tt.pgCode)
			}
		})
	}
}
