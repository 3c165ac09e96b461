package grouping

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Matches reports whether the rule matches the package: a PREFIX rule when
// the package's normalised file name (extensions stripped) starts with the
// normalised pattern, a CREATOR rule when the normalised creators are equal.
// An empty pattern matches nothing.
func (r Rule) Matches(p Package) bool {
	pat := normalize(r.Pattern)
	if pat == "" {
		return false
	}
	switch r.Kind {
	case RulePrefix:
		return strings.HasPrefix(normalize(baseName(p.FileName)), pat)
	case RuleCreator:
		return normalize(p.Creator) == pat
	}
	return false
}

// ruleSet indexes the usable rules of a channel in priority order
// (confidence desc, then id); a lower index is a higher priority.
type ruleSet struct {
	rules   []Rule
	pattern []string         // normalised pattern per rule
	prefix  map[string][]int // first two bytes of a prefix pattern → rules
	short   []int            // prefix rules shorter than two bytes
	creator map[string][]int // normalised creator → rules

	// Two-byte heads of the patterns, a filter that spares normalising the
	// names and creators of packages no rule can match.
	prefixHeads, creatorHeads headSet
	shortCreator              bool // a creator pattern shorter than two bytes
}

// headSet is a set of two-byte strings.
type headSet [1 << 16 / 64]uint64

func (h *headSet) add(b0, b1 byte) { v := uint(b0)<<8 | uint(b1); h[v/64] |= 1 << (v % 64) }

func (h *headSet) has(b [2]byte) bool {
	v := uint(b[0])<<8 | uint(b[1])
	return h[v/64]&(1<<(v%64)) != 0
}

func newRuleSet(rules []Rule, groups map[int64]Group) *ruleSet {
	rs := &ruleSet{prefix: map[string][]int{}, creator: map[string][]int{}}
	sorted := slices.Clone(rules)
	slices.SortFunc(sorted, func(a, b Rule) int {
		if c := cmp.Compare(b.Confidence, a.Confidence); c != 0 {
			return c
		}
		return cmp.Or(cmp.Compare(a.ID, b.ID), cmp.Compare(a.GroupID, b.GroupID),
			cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Pattern, b.Pattern))
	})
	for _, r := range sorted {
		if _, ok := groups[r.GroupID]; !ok {
			continue // a stale rule of a deleted group
		}
		pat := normalize(r.Pattern)
		if pat == "" || (r.Kind != RulePrefix && r.Kind != RuleCreator) {
			continue
		}
		k := len(rs.rules)
		rs.rules = append(rs.rules, r)
		rs.pattern = append(rs.pattern, pat)
		switch {
		case r.Kind == RuleCreator:
			rs.creator[pat] = append(rs.creator[pat], k)
			if len(pat) < 2 {
				rs.shortCreator = true
			} else {
				rs.creatorHeads.add(pat[0], pat[1])
			}
		case len(pat) < 2:
			rs.short = append(rs.short, k)
		default:
			rs.prefix[pat[:2]] = append(rs.prefix[pat[:2]], k)
			rs.prefixHeads.add(pat[0], pat[1])
		}
	}
	return rs
}

func (rs *ruleSet) empty() bool { return len(rs.rules) == 0 }

// match appends to dst the indexes of all rules matching a package with
// normalised base name name and normalised creator creator.
func (rs *ruleSet) match(name, creator string, dst []int) []int {
	if len(rs.rules) == 0 {
		return dst
	}
	if creator != "" {
		dst = append(dst, rs.creator[creator]...)
	}
	if name == "" {
		return dst
	}
	for _, k := range rs.short {
		if strings.HasPrefix(name, rs.pattern[k]) {
			dst = append(dst, k)
		}
	}
	if len(name) >= 2 {
		for _, k := range rs.prefix[name[:2]] {
			if strings.HasPrefix(name, rs.pattern[k]) {
				dst = append(dst, k)
			}
		}
	}
	return dst
}

// matchRules appends the indexes of the rules matching package i. It
// normalises the file name only when a prefix rule could match: on a large
// channel most packages share no first letters with any rule.
func (s *state) matchRules(i int, dst []int) []int {
	rs := s.rules
	if len(rs.rules) == 0 {
		return dst
	}
	creator := ""
	if rs.shortCreator {
		creator = s.creatorKey(i)
	} else if len(rs.creator) > 0 {
		if h, n := normHead(s.pkgs[i].Creator); n == 2 && rs.creatorHeads.has(h) {
			creator = s.creatorKey(i)
		}
	}
	name := ""
	if len(rs.short) > 0 {
		name = s.normName(i)
	} else if len(rs.prefix) > 0 {
		if h, n := normHead(s.pkgs[i].FileName); n == 2 && rs.prefixHeads.has(h) {
			name = s.normName(i)
		}
	}
	return rs.match(name, creator, dst)
}

// normHead is the first two bytes of normalize(s), without allocating. As
// baseName only cuts the end of a name, a base name's normalised form of at
// least two bytes starts with the same two.
func normHead(s string) (head [2]byte, n int) {
	if len(s) >= 2 && isASCIIAlnum(s[0]) && isASCIIAlnum(s[1]) {
		return [2]byte{lowerASCII(s[0]), lowerASCII(s[1])}, 2
	}
	var buf [utf8.UTFMax]byte
	for _, r := range s {
		if !isAlnum(r) {
			if n > 0 {
				head[n] = ' '
				n++
			}
		} else {
			k := utf8.EncodeRune(buf[:], unicode.ToLower(r))
			n += copy(head[n:], buf[:k])
		}
		if n == 2 {
			return head, n
		}
	}
	return head, n
}

// conflicts checks every package of an existing group against the rules:
// the package's group and the groups of the rules it matches, if more than
// one, conflict pairwise. One Conflict per pair collects all packages and
// patterns. Packages of groups created by this plan have no id yet; they are
// checked on the next run.
func (s *state) conflicts() []Conflict {
	if s.rules.empty() {
		return nil
	}
	type pair struct{ a, b int64 }
	type acc struct {
		ids      []int64
		patterns map[string]bool
	}
	found := map[pair]*acc{}
	var buf []int
	var gs []int64
	for i := range s.pkgs {
		g := s.assigned[i]
		if g <= 0 {
			continue
		}
		buf = s.matchRules(i, buf[:0])
		if len(buf) == 0 {
			continue
		}
		gs = append(gs[:0], g)
		for _, k := range buf {
			gs = append(gs, s.rules.rules[k].GroupID)
		}
		slices.Sort(gs)
		gs = slices.Compact(gs)
		for x := 0; x < len(gs); x++ {
			for y := x + 1; y < len(gs); y++ {
				p := pair{gs[x], gs[y]}
				a := found[p]
				if a == nil {
					a = &acc{patterns: map[string]bool{}}
					found[p] = a
				}
				if n := len(a.ids); n == 0 || a.ids[n-1] != s.pkgs[i].ID {
					a.ids = append(a.ids, s.pkgs[i].ID)
				}
				for _, k := range buf {
					if r := s.rules.rules[k]; r.GroupID == p.a || r.GroupID == p.b {
						a.patterns[r.Pattern] = true
					}
				}
			}
		}
	}
	out := make([]Conflict, 0, len(found))
	for p, a := range found {
		pats := make([]string, 0, len(a.patterns))
		for pat := range a.patterns {
			pats = append(pats, pat)
		}
		slices.Sort(pats)
		out = append(out, Conflict{GroupA: p.a, GroupB: p.b, PackageIDs: a.ids, Patterns: pats})
	}
	slices.SortFunc(out, func(x, y Conflict) int {
		return cmp.Or(cmp.Compare(x.GroupA, y.GroupA), cmp.Compare(x.GroupB, y.GroupB))
	})
	return out
}

// Rule confidences given by LearnRule. A longer shared prefix is a more
// specific rule; a creator rule is broad, so it ranks below every prefix.
const (
	minPrefixConfidence = 0.6
	creatorConfidence   = 0.5
	minRulePrefix       = 4
)

// LearnRule learns a rule from the members of a manually created group: a
// PREFIX rule from their longest common normalised file-name prefix (cut back
// to a word boundary when that leaves at least 4 characters) if it has at
// least 4 characters and is not only generic words ("files", "new release"), with confidence 0.6 + 0.02 per character up to 1.0;
// else a CREATOR rule (confidence 0.5) when all members share one non-empty
// creator. It needs at least 2 members; ok is false when nothing can be
// learned. The caller sets the rule's ID and GroupID.
func LearnRule(members []Package) (Rule, bool) {
	if len(members) < 2 {
		return Rule{}, false
	}
	m := slices.Clone(members)
	slices.SortFunc(m, comparePackages)
	names := make([]string, len(m))
	for i, p := range m {
		names[i] = normalize(baseName(p.FileName))
	}
	if slices.Contains(names, "") {
		names = nil
	}
	if len(names) > 0 {
		// A prefix of generic words ("files", "new release") would take in
		// any package: it is no rule.
		if p := commonPrefix(names, minRulePrefix); utf8.RuneCountInString(p) >= minRulePrefix && !allGeneric(p) {
			n := float64(utf8.RuneCountInString(p))
			conf := math.Min(1, minPrefixConfidence+0.02*n)
			return Rule{Kind: RulePrefix, Pattern: p, Confidence: math.Round(conf*100) / 100}, true
		}
	}
	c := normalize(m[0].Creator)
	if c == "" {
		return Rule{}, false
	}
	for _, p := range m[1:] {
		if normalize(p.Creator) != c {
			return Rule{}, false
		}
	}
	return Rule{Kind: RuleCreator, Pattern: strings.TrimSpace(m[0].Creator), Confidence: creatorConfidence}, true
}

func isASCIIAlnum(c byte) bool {
	return ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9')
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
