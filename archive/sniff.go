package archive

// Sniffer decides a file's type from its bytes as they stream past, in file
// order, so that a download can be typed without reading it back from disk.
// It keeps the first bytes and, only when they carry no archive magic, the
// scan window and a tail of the last bytes for the ZIP
// end-of-central-directory search: it decides exactly as Detect does over
// the same bytes. The zero value is not usable; use NewSniffer.
//
// A Sniffer is not safe for concurrent use; HashingWriter feeds it under its
// lock.
type Sniffer struct {
	window int64
	seen   int64
	head   []byte // the first bytes, up to window
	magic  bool   // head starts with an archive signature: nothing more is kept
	tail   []byte // ring of the last eocdSearch bytes
	tailAt int    // next write position in tail once it is full
}

// NewSniffer returns a Sniffer that scans the first window bytes for a
// signature, as Detect does (DefaultScanWindow when window <= 0).
func NewSniffer(window int64) *Sniffer {
	if window <= 0 {
		window = DefaultScanWindow
	}
	return &Sniffer{window: window}
}

// Write records p, the bytes following those already written. It never
// fails.
func (s *Sniffer) Write(p []byte) (int, error) {
	n := len(p)
	s.seen += int64(n)
	if s.magic {
		return n, nil
	}
	if room := s.window - int64(len(s.head)); room > 0 {
		s.head = append(s.head, p[:min(int64(len(p)), room)]...)
		if len(s.head) >= 16 && magicType(s.head) != Unknown {
			s.magic, s.head, s.tail = true, s.head[:16:16], nil
			return n, nil
		}
	}
	s.addTail(p)
	return n, nil
}

func (s *Sniffer) addTail(p []byte) {
	if len(p) >= eocdSearch {
		s.tail = append(s.tail[:0], p[len(p)-eocdSearch:]...)
		s.tailAt = 0
		return
	}
	if room := eocdSearch - len(s.tail); room > 0 {
		k := min(room, len(p))
		s.tail = append(s.tail, p[:k]...)
		p = p[k:]
	}
	for len(p) > 0 {
		k := copy(s.tail[s.tailAt:], p)
		p = p[k:]
		s.tailAt = (s.tailAt + k) % eocdSearch
	}
}

// Seen returns how many bytes were written.
func (s *Sniffer) Seen() int64 { return s.seen }

// Detect decides the type of the file whose bytes were written, named name,
// as Detect would over them. It is only meaningful once the whole file
// (Seen() == its size) went through the Sniffer.
func (s *Sniffer) Detect(name string) Detection {
	info, _ := ParseName(name)
	if info.Type == Document {
		return Detection{Type: Document, Offset: -1, ByName: true}
	}
	t, off := Unknown, int64(0)
	switch {
	case s.magic:
		t = magicType(s.head)
	case s.seen > 0:
		tail := s.tail
		if s.tailAt > 0 { // unroll the ring into file order
			tail = append(append(make([]byte, 0, len(tail)), tail[s.tailAt:]...), tail[:s.tailAt]...)
		}
		t, off = decideContent(s.head, tail)
	}
	if t != Unknown {
		return Detection{Type: t, Offset: off}
	}
	return Detection{Type: info.Type, Offset: -1, ByName: info.Type != Unknown}
}
