package mesh

import (
	"context"
	"fmt"
	"io"
)

// maxXMLToken bounds what encoding/xml must buffer for one token: a tag
// with its attributes, a run of text, a comment, a CDATA section or a
// processing instruction.
const maxXMLToken = 1 << 20

// xmlGuard sits between a 3MF part and encoding/xml. encoding/xml expands
// no entities of its own (so no "billion laughs"), but it buffers each token
// whole, however long: the guard follows the markup just enough to know
// where each token starts and refuses one longer than maxXMLToken, refuses
// any DTD (OPC forbids them), charges every byte to a budget shared by the
// package's parts and checks the context as it reads.
type xmlGuard struct {
	ctx    context.Context
	r      io.Reader
	budget *int64 // bytes the package's parts may still decompress to
	run    int    // bytes of the current token so far
	state  xmlState
	quote  byte    // the open quote inside a tag, or 0
	tail   [2]byte // the last bytes of a comment, CDATA or instruction
}

type xmlState uint8

const (
	xmlText     xmlState = iota
	xmlOpen              // after '<'
	xmlBang              // after "<!"
	xmlBangDash          // after "<!-"
	xmlTag               // inside a start or end tag
	xmlComment           // inside "<!--", ends with "-->"
	xmlCDATA             // inside "<![", ends with "]]>"
	xmlPI                // inside "<?", ends with "?>"
)

func (g *xmlGuard) Read(p []byte) (int, error) {
	if err := g.ctx.Err(); err != nil {
		return 0, err
	}
	if *g.budget <= 0 {
		return 0, fmt.Errorf("the package's parts decompress to more than Options.MaxInputSize: %w", ErrTooLarge)
	}
	if int64(len(p)) > *g.budget {
		p = p[:*g.budget]
	}
	n, err := g.r.Read(p)
	*g.budget -= int64(n)
	for _, c := range p[:n] {
		if gerr := g.step(c); gerr != nil {
			return 0, gerr
		}
	}
	return n, err
}

// step follows the markup by one byte.
func (g *xmlGuard) step(c byte) error {
	g.run++
	if g.run > maxXMLToken {
		return fmt.Errorf("xml: a tag, text, comment or CDATA section longer than %d bytes: %w", maxXMLToken, ErrTooLarge)
	}
	switch g.state {
	case xmlText:
		if c == '<' {
			g.state, g.run = xmlOpen, 1
		}
	case xmlOpen:
		switch c {
		case '!':
			g.state = xmlBang
		case '?':
			g.state, g.tail = xmlPI, [2]byte{}
		default:
			g.state, g.quote = xmlTag, 0
			return g.step0(c)
		}
	case xmlBang:
		switch c {
		case '-':
			g.state = xmlBangDash
		case '[':
			g.state, g.tail = xmlCDATA, [2]byte{}
		default:
			return fmt.Errorf("xml: a DTD or other declaration (\"<!%c\"), which 3MF does not allow: %w", c, ErrMalformed)
		}
	case xmlBangDash:
		if c != '-' {
			return fmt.Errorf("xml: \"<!-\" not followed by '-': %w", ErrMalformed)
		}
		g.state, g.tail = xmlComment, [2]byte{}
	case xmlTag:
		return g.step0(c)
	case xmlComment, xmlCDATA, xmlPI:
		end := g.state == xmlComment && g.tail == [2]byte{'-', '-'} ||
			g.state == xmlCDATA && g.tail == [2]byte{']', ']'} ||
			g.state == xmlPI && g.tail[1] == '?'
		if c == '>' && end {
			g.state, g.run = xmlText, 0
		}
		g.tail = [2]byte{g.tail[1], c}
	}
	return nil
}

// step0 follows a tag: quotes hide '>'.
func (g *xmlGuard) step0(c byte) error {
	switch {
	case g.quote != 0:
		if c == g.quote {
			g.quote = 0
		}
	case c == '"' || c == '\'':
		g.quote = c
	case c == '>':
		g.state, g.run = xmlText, 0
	}
	return nil
}
