package emulator

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Seed is the world an Emulator starts from. The JSON form is a contract
// (see LoadSeed): unknown keys are errors, paths are relative to the seed
// file.
type Seed struct {
	Account     SeedAccount     `json:"account"`
	Bot         SeedBot         `json:"bot"`
	Destination SeedDestination `json:"destination"`
	Channels    []SeedChannel   `json:"channels"`
	Faults      []SeedFault     `json:"faults"`
	// Users are people who talk to the bot: they sign in with the login
	// code like the account.
	Users []SeedUser `json:"users,omitempty"`
	// IDSeed makes ids, access hashes and file references deterministic;
	// default 1.
	IDSeed int64 `json:"id_seed,omitempty"`
	// RoundTripMS is the round-trip time of DCs in milliseconds, by DC
	// id ("1".."5"); it overrides Options.RoundTrip.
	RoundTripMS map[int]int `json:"rtt_ms,omitempty"`
	// Flood is the user accounts' flood model: false switches it off,
	// {"scale": S} scales its windows; absent, the platform's (userflood.go).
	Flood *UserFlood `json:"flood,omitempty"`
}

// SeedAccount is the user account the worker signs in with.
type SeedAccount struct {
	Phone   string `json:"phone"`
	Premium bool   `json:"premium"`
	// DC is the account's home DC (default EntryDC): a login that starts
	// elsewhere is told to migrate there (PHONE_MIGRATE_X).
	DC int `json:"dc,omitempty"`
	// SentCode is how auth.sendCode answers (the platform's newer
	// auth.sentCode* forms): "app" (default; the code goes to the
	// official app), "sms", "email" (to the login e-mail), "setup_email"
	// (the account must set a login e-mail up first), "payment" (a code by
	// SMS needs a payment first) or "success" (signed in at once).
	SentCode string `json:"sent_code,omitempty"`
	// Password, when set, turns on two-step verification (SRP).
	Password string `json:"password,omitempty"`
}

// SeedUser is a user who talks to the bot.
type SeedUser struct {
	Phone     string `json:"phone"`
	Username  string `json:"username,omitempty"`
	FirstName string `json:"first_name,omitempty"`
	// DC is the user's home DC (default EntryDC).
	DC int `json:"dc,omitempty"`
}

// SeedBot is the bot. Its token has the form "<id>:<secret>".
type SeedBot struct {
	Username string `json:"username"`
	Token    string `json:"token"`
	// DC is the bot's home DC (default EntryDC).
	DC int `json:"dc,omitempty"`
}

// SeedDestination is the destination channel: the account is its creator and
// the bot an administrator, unless BotAdmin is false (the account then makes
// the bot an administrator itself, with channels.editAdmin). Without a
// username it is private: the bot learns it only from an update.
type SeedDestination struct {
	Title    string `json:"title"`
	Username string `json:"username,omitempty"`
	BotAdmin *bool  `json:"bot_admin,omitempty"`
}

// SeedChannel is a source channel (or forum supergroup).
type SeedChannel struct {
	Title     string `json:"title"`
	Username  string `json:"username,omitempty"`
	Invite    string `json:"invite,omitempty"`
	Joined    bool   `json:"joined"`
	Protected bool   `json:"protected"`
	Forum     bool   `json:"forum"`
	// JoinRequest makes joins by invite wait for an admin: the platform
	// answers INVITE_REQUEST_SENT and the account stays outside.
	JoinRequest bool        `json:"join_request,omitempty"`
	Category    string      `json:"category,omitempty"`
	Topics      []SeedTopic `json:"topics,omitempty"`
	Posts       []SeedPost  `json:"posts,omitempty"`
	// TitleBytes, when set, is the title as exact bytes (rawtext.go).
	TitleBytes []byte `json:"title_bytes,omitempty"`
}

// SeedTopic is a forum topic with its posts.
type SeedTopic struct {
	Title string     `json:"title"`
	Posts []SeedPost `json:"posts"`
	// TitleBytes, when set, is the title as exact bytes (rawtext.go).
	TitleBytes []byte `json:"title_bytes,omitempty"`
	// Pinned pins the topic: pinned topics come first in the topic list,
	// in the seed's order.
	Pinned bool `json:"pinned,omitempty"`
}

// SeedPost is one post: exactly one of File, Photo, Generate or Text (or
// SameDocumentAs) sets its content; Caption goes with media.
type SeedPost struct {
	File           string    `json:"file,omitempty"`
	Photo          string    `json:"photo,omitempty"`
	Generate       *Generate `json:"generate,omitempty"`
	Text           string    `json:"text,omitempty"`
	Name           string    `json:"name,omitempty"`
	Caption        string    `json:"caption,omitempty"`
	Album          int64     `json:"album,omitempty"`
	Date           string    `json:"date,omitempty"`
	ReplyTo        *int      `json:"reply_to,omitempty"`
	SameDocumentAs *int      `json:"same_document_as,omitempty"`
	// DC is the DC that stores the post's file or photo (default
	// EntryDC): downloading it elsewhere answers FILE_MIGRATE_X.
	DC int `json:"dc,omitempty"`
	// NameBytes and CaptionBytes, when set, are the name and caption as
	// exact bytes (rawtext.go).
	NameBytes    []byte `json:"name_bytes,omitempty"`
	CaptionBytes []byte `json:"caption_bytes,omitempty"`
}

// Generate describes a generated file: Size deterministic pseudo-random bytes
// from Seed, produced on the fly; or, with Zip, a ZIP archive of Size bytes
// whose bulk is such bytes (genzip.go).
type Generate struct {
	Name string       `json:"name"`
	Size int64        `json:"size"`
	Seed int64        `json:"seed"`
	Zip  *GenerateZip `json:"zip,omitempty"`
}

// GenerateZip makes a generated file a real ZIP archive, produced on the
// fly like the bytes: its Entries (small files of the seed, stored) first,
// then one stored entry named Bulk of generated bytes that fills the file
// to Generate.Size, then the central directory. The archive must stay under
// 4 GiB (no ZIP64).
type GenerateZip struct {
	Entries []GenerateZipEntry `json:"entries,omitempty"`
	Bulk    string             `json:"bulk"`
}

// GenerateZipEntry is a file of the seed stored in a generated ZIP under
// Name (a slash-separated path).
type GenerateZipEntry struct {
	Name string `json:"name"`
	File string `json:"file"`
}

// SeedFault is a fault of the seed file; see Fault.
type SeedFault struct {
	Method  string `json:"method"`
	Channel string `json:"channel,omitempty"`
	// File, when set, matches only upload.getFile requests for the
	// document of that name (a download that always fails, say).
	File    string `json:"file,omitempty"`
	Error   string `json:"error,omitempty"`
	StallMS int    `json:"stall_ms,omitempty"`
	Drop    bool   `json:"drop,omitempty"`
	// DropAnswer carries the request out but sends no answer.
	DropAnswer bool `json:"drop_answer,omitempty"`
	Times      int  `json:"times,omitempty"`
	After      int  `json:"after,omitempty"`
}

// LoadSeed reads and validates a seed file. File paths in posts are made
// absolute relative to the seed file's directory.
func LoadSeed(path string) (*Seed, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load seed: %w", err)
	}
	s, err := ParseSeed(data, filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("load seed %s: %w", path, err)
	}
	return s, nil
}

// ParseSeed decodes and validates a seed. Relative file paths are resolved
// against baseDir. Unknown keys are errors naming the key.
func ParseSeed(data []byte, baseDir string) (*Seed, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var s Seed
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("parse seed: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("parse seed: trailing data after the seed object")
	}
	if err := s.validate(baseDir); err != nil {
		return nil, fmt.Errorf("seed: %w", err)
	}
	return &s, nil
}

func (s *Seed) validate(baseDir string) error {
	if s.Account.Phone == "" {
		return fmt.Errorf("account.phone is required")
	}
	if s.Bot.Token != "" && s.Bot.Username == "" {
		return fmt.Errorf("bot.username is required with bot.token")
	}
	if s.Destination.Title == "" {
		s.Destination.Title = "Hoard Archive"
	}
	if s.IDSeed == 0 {
		s.IDSeed = 1
	}
	if err := defaultDC(&s.Account.DC, "account"); err != nil {
		return err
	}
	switch s.Account.SentCode {
	case "", "app", "sms", "email", "setup_email", "payment", "success":
	default:
		return fmt.Errorf("account.sent_code: %q is none of app, sms, email, setup_email, payment, success", s.Account.SentCode)
	}
	if err := defaultDC(&s.Bot.DC, "bot"); err != nil {
		return err
	}
	for dc, ms := range s.RoundTripMS {
		if !validDC(dc) || ms < 0 {
			return fmt.Errorf("rtt_ms: DC %d: %d ms (DCs are 1..%d, times not negative)", dc, ms, NumDCs)
		}
	}
	names := map[string]bool{}
	addName := func(n, where string) error {
		if n == "" {
			return nil
		}
		if names[n] {
			return fmt.Errorf("%s: username or invite %q used twice", where, n)
		}
		names[n] = true
		return nil
	}
	if err := addName(s.Bot.Username, "bot"); err != nil {
		return err
	}
	if err := addName(s.Destination.Username, "destination"); err != nil {
		return err
	}
	phones := map[string]bool{normPhone(s.Account.Phone): true}
	for i, u := range s.Users {
		where := fmt.Sprintf("users[%d]", i)
		p := normPhone(u.Phone)
		if p == "" || strings.Trim(p, "0123456789") != "" {
			return fmt.Errorf("%s.phone: %q is not a phone number", where, u.Phone)
		}
		if phones[p] {
			return fmt.Errorf("%s.phone: %q is used twice", where, u.Phone)
		}
		phones[p] = true
		if err := addName(strings.ToLower(u.Username), where); err != nil {
			return err
		}
		if s.Users[i].FirstName == "" {
			s.Users[i].FirstName = "User " + strconv.Itoa(i+1)
		}
		if err := defaultDC(&s.Users[i].DC, where); err != nil {
			return err
		}
	}
	for i := range s.Channels {
		ch := &s.Channels[i]
		where := fmt.Sprintf("channels[%d]", i)
		if ch.PlatformTitle() == "" {
			return fmt.Errorf("%s.title is required", where)
		}
		if err := addName(ch.Username, where); err != nil {
			return err
		}
		if err := addName("+"+ch.Invite, where); err != nil && ch.Invite != "" {
			return err
		}
		if len(ch.Topics) > 0 && !ch.Forum {
			return fmt.Errorf("%s: topics need \"forum\": true", where)
		}
		if err := validatePosts(ch.Posts, baseDir, where+".posts"); err != nil {
			return err
		}
		for j := range ch.Topics {
			tw := fmt.Sprintf("%s.topics[%d]", where, j)
			if ch.Topics[j].title() == "" {
				return fmt.Errorf("%s.title is required", tw)
			}
			if err := validatePosts(ch.Topics[j].Posts, baseDir, tw+".posts"); err != nil {
				return err
			}
		}
	}
	for i, f := range s.Faults {
		where := fmt.Sprintf("faults[%d]", i)
		if f.Method == "" {
			return fmt.Errorf("%s.method is required", where)
		}
		if _, ok := methodIDs[f.Method]; !ok {
			return fmt.Errorf("%s.method: unknown method %q", where, f.Method)
		}
		if f.Error == "" && f.StallMS == 0 && !f.Drop && !f.DropAnswer {
			return fmt.Errorf("%s: one of error, stall_ms, drop or drop_answer is required", where)
		}
		if f.Channel != "" && !names[f.Channel] {
			return fmt.Errorf("%s.channel: no channel with username %q", where, f.Channel)
		}
		if f.File != "" && f.Method != "upload.getFile" {
			return fmt.Errorf("%s.file: only upload.getFile requests name a file, not %s", where, f.Method)
		}
		if f.Times < 0 || f.After < 0 || f.StallMS < 0 {
			return fmt.Errorf("%s: negative times, after or stall_ms", where)
		}
	}
	return nil
}

// defaultDC sets *dc to EntryDC when unset and checks it names a DC.
func defaultDC(dc *int, where string) error {
	if *dc == 0 {
		*dc = EntryDC
	}
	if !validDC(*dc) {
		return fmt.Errorf("%s.dc: %d is not a DC (1..%d)", where, *dc, NumDCs)
	}
	return nil
}

func validatePosts(posts []SeedPost, baseDir, where string) error {
	for i := range posts {
		p := &posts[i]
		pw := fmt.Sprintf("%s[%d]", where, i)
		if err := defaultDC(&p.DC, pw); err != nil {
			return err
		}
		kinds := 0
		for _, set := range []bool{p.File != "", p.Photo != "", p.Generate != nil, p.Text != "" && p.File == "" && p.Photo == "" && p.Generate == nil && p.SameDocumentAs == nil} {
			if set {
				kinds++
			}
		}
		if p.SameDocumentAs != nil {
			idx := *p.SameDocumentAs
			if idx < 0 || idx >= i {
				return fmt.Errorf("%s.same_document_as: %d is not an earlier post", pw, idx)
			}
			src := posts[idx]
			if src.File == "" && src.Generate == nil && src.SameDocumentAs == nil {
				return fmt.Errorf("%s.same_document_as: post %d has no document", pw, idx)
			}
			if p.Photo != "" || p.Generate != nil {
				return fmt.Errorf("%s: same_document_as excludes photo and generate", pw)
			}
			kinds = 1
		}
		if kinds != 1 {
			return fmt.Errorf("%s: exactly one of file, photo, generate, text is required", pw)
		}
		if p.ReplyTo != nil && (*p.ReplyTo < 0 || *p.ReplyTo >= i) {
			return fmt.Errorf("%s.reply_to: %d is not an earlier post", pw, *p.ReplyTo)
		}
		if p.Date != "" {
			if _, err := time.Parse(time.RFC3339, p.Date); err != nil {
				return fmt.Errorf("%s.date: %w", pw, err)
			}
		}
		if p.Generate != nil {
			if p.Generate.Name == "" || p.Generate.Size <= 0 {
				return fmt.Errorf("%s.generate: name and a positive size are required", pw)
			}
			if z := p.Generate.Zip; z != nil {
				for j := range z.Entries {
					ze := &z.Entries[j]
					if ze.Name == "" || ze.File == "" {
						return fmt.Errorf("%s.generate.zip.entries[%d]: name and file are required", pw, j)
					}
					if !filepath.IsAbs(ze.File) {
						ze.File = filepath.Join(baseDir, ze.File)
					}
				}
				if _, err := zipLayout(*p.Generate); err != nil {
					return fmt.Errorf("%s.generate.zip: %w", pw, err)
				}
			}
		}
		for _, f := range []*string{&p.File, &p.Photo} {
			if *f == "" || p.SameDocumentAs != nil {
				continue
			}
			if !filepath.IsAbs(*f) {
				*f = filepath.Join(baseDir, *f)
			}
			st, err := os.Stat(*f)
			if err != nil {
				return fmt.Errorf("%s: %w", pw, err)
			}
			if st.IsDir() {
				return fmt.Errorf("%s: %s is a directory", pw, *f)
			}
		}
	}
	return nil
}
