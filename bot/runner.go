package bot

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hoard/hoard"
)

// The answering lease: the holder renews it every leaseEvery and answers
// commands; a standby tries as often, and takes over once the holder has
// not renewed for leaseTTL (a process that died).
const (
	leaseName  = "bot"
	leaseTTL   = 10 * time.Second
	leaseEvery = time.Second
	// setupEvery is how often the holder checks that it can read the
	// destination channels; setupRetry how soon it checks again when it
	// cannot (an account may have signed in meanwhile); statusEvery how
	// often it writes the status row.
	setupEvery  = 5 * time.Minute
	setupRetry  = 10 * time.Second
	statusEvery = 5 * time.Second
	// handlerTimeout bounds answering one update. A lost lease does not
	// cut an answer short: the answer's transaction decides who answered.
	handlerTimeout = time.Minute
)

// Run answers commands while this process holds the answering lease and
// stands by while another does, until ctx ends; then it gives the lease
// up. It sets the bot's command list once, and while holding the lease it
// writes the bot's status row and checks (every few minutes) that the bot
// can read every destination channel, making it an administrator through
// Deps.AddToChannel when it cannot.
func (s *Service) Run(ctx context.Context) error {
	self, err := s.deps.Bot.Self(ctx)
	if err != nil {
		s.saveStatus(ctx, hoard.BotStatus{ErrorMessage: "The bot is not signed in: " + hoard.ErrorMessage(err)})
		return fmt.Errorf("bot: self: %w", err)
	}
	s.mu.Lock()
	s.self, s.started = self, time.Now()
	s.mu.Unlock()
	if err := s.deps.Bot.SetCommands(ctx, Commands); err != nil {
		s.deps.Logger.Warn("bot: set the command list", "err", err)
	}
	s.deps.Logger.Info("bot: ready", "username", self.Username, "process", s.id)

	var l *listener
	defer func() {
		l.stop()
		release, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := s.deps.DB.ReleaseLease(release, leaseName, s.id); err != nil {
			s.deps.Logger.Warn("bot: release the answering lease", "err", err)
		}
	}()
	var renewed, checked, reported time.Time
	var setup setupState
	tick := time.NewTicker(leaseEvery)
	defer tick.Stop()
	for {
		held, err := s.deps.DB.AcquireLease(ctx, leaseName, s.id, leaseTTL)
		switch {
		case err != nil:
			s.deps.Logger.Warn("bot: renew the answering lease", "err", err)
			held = time.Since(renewed) < leaseTTL-2*leaseEvery // keep answering only while surely still ours
		case held:
			renewed = time.Now()
		}
		if held && l.ended() {
			if l != nil {
				s.deps.Logger.Warn("bot: listening stopped; listening again", "err", l.err)
			} else {
				s.deps.Logger.Info("bot: answering commands", "process", s.id)
			}
			l = s.listen(ctx)
		} else if !held && l != nil {
			s.deps.Logger.Info("bot: another process answers commands now", "process", s.id)
			l.stop()
			l = nil
		}
		if held {
			if time.Since(checked) >= setupEvery || (!setup.ok() && time.Since(checked) >= setupRetry) {
				setup, checked = s.checkSetup(ctx), time.Now()
				reported = time.Time{} // tell at once
			}
			if time.Since(reported) >= statusEvery {
				s.saveStatus(ctx, hoard.BotStatus{CanReadDest: setup.canRead, SetupHint: setup.hint})
				reported = time.Now()
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// listener is a running Bot.Listen.
type listener struct {
	cancel context.CancelFunc
	done   chan struct{}
	err    error
}

func (s *Service) listen(ctx context.Context) *listener {
	lctx, cancel := context.WithCancel(ctx)
	l := &listener{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(l.done)
		l.err = s.deps.Bot.Listen(lctx, s)
		if l.err == nil && lctx.Err() == nil {
			l.err = errors.New("the bot's listener returned without an error")
		}
	}()
	return l
}

// ended reports whether there is no listener running (none, or it ended).
func (l *listener) ended() bool {
	if l == nil {
		return true
	}
	select {
	case <-l.done:
		return true
	default:
		return false
	}
}

func (l *listener) stop() {
	if l == nil {
		return
	}
	l.cancel()
	<-l.done
}

// setupState is what checkSetup found.
type setupState struct {
	canRead *bool
	hint    string
}

// ok reports that the bot can read every destination.
func (s setupState) ok() bool { return s.canRead != nil && *s.canRead }

// checkSetup checks that the bot can read every destination channel (it
// copies packages from them), asks Deps.AddToChannel to make it an
// administrator of one it cannot, and says what an administrator must do
// when that fails.
func (s *Service) checkSetup(ctx context.Context) setupState {
	dests, err := s.deps.DB.ListChannels(ctx, hoard.ChannelDestination)
	if err != nil || len(dests) == 0 {
		return setupState{}
	}
	all := true
	var hint string
	for _, d := range dests {
		ok, err := s.deps.Bot.CanRead(ctx, d.PlatformID)
		if err == nil && !ok && s.deps.AddToChannel != nil {
			if aerr := s.deps.AddToChannel(ctx, d, s.username()); aerr != nil {
				s.deps.Logger.Warn("bot: could not make the bot an administrator of a destination", "channel", d.Title, "err", aerr)
				hint = hoard.ErrorMessage(aerr)
			} else {
				ok, err = s.deps.Bot.CanRead(ctx, d.PlatformID)
			}
		}
		if err != nil {
			s.deps.Logger.Warn("bot: check a destination channel", "channel", d.Title, "err", err)
			return setupState{}
		}
		if !ok {
			all = false
			if hint == "" {
				hint = fmt.Sprintf("The bot @%s cannot read the destination channel “%s”, so it cannot send its packages: "+
					"add @%s to that channel as an administrator (it needs no further rights).", s.username(), d.Title, s.username())
			}
		}
	}
	return setupState{canRead: &all, hint: hint}
}

// saveStatus writes the bot's status row with this process's view.
func (s *Service) saveStatus(ctx context.Context, st hoard.BotStatus) {
	s.mu.Lock()
	st.BotUserID, st.Username, st.SignedIn, st.Holder = s.self.ID, s.self.Username, s.self.ID != 0, s.id
	if !s.started.IsZero() {
		started := s.started
		st.StartedAt = &started
	}
	if !s.lastUpdate.IsZero() {
		last := s.lastUpdate
		st.LastUpdateAt = &last
	}
	s.mu.Unlock()
	n, err := s.deps.DB.CountQueuedBotSends(ctx)
	if err == nil {
		st.QueueLength = n
		err = s.deps.DB.SaveBotStatus(ctx, st)
	}
	if err != nil && ctx.Err() == nil {
		s.deps.Logger.Warn("bot: save status", "err", err)
	}
}
