package telegram

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/gotd/td/bin"
	"github.com/gotd/td/telegram"
	"github.com/gotd/td/telegram/auth"
	"github.com/gotd/td/tg"
	"github.com/gotd/td/tgerr"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/messenger"
)

// conn is a running gotd client: api for ordinary calls, pools for file
// parts over a connection pool per data centre. Both go through the
// account's limiter and flood handling.
type conn struct {
	client *telegram.Client
	api    *tg.Client
	pools  *dcPools
	raw    tg.Invoker
	log    *slog.Logger
	cancel context.CancelFunc
	done   chan error

	closeOnce sync.Once
	closeErr  error
}

// start runs a gotd client in the background until close. setup runs once
// connected (before start returns); if it returns an error the client stops.
func start(ctx context.Context, cfg *Config, opts telegram.Options, setup func(ctx context.Context, c *conn) error) (*conn, error) {
	client := telegram.NewClient(cfg.AppID, cfg.AppHash, opts)
	c := &conn{client: client, log: cfg.Logger, done: make(chan error, 1)}
	lim := &limitedInvoker{next: client, cfg: cfg}
	c.raw = lim
	c.api = tg.NewClient(lim)
	runCtx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	ready := make(chan error, 1)
	go func() {
		err := client.Run(runCtx, func(ctx context.Context) error {
			c.pools = newDCPools(client, cfg)
			defer c.pools.close()
			if setup != nil {
				if err := setup(ctx, c); err != nil {
					return err
				}
			}
			ready <- nil
			<-ctx.Done()
			return ctx.Err()
		})
		if errors.Is(err, context.Canceled) {
			err = nil
		}
		select {
		case ready <- fmt.Errorf("telegram: connect: %w", errOr(err)):
		default:
		}
		c.done <- err
	}()
	select {
	case err := <-ready:
		if err != nil {
			cancel()
			return nil, mapErr("connect", err)
		}
		return c, nil
	case <-ctx.Done():
		cancel()
		<-c.done
		return nil, ctx.Err()
	}
}

func errOr(err error) error {
	if err == nil {
		return errors.New("client stopped")
	}
	return err
}

// close stops the client and waits for it; later calls return the same
// result.
func (c *conn) close() error {
	c.closeOnce.Do(func() {
		c.cancel()
		c.closeErr = <-c.done
	})
	return c.closeErr
}

// limitedInvoker applies the shared rate limiter and flood handling: a
// FLOOD_WAIT up to MaxInlineFloodWait is slept through and the very same
// request retried (a transfer part resumes in place); a longer one becomes a
// *messenger.FloodWait, which no gotd helper mistakes for a retryable flood.
type limitedInvoker struct {
	next     tg.Invoker
	cfg      *Config
	noInline bool // return every flood wait as *messenger.FloodWait
}

// Invoke implements tg.Invoker. Every attempt is told to the
// configuration's Observer (as the Limiter counts it), with its flood wait
// or its file bytes.
func (l *limitedInvoker) Invoke(ctx context.Context, in bin.Encoder, out bin.Decoder) error {
	method := methodName(in)
	for attempt := 0; ; attempt++ {
		l.cfg.Observer.Request(method)
		if err := l.cfg.Limiter.Wait(ctx); err != nil {
			return err
		}
		err := l.next.Invoke(ctx, in, out)
		d, ok := tgerr.AsFloodWait(err)
		if !ok {
			if err == nil {
				observeBytes(l.cfg.Observer, in, out)
			} else if l.cfg.OnSignedOut != nil && signedOut(err) {
				l.cfg.OnSignedOut(err)
			}
			return err
		}
		l.cfg.Observer.FloodWait(method, d)
		fw := &messenger.FloodWait{RetryAfter: d, Premium: tgerr.Is(err, "FLOOD_PREMIUM_WAIT"), Method: method}
		if l.noInline || d > l.cfg.MaxInlineFloodWait || attempt >= 5 {
			return fw
		}
		l.cfg.Logger.Info("telegram: flood wait, retrying in place", "method", fw.Method, "wait", d)
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
}

// observeBytes tells o the file bytes a successful request moved: a
// download chunk's answer, an upload part's request.
func observeBytes(o messenger.RequestObserver, in bin.Encoder, out bin.Decoder) {
	switch req := in.(type) {
	case *tg.UploadSaveFilePartRequest:
		o.Uploaded(int64(len(req.Bytes)))
	case *tg.UploadSaveBigFilePartRequest:
		o.Uploaded(int64(len(req.Bytes)))
	case *tg.UploadGetFileRequest:
		if box, ok := out.(*tg.UploadFileBox); ok {
			if f, ok := box.File.(*tg.UploadFile); ok {
				o.Downloaded(int64(len(f.Bytes)))
			}
		}
	}
}

func methodName(in bin.Encoder) string {
	if t, ok := in.(interface{ TypeName() string }); ok {
		return t.TypeName()
	}
	return fmt.Sprintf("%T", in)
}

// signedOut reports an answer that the session is not signed in (any
// more): 401, or 406 AUTH_KEY_DUPLICATED.
func signedOut(err error) bool {
	return auth.IsUnauthorized(err) || tgerr.Is(err, "AUTH_KEY_DUPLICATED")
}

// Errors of the bot's requests that the port has no sentinel for.
var (
	errQueryExpired = &hoard.Error{Code: hoard.ENOTFOUND, Message: "The button press expired; press it again."}
	errRefused      = &hoard.Error{Code: hoard.EINVALID, Message: "The messaging platform refused the message."}
)

// mapErr turns platform errors into the port's typed errors, keeping the
// cause, with op as context.
func mapErr(op string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s: %w", op, err)
	}
	if fw, ok := messenger.AsFloodWait(err); ok {
		return fmt.Errorf("%s: %w", op, fw)
	}
	var sentinel error
	switch {
	case tgerr.Is(err, "CHANNEL_PRIVATE", "CHANNEL_INVALID", "CHAT_FORBIDDEN", "USER_BANNED_IN_CHANNEL",
		"CHANNEL_PUBLIC_GROUP_NA", "CHAT_WRITE_FORBIDDEN", "CHAT_ADMIN_REQUIRED"):
		sentinel = messenger.ErrAccessLost
	case tgerr.Is(err, "USERNAME_NOT_OCCUPIED", "USERNAME_INVALID", "INVITE_HASH_EXPIRED", "INVITE_HASH_INVALID",
		"MESSAGE_ID_INVALID", "FILE_ID_INVALID", "PEER_ID_INVALID", "MEDIA_INVALID"):
		sentinel = messenger.ErrNotFound
	case tgerr.Is(err, "SESSION_PASSWORD_NEEDED") || errors.Is(err, auth.ErrPasswordAuthNeeded):
		sentinel = messenger.ErrPasswordNeeded
	case tgerr.Is(err, "PHONE_CODE_INVALID", "PHONE_CODE_EXPIRED", "PHONE_CODE_EMPTY", "PASSWORD_HASH_INVALID") ||
		errors.Is(err, auth.ErrPasswordInvalid):
		sentinel = messenger.ErrInvalidCode
	case auth.IsUnauthorized(err) || tgerr.Is(err, "AUTH_KEY_UNREGISTERED", "SESSION_REVOKED", "SESSION_EXPIRED",
		"USER_DEACTIVATED", "USER_DEACTIVATED_BAN", "AUTH_KEY_INVALID", "AUTH_KEY_DUPLICATED", "AUTH_KEY_PERM_EMPTY"):
		// 406 AUTH_KEY_DUPLICATED: the key was used from two places at
		// once and the platform ended it; it is signed out for good.
		sentinel = messenger.ErrUnauthorized
	case tgerr.Is(err, "CHAT_FORWARDS_RESTRICTED"):
		sentinel = messenger.ErrProtected
	case tgerr.Is(err, "FILE_PARTS_INVALID"):
		sentinel = messenger.ErrTooLarge
	case tgerr.Is(err, "USER_IS_BLOCKED", "INPUT_USER_DEACTIVATED", "YOU_BLOCKED_USER"):
		sentinel = messenger.ErrBlocked
	case tgerr.Is(err, "RANDOM_ID_DUPLICATE"):
		sentinel = messenger.ErrDuplicate
	case tgerr.Is(err, "QUERY_ID_INVALID"):
		sentinel = errQueryExpired
	case tgerr.Is(err, "MESSAGE_TOO_LONG", "MEDIA_CAPTION_TOO_LONG", "MESSAGE_EMPTY", "BUTTON_DATA_INVALID",
		"BUTTON_URL_INVALID", "BUTTON_TEXT_INVALID", "ENTITY_BOUNDS_INVALID", "BOT_COMMAND_INVALID",
		"BOT_COMMAND_DESCRIPTION_INVALID", "START_PARAM_INVALID"):
		sentinel = errRefused
	default:
		return fmt.Errorf("%s: %w", op, err)
	}
	return fmt.Errorf("%s: %w: %w", op, sentinel, err)
}
