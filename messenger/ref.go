package messenger

import (
	"strings"

	"github.com/hoard/hoard"
)

// ChannelRef names a channel the way a user typed it: by public username or
// by invite hash. Exactly one field is set.
type ChannelRef struct {
	Username   string
	InviteHash string
}

// String returns the canonical form: "@name" or "https://t.me/+HASH".
func (r ChannelRef) String() string {
	if r.InviteHash != "" {
		return "https://t.me/+" + r.InviteHash
	}
	return "@" + r.Username
}

// IsInvite reports whether r is an invite link.
func (r ChannelRef) IsInvite() bool { return r.InviteHash != "" }

var linkHosts = []string{"t.me", "telegram.me", "telegram.dog", "www.t.me", "www.telegram.me"}

// ParseChannelRef parses a channel reference typed by a user: a link
// (https://t.me/name, t.me/name/123, t.me/s/name), @name, a bare name, an
// invite link (t.me/+HASH, t.me/joinchat/HASH) or a tg:// link
// (tg://resolve?domain=name, tg://join?invite=HASH). Usernames are
// lower-cased. Anything else is a hoard.EINVALID error.
func ParseChannelRef(s string) (ChannelRef, error) {
	in := strings.TrimSpace(s)
	if in == "" {
		return ChannelRef{}, invalidRef(s, "empty reference")
	}
	if strings.HasPrefix(in, "@") {
		return usernameRef(s, in[1:])
	}
	lower := strings.ToLower(in)
	if strings.HasPrefix(lower, "tg://") {
		return parseTGLink(s, in[len("tg://"):])
	}
	rest := in
	for _, scheme := range []string{"https://", "http://"} {
		if strings.HasPrefix(lower, scheme) {
			rest = in[len(scheme):]
			break
		}
	}
	host, path, hasSlash := strings.Cut(rest, "/")
	isLink := false
	for _, h := range linkHosts {
		if strings.EqualFold(host, h) {
			isLink = true
			break
		}
	}
	if !isLink {
		if rest != in || hasSlash || strings.ContainsAny(in, ":?#") {
			return ChannelRef{}, invalidRef(s, "not a messenger link")
		}
		return usernameRef(s, in)
	}
	// Drop query and fragment, then split the path.
	if i := strings.IndexAny(path, "?#"); i >= 0 {
		path = path[:i]
	}
	segs := strings.Split(strings.Trim(path, "/"), "/")
	first := segs[0]
	switch {
	case first == "":
		return ChannelRef{}, invalidRef(s, "link without a channel")
	case strings.HasPrefix(first, "+"):
		return inviteRef(s, first[1:], len(segs))
	case first == "joinchat":
		if len(segs) < 2 {
			return ChannelRef{}, invalidRef(s, "invite link without a hash")
		}
		return inviteRef(s, segs[1], len(segs)-1)
	case first == "s":
		if len(segs) < 2 {
			return ChannelRef{}, invalidRef(s, "preview link without a channel")
		}
		segs = segs[1:]
	case first == "c":
		return ChannelRef{}, invalidRef(s, "private message links (t.me/c/…) name no joinable channel; use an invite link")
	}
	if len(segs) > 2 {
		return ChannelRef{}, invalidRef(s, "unexpected link path")
	}
	if len(segs) == 2 && !isDigits(segs[1]) {
		return ChannelRef{}, invalidRef(s, "unexpected link path")
	}
	return usernameRef(s, segs[0])
}

func parseTGLink(orig, rest string) (ChannelRef, error) {
	action, query, _ := strings.Cut(rest, "?")
	params := map[string]string{}
	for _, kv := range strings.Split(query, "&") {
		k, v, _ := strings.Cut(kv, "=")
		params[strings.ToLower(k)] = v
	}
	switch strings.ToLower(action) {
	case "resolve":
		return usernameRef(orig, params["domain"])
	case "join":
		return inviteRef(orig, params["invite"], 1)
	}
	return ChannelRef{}, invalidRef(orig, "unsupported tg:// link")
}

func usernameRef(orig, name string) (ChannelRef, error) {
	if !validUsername(name) {
		return ChannelRef{}, invalidRef(orig, "a username has 4–32 letters, digits or underscores and starts with a letter")
	}
	return ChannelRef{Username: strings.ToLower(name)}, nil
}

func inviteRef(orig, hash string, segs int) (ChannelRef, error) {
	if segs != 1 || hash == "" || len(hash) > 64 {
		return ChannelRef{}, invalidRef(orig, "malformed invite link")
	}
	for _, c := range hash {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return ChannelRef{}, invalidRef(orig, "malformed invite link")
		}
	}
	return ChannelRef{InviteHash: hash}, nil
}

func validUsername(name string) bool {
	if len(name) < 4 || len(name) > 32 {
		return false
	}
	for i, c := range name {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case (c >= '0' && c <= '9' || c == '_') && i > 0:
		default:
			return false
		}
	}
	return name[len(name)-1] != '_' && !strings.Contains(name, "__")
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func invalidRef(orig, why string) error {
	const max = 80
	if len(orig) > max {
		orig = orig[:max] + "…"
	}
	return hoard.Errorf(hoard.EINVALID, "%q is not a channel link, @username or invite link: %s", orig, why)
}
