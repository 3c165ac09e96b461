package download

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// chunkSize is the platform's download chunk: a part is read in 1 MiB
// chunks at 1 MiB boundaries, and cached the same way.
const chunkSize = 1 << 20

// piece is one chunk of one part of a served file.
type piece struct {
	part  *partSource
	index int64 // chunk index within the part
	skip  int   // bytes of the chunk before the file's position
	n     int   // bytes of the chunk to deliver
}

// pieces lays out the chunks that cover the bytes from off on of the
// concatenation of parts.
func pieces(parts []*partSource, off int64) []piece {
	var out []piece
	for _, p := range parts {
		if off >= p.size {
			off -= p.size
			continue
		}
		for idx := off / chunkSize; idx*chunkSize < p.size; idx++ {
			start := idx * chunkSize
			end := min(start+chunkSize, p.size)
			skip := max(off-start, 0)
			out = append(out, piece{part: p, index: idx, skip: int(skip), n: int(end - start - skip)})
		}
		off = 0
	}
	return out
}

// stream reads the concatenation of parts from an offset on, with up to
// ahead chunks fetched at once and handed out in order: memory stays at
// (ahead+1) chunks whatever the file's size.
type stream struct {
	ctx     context.Context
	cancel  context.CancelFunc
	results chan chan chunkResult
	cur     []byte
	err     error
	done    chan struct{}
}

type chunkResult struct {
	data []byte
	err  error
}

// openStream starts reading the pieces from off on.
func openStream(ctx context.Context, parts []*partSource, off int64, ahead int) *stream {
	ctx, cancel := context.WithCancel(ctx)
	s := &stream{ctx: ctx, cancel: cancel, results: make(chan chan chunkResult, max(ahead-1, 0)), done: make(chan struct{})}
	go s.produce(pieces(parts, off))
	return s
}

// produce starts a fetch per piece, at most cap(results)+1 waiting to be
// read, and closes results after the last.
func (s *stream) produce(ps []piece) {
	defer close(s.done)
	defer close(s.results)
	for _, p := range ps {
		res := make(chan chunkResult, 1)
		go func(p piece) {
			data, err := p.part.chunk(s.ctx, p.index)
			if err == nil && len(data) < p.skip+p.n {
				err = fmt.Errorf("chunk %d of %q: %d bytes, want %d", p.index, p.part.name, len(data), p.skip+p.n)
			}
			if err != nil {
				res <- chunkResult{err: err}
				return
			}
			res <- chunkResult{data: data[p.skip : p.skip+p.n]}
		}(p)
		select {
		case s.results <- res:
		case <-s.ctx.Done():
			return
		}
	}
}

func (s *stream) Read(b []byte) (int, error) {
	for len(s.cur) == 0 {
		if s.err != nil {
			return 0, s.err
		}
		var res chan chunkResult
		var ok bool
		select {
		case res, ok = <-s.results:
		case <-s.ctx.Done():
			s.err = s.ctx.Err()
			continue
		}
		if !ok {
			s.err = io.EOF
			continue
		}
		var r chunkResult
		select {
		case r = <-res:
		case <-s.ctx.Done():
			s.err = s.ctx.Err()
			continue
		}
		if r.err != nil {
			s.err = r.err
			if errors.Is(r.err, io.EOF) {
				s.err = io.ErrUnexpectedEOF
			}
			continue
		}
		s.cur = r.data
	}
	n := copy(b, s.cur)
	s.cur = s.cur[n:]
	return n, nil
}

// Close stops the fetches in flight.
func (s *stream) Close() error {
	s.cancel()
	<-s.done
	return nil
}
