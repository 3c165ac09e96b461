// Package telegram implements the messenger port with gotd/td: the same code
// talks to the real platform in production and to messenger/emulator in
// tests and the demo. Connection options (DC list, resolver, public keys)
// come from configuration only: the real platform by default, or an emulator
// described by its info file.
package telegram

import (
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/gotd/td/telegram"
	"github.com/gotd/td/telegram/dcs"
	"github.com/gotd/td/tg"

	"github.com/hoard/hoard/messenger"
)

// Endpoint is a non-default MTProto endpoint (the emulator): the DC at
// Addr clients connect to first, every DC's address (DCs; the connected
// client learns them again from help.getConfig) and the RSA public keys.
type Endpoint struct {
	Addr       string
	DC         int
	DCs        []EmulatorDC
	PublicKeys []string // PEM
}

// EmulatorInfo is the emulator's info file: the endpoint plus the demo
// account's phone and login code, the bot's token and username, and the
// users who may talk to the bot (they sign in with the same code).
type EmulatorInfo struct {
	Addr        string         `json:"addr"`
	DC          int            `json:"dc"`
	DCs         []EmulatorDC   `json:"dcs,omitempty"`
	PublicKeys  []string       `json:"public_keys"`
	Phone       string         `json:"phone"`
	Code        string         `json:"code"`
	BotToken    string         `json:"bot_token"`
	BotUsername string         `json:"bot_username,omitempty"`
	Users       []EmulatorUser `json:"users,omitempty"`
}

// EmulatorDC is one DC of the emulator.
type EmulatorDC struct {
	ID   int    `json:"id"`
	Addr string `json:"addr"`
}

// EmulatorUser is a seeded user of the emulator.
type EmulatorUser struct {
	Phone     string `json:"phone"`
	Username  string `json:"username,omitempty"`
	FirstName string `json:"first_name,omitempty"`
}

// Endpoint returns the connection part of the info.
func (i EmulatorInfo) Endpoint() *Endpoint {
	return &Endpoint{Addr: i.Addr, DC: i.DC, DCs: i.DCs, PublicKeys: i.PublicKeys}
}

// LoadEmulatorInfo reads an emulator info file (JSON).
func LoadEmulatorInfo(path string) (EmulatorInfo, error) {
	var info EmulatorInfo
	data, err := os.ReadFile(path)
	if err != nil {
		return info, fmt.Errorf("emulator info: %w", err)
	}
	if err := json.Unmarshal(data, &info); err != nil {
		return info, fmt.Errorf("emulator info %s: %w", path, err)
	}
	if info.Addr == "" || len(info.PublicKeys) == 0 {
		return info, fmt.Errorf("emulator info %s: addr and public_keys are required", path)
	}
	return info, nil
}

// Config configures an Account or a Bot.
type Config struct {
	// AppID and AppHash are the API credentials (from the environment).
	AppID   int
	AppHash string
	// Endpoint selects a non-default endpoint; nil means the real platform.
	Endpoint *Endpoint
	// Sessions persists the session under SessionKey (required; wrap it in
	// messenger.EncryptedStore).
	Sessions   messenger.SessionStore
	SessionKey string
	// StateKey is where a bot keeps what is the bot's and not one auth
	// key's: its update state (StateKey+"/updates") and the access hashes
	// it learned (StateKey+"/peers"). Default SessionKey; bot processes
	// that each hold a session of their own share one StateKey.
	StateKey string
	// OnSignedOut, when set, is called (from a request's goroutine) with
	// the error of a request that found the session signed out: 401
	// AUTH_KEY_UNREGISTERED, SESSION_REVOKED…, or 406 AUTH_KEY_DUPLICATED
	// (the key was used from two places at once and the platform ended
	// it). Set it only on a client that was signed in.
	OnSignedOut func(err error)
	// Logger; default slog.Default(). Codes, passwords and tokens are never
	// logged.
	Logger *slog.Logger
	// Limiter is shared by every request of this account; default 10 req/s,
	// burst 5. A bot's default is four times BotLimits.Global with a burst
	// of BotLimits.Global: its messages are paced by Pacer, and answering
	// callbacks and catching up on updates must not queue behind them.
	Limiter *messenger.Limiter
	// Observer is told about every request and its file bytes (default:
	// nobody).
	Observer messenger.RequestObserver
	// MaxInlineFloodWait is the longest FLOOD_WAIT slept through in place
	// (transfer parts resume, never restart); longer ones return a
	// *messenger.FloodWait. Default 10 s.
	MaxInlineFloodWait time.Duration
	// StallTimeout aborts a download attempt whose chunk made no progress
	// for this long; the download resumes from the last good offset.
	// Default 30 s.
	StallTimeout time.Duration
	// Connections is the size of the transfer connection pool; default 4.
	Connections int
	// Pacer spaces the bot's messages (its per-chat and overall limits);
	// default an in-process messenger.MemoryPacer. Give every process of
	// one bot the same database-backed Pacer so that the limits hold
	// across them.
	Pacer messenger.Pacer
	// BotLimits are the rates the bot's messages are paced at; default
	// messenger.DefaultBotLimits.
	BotLimits messenger.BotLimits
	// SendTimeout bounds one attempt of a bot request that delivers
	// messages; an attempt whose answer does not arrive in time is sent
	// again with the same random ids (the platform delivers nothing twice).
	// Default 30 s.
	SendTimeout time.Duration
}

func (c *Config) setDefaults() error {
	if c.Sessions == nil || c.SessionKey == "" {
		return errors.New("telegram: Config.Sessions and SessionKey are required")
	}
	if c.StateKey == "" {
		c.StateKey = c.SessionKey
	}
	if c.AppID == 0 || c.AppHash == "" {
		if c.Endpoint == nil {
			return errors.New("telegram: AppID and AppHash are required")
		}
		c.AppID, c.AppHash = telegram.TestAppID, telegram.TestAppHash
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Limiter == nil {
		c.Limiter = messenger.NewLimiter(10, 5)
	}
	if c.Observer == nil {
		c.Observer = messenger.NoObserver{}
	}
	if c.MaxInlineFloodWait == 0 {
		c.MaxInlineFloodWait = 10 * time.Second
	}
	if c.StallTimeout == 0 {
		c.StallTimeout = 30 * time.Second
	}
	if c.Connections <= 0 {
		c.Connections = 4
	}
	if c.Pacer == nil {
		c.Pacer = messenger.NewMemoryPacer()
	}
	if c.BotLimits == (messenger.BotLimits{}) {
		c.BotLimits = messenger.DefaultBotLimits
	}
	if c.BotLimits.PerChatBurst < 1 {
		c.BotLimits.PerChatBurst = 1
	}
	if c.SendTimeout <= 0 {
		c.SendTimeout = 30 * time.Second
	}
	return nil
}

// options builds gotd options: production defaults, or the endpoint's.
func (c *Config) options() (telegram.Options, error) {
	opts := telegram.Options{
		SessionStorage: &sessionStorage{store: c.Sessions, key: c.SessionKey},
	}
	if c.Endpoint == nil {
		return opts, nil
	}
	dc := c.Endpoint.DC
	if dc == 0 {
		dc = 2
	}
	list, err := dcList(dc, c.Endpoint)
	if err != nil {
		return opts, err
	}
	for _, p := range c.Endpoint.PublicKeys {
		block, _ := pem.Decode([]byte(p))
		if block == nil {
			return opts, errors.New("telegram: endpoint public key: no PEM block")
		}
		key, err := x509.ParsePKCS1PublicKey(block.Bytes)
		if err != nil {
			return opts, fmt.Errorf("telegram: endpoint public key: %w", err)
		}
		opts.PublicKeys = append(opts.PublicKeys, telegram.PublicKey{RSA: key})
	}
	opts.DC = dc
	opts.DCList = dcs.List{Options: list}
	opts.Resolver = dcs.Plain(dcs.PlainOptions{})
	return opts, nil
}

// dcList is the endpoint's DC addresses: the entry DC at Addr and every
// other DC it names.
func dcList(entry int, ep *Endpoint) ([]tg.DCOption, error) {
	addrs := []EmulatorDC{{ID: entry, Addr: ep.Addr}}
	for _, d := range ep.DCs {
		if d.ID != entry {
			addrs = append(addrs, d)
		}
	}
	var out []tg.DCOption
	for _, d := range addrs {
		host, portStr, err := net.SplitHostPort(d.Addr)
		if err != nil {
			return nil, fmt.Errorf("telegram: endpoint address of DC %d: %w", d.ID, err)
		}
		port, err := strconv.Atoi(portStr)
		if err != nil {
			return nil, fmt.Errorf("telegram: endpoint port of DC %d: %w", d.ID, err)
		}
		out = append(out, tg.DCOption{ID: d.ID, IPAddress: host, Port: port, Static: true})
	}
	return out, nil
}
