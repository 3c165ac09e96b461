package mesh

import (
	"path"
	"strings"
)

// Candidate is a file inside an archive that might be the model to render:
// its path in the archive and its uncompressed size (-1 when unknown).
type Candidate struct {
	Path string
	Size int64
}

// ChooseModel picks the model to render for an archive that has no
// picture: a 3MF first (it may carry its designer's thumbnail), else the
// largest STL or OBJ (the whole piece, rather than a part or a base), ties
// broken by the path so that the choice is deterministic. It skips files of
// unknown or empty size, files over opts.MaxInputSize and macOS resource
// forks. It returns the index in entries, or -1 when none is a model.
func ChooseModel(entries []Candidate, opts Options) int {
	limit := opts.MaxInputSize
	if limit <= 0 {
		limit = DefaultMaxInputSize
	}
	best := -1
	for i, e := range entries {
		p := strings.ReplaceAll(e.Path, `\`, "/")
		if Detect(p) == FormatUnknown || e.Size <= 0 || e.Size > limit ||
			strings.HasPrefix(path.Base(p), "._") || strings.Contains(strings.ToLower(p), "__macosx/") {
			continue
		}
		if best < 0 || better(e, entries[best]) {
			best = i
		}
	}
	return best
}

// better orders ChooseModel's candidates.
func better(a, b Candidate) bool {
	if a3, b3 := Detect(a.Path) == Format3MF, Detect(b.Path) == Format3MF; a3 != b3 {
		return a3
	}
	if a.Size != b.Size {
		return a.Size > b.Size
	}
	return a.Path < b.Path
}
