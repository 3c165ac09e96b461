package mesh

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
)

// maxToken bounds one word of a text model (a keyword, a number, a face's
// vertex reference): a longer one is an error, so a hostile file cannot make
// the scanner buffer it.
const maxToken = 256

// scanBufferSize is the scanner's read size.
const scanBufferSize = 64 << 10

// scanner splits a text model read through an io.ReaderAt into
// whitespace-separated tokens, counting lines for error messages. Tokens
// are slices of its buffer, valid until the next call.
type scanner struct {
	r         io.ReaderAt
	off, size int64 // the next byte to read, and the input's end
	buf       []byte
	pos, end  int // the unread part of buf
	line      int // of the last token returned (1-based)
	eof       bool
}

func newScanner(r io.ReaderAt, size int64) *scanner {
	return &scanner{r: r, size: size, buf: make([]byte, scanBufferSize), line: 1}
}

// fill moves the unread bytes to the buffer's start and reads more after
// them. It reports false at the input's end.
func (s *scanner) fill() (bool, error) {
	n := copy(s.buf, s.buf[s.pos:s.end])
	s.pos, s.end = 0, n
	if s.eof || s.off >= s.size {
		s.eof = true
		return false, nil
	}
	want := min(int64(len(s.buf)-n), s.size-s.off)
	got, err := s.r.ReadAt(s.buf[n:n+int(want)], s.off)
	s.off += int64(got)
	s.end += got
	if got < int(want) {
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return false, fmt.Errorf("read at %d: %w", s.off, err)
	}
	return true, nil
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\v' || c == '\f'
}

// skipSpace skips white space; with stopAtNewline it stops before a
// newline. It reports false when the input (or the line) ends.
func (s *scanner) skipSpace(stopAtNewline bool) (bool, error) {
	for {
		for s.pos < s.end {
			c := s.buf[s.pos]
			if !isSpace(c) {
				return true, nil
			}
			if c == '\n' {
				if stopAtNewline {
					return false, nil
				}
				s.line++
			}
			s.pos++
		}
		if more, err := s.fill(); !more {
			return false, err
		}
	}
}

// token reads the word at the current position, which is not white space.
func (s *scanner) token() ([]byte, error) {
	start := s.pos
	for i := start; ; i++ {
		if i == s.end {
			// The word runs to the buffer's end: move it to the start and
			// read on.
			n := i - start
			s.pos = start
			more, err := s.fill()
			if err != nil {
				return nil, err
			}
			start, i = 0, n
			if !more {
				s.pos = s.end
				return s.buf[:n], nil
			}
		}
		if i-start > maxToken {
			return nil, fmt.Errorf("a word longer than %d bytes", maxToken)
		}
		if isSpace(s.buf[i]) {
			s.pos = i
			return s.buf[start:i], nil
		}
	}
}

// next returns the next token, or io.EOF at the input's end.
func (s *scanner) next() ([]byte, error) {
	ok, err := s.skipSpace(false)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, io.EOF
	}
	return s.token()
}

// nextOnLine returns the next token of the current line, or nil when the
// line (or the input) ends; the newline is left unread.
func (s *scanner) nextOnLine() ([]byte, error) {
	ok, err := s.skipSpace(true)
	if err != nil || !ok {
		return nil, err
	}
	return s.token()
}

// skipLine discards the rest of the current line, however long.
func (s *scanner) skipLine() error {
	for {
		for s.pos < s.end {
			if s.buf[s.pos] == '\n' {
				return nil // counted by the next skipSpace
			}
			s.pos++
		}
		if more, err := s.fill(); !more {
			return err
		}
	}
}

// pow10 holds the exactly representable powers of ten.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// parseNumber reads a decimal number ("-1.25e3") without allocating; forms
// it does not handle (nan, inf, hexadecimal) go to strconv. The result is
// within a few units in the last place of the exact value: ample for
// drawing, and models are float32 anyway.
func parseNumber[T string | []byte](b T) (float64, bool) {
	i, neg := 0, false
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		neg = b[i] == '-'
		i++
	}
	var mant uint64
	exp, digits := 0, 0
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		digits++
		if mant < 1e18 {
			mant = mant*10 + uint64(b[i]-'0')
		} else {
			exp++
		}
	}
	if i < len(b) && b[i] == '.' {
		for i++; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
			digits++
			if mant < 1e18 {
				mant = mant*10 + uint64(b[i]-'0')
				exp--
			}
		}
	}
	if digits == 0 {
		return parseNumberSlow(string(b))
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		eneg := false
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			eneg = b[i] == '-'
			i++
		}
		e, edigits := 0, 0
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
			edigits++
			if e < 10000 {
				e = e*10 + int(b[i]-'0')
			}
		}
		if edigits == 0 {
			return parseNumberSlow(string(b))
		}
		if eneg {
			e = -e
		}
		exp += e
	}
	if i != len(b) || exp < -300 || exp > 300 { // near the float64 range's ends, where precision is strconv's job
		return parseNumberSlow(string(b))
	}
	f := float64(mant)
	switch {
	case mant == 0:
	case exp >= 0 && exp < len(pow10):
		f *= pow10[exp]
	case exp < 0 && -exp < len(pow10):
		f /= pow10[-exp]
	default:
		f *= math.Pow10(exp)
	}
	if neg {
		f = -f
	}
	return f, true
}

func parseNumberSlow(b string) (float64, bool) {
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, false
	}
	return f, true
}

// parseInt reads a decimal integer with an optional sign, up to ±2^40.
func parseInt[T string | []byte](b T) (int64, bool) {
	i, neg := 0, false
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		neg = b[i] == '-'
		i++
	}
	if i == len(b) || len(b)-i > 13 {
		return 0, false
	}
	var n int64
	for ; i < len(b); i++ {
		if b[i] < '0' || b[i] > '9' {
			return 0, false
		}
		n = n*10 + int64(b[i]-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}
