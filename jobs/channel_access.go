package jobs

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/store"
)

// Accounts gives the messenger client of a signed-in account. Clients are
// long-lived and shared by every job of the process.
type Accounts interface {
	Account(ctx context.Context, accountID int64) (messenger.Account, error)
}

// errNoAccounts is returned by ingestion jobs of a worker built without
// messenger clients.
var errNoAccounts = hoard.Errorf(hoard.EINTERNAL, "no messenger clients configured: the worker cannot reach the messaging platform")

// channelAccess is one account's way into a channel, resolved for talking
// to the platform: the channel, the account's map of it (watermark,
// access hash), the account's client and the platform's view of the
// channel (peer). It stands for a source channel a scan or download reads
// and for the destination channel hoard posts to or reads back alike,
// which is why it is named for the access and not for either side.
type channelAccess struct {
	m       *hoard.ChannelMap
	channel *hoard.Channel
	account messenger.Account
	peer    messenger.Channel
}

// platform reaches channels through the signed-in accounts' clients: it
// resolves a channel map, the destination's writer or a reader of it into a
// channelAccess. Reads only; it writes nothing.
type platform struct {
	db       *store.DB
	log      *slog.Logger
	accounts Accounts
}

// resolveMap loads a channel map, its channel and its account's client.
func (d *platform) resolveMap(ctx context.Context, mapID int64) (*channelAccess, error) {
	m, err := d.db.FindChannelMap(ctx, mapID)
	if err != nil {
		return nil, err
	}
	ch, err := d.db.FindChannelByID(ctx, m.ChannelID)
	if err != nil {
		return nil, err
	}
	return d.accessThrough(ctx, ch, m)
}

// accessThrough builds the channelAccess of ch through map m: the client
// of m's account (account's errors as they are) and the platform's view of
// ch through m. Every resolver of a channelAccess ends here, so that they
// cannot build it differently.
func (d *platform) accessThrough(ctx context.Context, ch *hoard.Channel, m *hoard.ChannelMap) (*channelAccess, error) {
	acc, err := d.account(ctx, m.AccountID)
	if err != nil {
		return nil, err
	}
	return &channelAccess{m: m, channel: ch, account: acc, peer: peerOf(ch, m)}, nil
}

// account is the messenger client of accountID; errNoAccounts when the
// worker was built without clients, so that a job says why it cannot reach
// the platform instead of failing on a nil client.
func (d *platform) account(ctx context.Context, accountID int64) (messenger.Account, error) {
	if d.accounts == nil {
		return nil, errNoAccounts
	}
	acc, err := d.accounts.Account(ctx, accountID)
	if err != nil {
		return nil, fmt.Errorf("messenger client of account %d: %w", accountID, err)
	}
	return acc, nil
}

// peerOf is the platform's view of a channel through one account's map.
func peerOf(ch *hoard.Channel, m *hoard.ChannelMap) messenger.Channel { return messenger.PeerOf(ch, m) }

// writer resolves the destination channel and the map of the account that
// posts to it, preferring preferAccountID.
func (d *platform) writer(ctx context.Context, preferAccountID int64) (*channelAccess, error) {
	dest, err := d.db.FindDestinationChannel(ctx)
	if err != nil {
		return nil, fmt.Errorf("destination channel: %w", err)
	}
	m, err := d.db.FindWriterMap(ctx, dest.ID, preferAccountID)
	if err != nil {
		return nil, fmt.Errorf("destination channel %q has no signed-in writer account: %w", dest.Title, err)
	}
	return d.accessThrough(ctx, dest, m)
}

// writerOf resolves the destination map of one account (the one a transfer
// was planned for).
func (d *platform) writerOf(ctx context.Context, destChannelID, accountID int64) (*channelAccess, error) {
	dest, err := d.db.FindChannelByID(ctx, destChannelID)
	if err != nil {
		return nil, fmt.Errorf("destination channel: %w", err)
	}
	maps, err := d.db.ListChannelMaps(ctx, destChannelID)
	if err != nil {
		return nil, err
	}
	for i := range maps {
		if maps[i].AccountID == accountID {
			return d.accessThrough(ctx, dest, &maps[i])
		}
	}
	return nil, hoard.Errorf(hoard.ENOTFOUND, "account %d no longer writes to destination %q", accountID, dest.Title)
}

// destinationReader is a signed-in account's view of destination channel
// destID, for reading what hoard published there (rebuild, previews).
// EINVALID, with a message for the user, when the channel is gone or no
// signed-in account can read it.
func (d *platform) destinationReader(ctx context.Context, destID int64) (*channelAccess, error) {
	dest, err := d.db.FindChannelByID(ctx, destID)
	if hoard.ErrorCode(err) == hoard.ENOTFOUND || destID == 0 {
		return nil, hoard.Errorf(hoard.EINVALID, "The destination channel no longer exists.")
	}
	if err != nil {
		return nil, fmt.Errorf("destination channel: %w", err)
	}
	m, err := d.db.FindWriterMap(ctx, dest.ID, 0)
	if hoard.ErrorCode(err) == hoard.ENOTFOUND {
		return nil, hoard.Errorf(hoard.EINVALID, "No signed-in account can read the destination channel %q.", dest.Title)
	}
	if err != nil {
		return nil, err
	}
	return d.accessThrough(ctx, dest, m)
}
