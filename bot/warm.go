package bot

import (
	"context"
	"fmt"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
)

// warmQuery is what WarmConnection searches for: any word plans the
// statements of a one-word search.
const warmQuery = "model"

// WarmConnection is store.Options.Warm for a process that answers
// commands: on a new connection it runs the statements answering a
// /search runs (claim the update, find the link, search, keep the page,
// reserve a rate slot) in the transaction store rolls back, with keys no
// update or limit uses, so that the first commands the connection serves
// are not the ones planned with cold caches. It returns the first error.
func WarmConnection(ctx context.Context, tx *store.DB) error {
	// The warm-up's own keys: no other transaction waits on its rows.
	key := newToken()
	if _, err := tx.ClaimBotUpdate(ctx, store.UpdateMessage, 0, -time.Now().UnixNano(), 0); err != nil {
		return fmt.Errorf("warm: %w", err)
	}
	if _, err := tx.FindMessengerLinkByPlatformUser(ctx, 0); err != nil && hoard.ErrorCode(err) != hoard.ENOTFOUND {
		return fmt.Errorf("warm: %w", err)
	}
	p := store.BotSearchPage{Token: key, Query: warmQuery, Cursors: []*store.SearchCursor{nil}}
	if _, err := tx.SearchPackages(ctx, pageQuery(&p, 0)); err != nil {
		return fmt.Errorf("warm: %w", err)
	}
	if err := tx.CreateBotSearchPage(ctx, p, searchTTL); err != nil {
		return fmt.Errorf("warm: %w", err)
	}
	if _, err := tx.ReserveRateN(ctx, "warm:"+key, 1, 1, 1); err != nil {
		return fmt.Errorf("warm: %w", err)
	}
	return nil
}
