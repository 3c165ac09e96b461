package demo

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/messenger/emulator"
	"github.com/hoard/hoard/store"
)

// AccountRow returns the id of the account row of the emulator's phone
// number, creating the row on the demo's first start.
func AccountRow(ctx context.Context, db *store.DB, phone string) (int64, error) {
	acc, err := db.FindAccountByPhone(ctx, phone)
	if hoard.ErrorCode(err) == hoard.ENOTFOUND {
		acc, err = db.CreateAccount(ctx, phone)
	}
	if err != nil {
		return 0, fmt.Errorf("demo: account row: %w", err)
	}
	return acc.ID, nil
}

// SignIn signs the account in with the emulator's login code (and the
// seed's password when the account has one), unless its session is signed
// in already, and records the account row's profile and state. A refused
// sign-in marks the row AuthFailed with the reason.
func SignIn(ctx context.Context, db *store.DB, accountID int64, acc messenger.Account, info emulator.Info, seed *emulator.Seed) (messenger.User, error) {
	ok, err := acc.Authorized(ctx)
	if err != nil {
		return messenger.User{}, fmt.Errorf("demo: account status: %w", err)
	}
	if !ok {
		if err := acc.SendCode(ctx, info.Phone); err != nil {
			return messenger.User{}, fmt.Errorf("demo: send login code: %w", err)
		}
		err := acc.SignIn(ctx, info.Code)
		if errors.Is(err, messenger.ErrPasswordNeeded) {
			err = acc.CheckPassword(ctx, seed.Account.Password)
		}
		if err != nil {
			_ = db.SetAccountAuthState(ctx, accountID, hoard.AuthFailed, hoard.ErrorMessage(err))
			return messenger.User{}, fmt.Errorf("demo: sign in: %w", err)
		}
	}
	self, err := acc.Self(ctx)
	if err != nil {
		return messenger.User{}, fmt.Errorf("demo: self: %w", err)
	}
	if err := db.SetAccountProfile(ctx, accountID, self.ID, self.FirstName, self.Premium); err != nil {
		return messenger.User{}, fmt.Errorf("demo: account profile: %w", err)
	}
	if err := db.SetAccountAuthState(ctx, accountID, hoard.AuthAuthenticated, ""); err != nil {
		return messenger.User{}, fmt.Errorf("demo: account state: %w", err)
	}
	return self, nil
}

// Channels sets the seed's channels up for the signed-in account: the
// destination as its writer, every seeded channel (joined first when the
// seed says the account is not a member) as an active source with its
// category. em is the in-process emulator, whose channels are found by id;
// nil for another process's, whose channels are found by username. A
// source that cannot be joined or found is logged and left out; the
// destination is required.
func Channels(ctx context.Context, db *store.DB, accountID int64, acc messenger.Account, em *emulator.Emulator, seed *emulator.Seed, log *slog.Logger) error {
	s := channelSetup{db: db, accountID: accountID, acc: acc, em: em}
	dest, err := s.find(ctx, seed.Destination.Title, seed.Destination.Username, true)
	if err == nil {
		err = s.link(ctx, dest, hoard.ChannelDestination, hoard.MapWriter, "")
	}
	if err != nil {
		return fmt.Errorf("demo: destination channel: %w", err)
	}
	for _, sc := range seed.Channels {
		if !sc.Joined {
			ref := messenger.ChannelRef{Username: sc.Username, InviteHash: sc.Invite}
			if _, status, err := acc.JoinChannel(ctx, ref); err != nil || status == messenger.RequestSent {
				log.Warn("demo: could not join a seeded channel", "channel", sc.Title, "status", status, "err", err)
				continue
			}
		}
		ch, err := s.find(ctx, sc.PlatformTitle(), sc.Username, false)
		if err == nil {
			err = s.link(ctx, ch, hoard.ChannelSource, hoard.MapReader, sc.Category)
		}
		if err != nil {
			log.Warn("demo: seeded channel not set up", "channel", sc.Title, "err", err)
		}
	}
	return nil
}

// channelSetup finds the seed's channels through the account and records
// them with the account's map.
type channelSetup struct {
	db        *store.DB
	accountID int64
	acc       messenger.Account
	em        *emulator.Emulator
}

// find reads a seeded channel: by id and the access hash the in-process
// emulator tells, or by username from another process's.
func (s channelSetup) find(ctx context.Context, title, username string, dest bool) (messenger.Channel, error) {
	if s.em == nil {
		if username == "" {
			return messenger.Channel{}, fmt.Errorf("channel %q has no username to find it by", title)
		}
		return s.acc.ResolveChannel(ctx, messenger.ChannelRef{Username: username})
	}
	id := s.em.ChannelID(title)
	if dest {
		id = s.em.DestinationID()
	}
	return s.acc.ChannelInfo(ctx, messenger.Channel{ID: id, AccessHash: s.em.AccountAccessHash(id)})
}

// link upserts the channel's row and the account's map to it.
func (s channelSetup) link(ctx context.Context, ch messenger.Channel, kind hoard.ChannelKind, role hoard.MapRole, category string) error {
	row := &hoard.Channel{PlatformID: ch.ID, Title: ch.Title, Username: ch.Username, Kind: kind, Category: category,
		IsActive: true, IsForum: ch.Forum, IsProtected: ch.Protected}
	if err := s.db.UpsertChannel(ctx, row); err != nil {
		return err
	}
	_, err := s.db.UpsertChannelMap(ctx, s.accountID, row.ID, ch.AccessHash, role)
	return err
}
