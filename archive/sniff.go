package archive

// Sniffer decides a file's type from its bytes as they stream past, in file
// order, so that a download can be typed without reading it back from disk.
// It keeps the first 16 bytes and, only when they carry no archive magic,
// scans the window for signatures as its bytes arrive (holding back the
// last few bytes, whose signatures need the bytes after them) and keeps a
// tail of the last bytes for the ZIP end-of-central-directory search: it
// decides exactly as Detect does over the same bytes, without holding the
// window. The zero value is not usable; use NewSniffer.
//
// A Sniffer is not safe for concurrent use; HashingWriter feeds it under its
// lock.
type Sniffer struct {
	window int64
	seen   int64
	head   []byte // the first bytes, up to 16 (and up to window)
	magic  bool   // head starts with an archive signature: nothing more is kept
	// The scan of the window: the earliest plausible signature once found
	// (found, foundType at foundAt); until then the window's bytes from
	// carryAt on whose signatures are not decided yet (fewer than
	// scanLookahead), and how many of the window's bytes went past.
	found     bool
	foundType Type
	foundAt   int64
	carry     []byte
	carryAt   int64
	scanned   int64
	tail      []byte // ring of the last eocdSearch bytes
	tailAt    int    // next write position in tail once it is full
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
	if room := s.window - s.scanned; room > 0 {
		w := p[:min(int64(len(p)), room)]
		if len(s.head) < 16 {
			s.head = append(s.head, w[:min(len(w), 16-len(s.head))]...)
			if len(s.head) >= 16 && magicType(s.head) != Unknown {
				s.magic, s.head, s.carry, s.tail = true, s.head[:16:16], nil, nil
				return n, nil
			}
		}
		s.scanned += int64(len(w))
		s.scan(w, s.scanned >= s.window)
	}
	s.addTail(p)
	return n, nil
}

// scan decides the signatures of the window's positions that w, the
// window's next bytes, completes: every position whose scanLookahead bytes
// are now known, or all of them when the window ends with w.
func (s *Sniffer) scan(w []byte, windowEnds bool) {
	if s.found {
		return
	}
	buf := w
	if len(s.carry) > 0 {
		buf = append(s.carry, w...)
	}
	limit := len(buf)
	if !windowEnds {
		limit = max(0, len(buf)-(scanLookahead-1))
	}
	if t, at := scanSignatures(buf, limit); t != Unknown {
		s.found, s.foundType, s.foundAt, s.carry = true, t, s.carryAt+int64(at), nil
		return
	}
	s.carry = append(s.carry[:0], buf[limit:]...)
	s.carryAt += int64(limit)
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
		t, off = s.decide()
	}
	if t != Unknown {
		return Detection{Type: t, Offset: off}
	}
	return Detection{Type: info.Type, Offset: -1, ByName: info.Type != Unknown}
}

// decide is decideContent over the window and the tail: magic at offset 0,
// the earliest plausible signature in the window (the bytes held back are
// decided now that the file has ended), the EOCD record in the tail.
func (s *Sniffer) decide() (Type, int64) {
	if t := magicType(s.head); t != Unknown {
		return t, 0
	}
	if s.found {
		return s.foundType, s.foundAt
	}
	if t, at := scanSignatures(s.carry, len(s.carry)); t != Unknown {
		return t, s.carryAt + int64(at)
	}
	tail := s.tail
	if s.tailAt > 0 { // unroll the ring into file order
		tail = append(append(make([]byte, 0, len(tail)), tail[s.tailAt:]...), tail[:s.tailAt]...)
	}
	if eocdIn(tail) {
		return ZIP, -1
	}
	return Unknown, 0
}
