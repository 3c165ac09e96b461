package web

import (
	"context"
	"crypto/rand"
	"net/http"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
)

// Link codes: 8 characters without look-alikes, valid for 10 minutes.
const (
	linkCodeAlphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
	linkCodeLen      = 8
	linkCodeTTL      = 10 * time.Minute
)

// NewLinkCode returns a random one-time link code.
func NewLinkCode() (string, error) {
	b := make([]byte, linkCodeLen)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	for i := range b {
		b[i] = linkCodeAlphabet[int(b[i])%len(linkCodeAlphabet)]
	}
	return string(b), nil
}

type linkCard struct {
	Link      *hoard.MessengerLink
	Code      string
	ExpiresAt time.Time
	DeepLink  string
	Bot       string
}

// settingsData is the settings page: the messenger link card, the user's
// subscriptions and deliveries, the ways to sign in, the app tokens, and
// the password form.
type settingsData struct {
	Card          linkCard
	Subscriptions []hoard.BotSubscription
	Sends         []hoard.BotSendRequest
	MaxPattern    int
	SignIn        signInCard
	Tokens        tokensCard
}

func (s *Server) settingsPage(r *http.Request, card linkCard) (page, error) {
	ctx := r.Context()
	me := userFrom(ctx)
	link, err := s.deps.DB.FindMessengerLink(ctx, me.ID)
	if err != nil && hoard.ErrorCode(err) != hoard.ENOTFOUND {
		return page{}, err
	}
	card.Link, card.Bot = link, s.botUsername(ctx)
	if card.Code != "" && card.Bot != "" {
		card.DeepLink = "https://t.me/" + card.Bot + "?start=link_" + card.Code
	}
	subs, err := s.deps.DB.ListSubscriptions(ctx, me.ID)
	if err != nil {
		return page{}, err
	}
	sends, err := s.deps.DB.ListBotSendRequests(ctx, me.ID, 20)
	if err != nil {
		return page{}, err
	}
	signIn, err := s.signInCard(ctx, me)
	if err != nil {
		return page{}, err
	}
	tokens, err := s.deps.DB.ListAppTokens(ctx, me.ID)
	if err != nil {
		return page{}, err
	}
	return page{Title: "Settings", Data: settingsData{Card: card, Subscriptions: subs, Sends: sends,
		MaxPattern: store.MaxSubscriptionPattern, SignIn: signIn,
		Tokens: tokensCard{Tokens: tokens, Max: store.MaxAppTokensPerUser, MaxName: store.MaxAppTokenName}}}, nil
}

// botUsername is the bot's username: BOT_USERNAME, or the one the running
// bot reported ("" when neither is known).
func (s *Server) botUsername(ctx context.Context) string {
	if s.deps.BotUsername != "" {
		return s.deps.BotUsername
	}
	st, err := s.deps.DB.FindBotStatus(ctx)
	if err != nil {
		return ""
	}
	return st.Username
}

// handleGenerateLinkCode is generateMessengerLinkCode: a one-time code with
// its expiry and, when the bot's username is known, the t.me deep link that
// sends it to the bot.
func (s *Server) handleGenerateLinkCode(w http.ResponseWriter, r *http.Request) error {
	code, err := NewLinkCode()
	if err != nil {
		return err
	}
	expires := time.Now().Add(linkCodeTTL)
	if err := s.deps.DB.CreateLinkCode(r.Context(), userFrom(r.Context()).ID, hoard.LinkCodeHash(code), expires); err != nil {
		return err
	}
	p, err := s.settingsPage(r, linkCard{Code: code, ExpiresAt: expires})
	if err != nil {
		return err
	}
	if wantsJSON(r) {
		writeJSON(w, http.StatusOK, map[string]any{"code": code, "expires_at": expires.UTC().Format(time.RFC3339),
			"deep_link": p.Data.(settingsData).Card.DeepLink})
		return nil
	}
	return s.render(w, r, http.StatusOK, "settings", p)
}

// handleUnlinkMessenger is unlinkMessenger.
func (s *Server) handleUnlinkMessenger(w http.ResponseWriter, r *http.Request) error {
	if err := s.deps.DB.DeleteMessengerLink(r.Context(), userFrom(r.Context()).ID); err != nil {
		return err
	}
	return redirect(w, r, "/settings?done=unlinked")
}

// handleSubscribe adds a subscription (`pattern`) from Settings; the bot
// tells the linked account about new matching packages.
func (s *Server) handleSubscribe(w http.ResponseWriter, r *http.Request) error {
	if _, err := s.deps.DB.CreateSubscription(r.Context(), userFrom(r.Context()).ID, r.PostFormValue("pattern")); err != nil {
		return err
	}
	return redirect(w, r, "/settings?done=subscribed#subscriptions")
}

// handleUnsubscribe removes one of the caller's subscriptions.
func (s *Server) handleUnsubscribe(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	if err := s.deps.DB.DeleteSubscriptionByID(r.Context(), userFrom(r.Context()).ID, id); err != nil {
		return notFoundAs(err, "No such subscription.")
	}
	return redirect(w, r, "/settings?done=unsubscribed#subscriptions")
}

// isLinked reports whether the signed-in user has a messenger link (send
// buttons show only then).
func (s *Server) isLinked(r *http.Request) bool {
	u := userFrom(r.Context())
	if u == nil {
		return false
	}
	if sess := sessionFrom(r.Context()); sess != nil && sess.UserID == u.ID {
		return sess.UserLinked // looked up with the session
	}
	_, err := s.deps.DB.FindMessengerLink(r.Context(), u.ID)
	if err != nil && hoard.ErrorCode(err) != hoard.ENOTFOUND {
		s.deps.Logger.Warn("read messenger link", "err", err)
	}
	return err == nil
}
