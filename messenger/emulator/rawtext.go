package emulator

// Raw text in seeds. JSON strings cannot carry invalid UTF-8 (decoding
// replaces it with U+FFFD), yet a hostile platform can send any bytes: the
// *_bytes keys of a seed (base64 in JSON) set a name, caption or title to
// exact bytes, for worlds that test what hoard makes of them.

// rawOr returns raw as a string when it is set, else s.
func rawOr(s string, raw []byte) string {
	if raw != nil {
		return string(raw)
	}
	return s
}

// PlatformTitle is the channel's title as the platform shows it: the raw
// bytes of title_bytes when set, else title.
func (c SeedChannel) PlatformTitle() string { return rawOr(c.Title, c.TitleBytes) }

// title is a topic's title, raw bytes first.
func (t SeedTopic) title() string { return rawOr(t.Title, t.TitleBytes) }

// name is a post's document name override, raw bytes first.
func (p SeedPost) name() string { return rawOr(p.Name, p.NameBytes) }

// caption is a post's caption, raw bytes first.
func (p SeedPost) caption() string { return rawOr(p.Caption, p.CaptionBytes) }
