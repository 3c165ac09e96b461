package web

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"time"

	"github.com/hoard/hoard"
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

// LinkCodeHash is what is stored for a link code: the SHA-256 of the code
// in upper case, so the table never holds a usable code. The bot hashes what
// the user sends the same way.
func LinkCodeHash(code string) string {
	sum := sha256.Sum256([]byte(strings.ToUpper(strings.TrimSpace(code))))
	return hex.EncodeToString(sum[:])
}

type linkCard struct {
	Link      *hoard.MessengerLink
	Code      string
	ExpiresAt time.Time
	DeepLink  string
	Bot       string
}

// settingsData is the settings page: the messenger link card, the ways to
// sign in, and the password.
type settingsData struct {
	Card   linkCard
	SignIn signInCard
}

func (s *Server) settingsPage(r *http.Request, card linkCard) (page, error) {
	link, err := s.deps.DB.FindMessengerLink(r.Context(), userFrom(r.Context()).ID)
	if err != nil && hoard.ErrorCode(err) != hoard.ENOTFOUND {
		return page{}, err
	}
	card.Link, card.Bot = link, s.deps.BotUsername
	signIn, err := s.signInCard(r.Context(), userFrom(r.Context()))
	if err != nil {
		return page{}, err
	}
	return page{Title: "Settings", Data: settingsData{Card: card, SignIn: signIn}}, nil
}

// handleGenerateLinkCode is generateMessengerLinkCode: a one-time code with
// its expiry and, when BOT_USERNAME is set, the t.me deep link that sends
// it to the bot.
func (s *Server) handleGenerateLinkCode(w http.ResponseWriter, r *http.Request) error {
	code, err := NewLinkCode()
	if err != nil {
		return err
	}
	expires := time.Now().Add(linkCodeTTL)
	if err := s.deps.DB.CreateLinkCode(r.Context(), userFrom(r.Context()).ID, LinkCodeHash(code), expires); err != nil {
		return err
	}
	card := linkCard{Code: code, ExpiresAt: expires}
	if s.deps.BotUsername != "" {
		card.DeepLink = "https://t.me/" + s.deps.BotUsername + "?start=link_" + code
	}
	if wantsJSON(r) {
		writeJSON(w, http.StatusOK, map[string]any{"code": code, "expires_at": expires.UTC().Format(time.RFC3339), "deep_link": card.DeepLink})
		return nil
	}
	p, err := s.settingsPage(r, card)
	if err != nil {
		return err
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
