package grouping

import (
	"cmp"
	"slices"
	"sort"
	"strconv"
	"time"
)

// albumPass groups packages of the same platform album; key = album id, name
// = the album's caption (first captioned message) or else the first file
// name without its extension.
func albumPass(s *state) {
	s.keyPass(SourceAlbum, MinAlbum,
		func(i int) string {
			if s.pkgs[i].AlbumID == 0 {
				return ""
			}
			return strconv.FormatInt(s.pkgs[i].AlbumID, 10)
		},
		func(_ string, idx []int) string {
			m := s.members(idx)
			slices.SortFunc(m, byMessage)
			for _, p := range m {
				if c := captionTitle(p.Caption); c != "" {
					return c
				}
			}
			return displayName(m[0].FileName)
		})
}

// rulesPass moves every ungrouped package that matches a learned rule into
// the group of its best rule (confidence desc, then rule id).
func rulesPass(s *state) {
	if s.rules.empty() {
		return
	}
	var buf []int
	for i := range s.pkgs {
		if s.assigned[i] != 0 {
			continue
		}
		buf = s.matchRules(i, buf[:0])
		if len(buf) == 0 {
			continue
		}
		s.join(s.rules.rules[slices.Min(buf)].GroupID, []int{i})
	}
}

// replyPass groups packages whose reply links lead to the same root message;
// key = root message id. A package that is not a reply has its own message
// as root, so the root package of a chain is a member of the chain's group.
func replyPass(s *state) {
	var r *replyRoots
	for i := range s.pkgs {
		if s.assigned[i] == 0 && s.pkgs[i].ReplyToMessageID != 0 {
			r = newReplyRoots(s.pkgs)
			break
		}
	}
	s.keyPassIf(SourceReply, MinReply,
		func(i int) string {
			p := &s.pkgs[i]
			if p.ReplyToMessageID == 0 {
				if p.SourceMessageID == 0 {
					return ""
				}
				return strconv.FormatInt(p.SourceMessageID, 10)
			}
			return strconv.FormatInt(r.root(p.ReplyToMessageID), 10)
		},
		func(_ string, idx []int) string {
			m := s.members(idx)
			slices.SortFunc(m, byMessage)
			if c := captionTitle(m[0].Caption); c != "" {
				return c
			}
			return NameFor(m)
		},
		// Packages that only share their own message id (duplicates) are
		// no chain: a new group needs a reply.
		func(idx []int) bool {
			return slices.ContainsFunc(idx, func(i int) bool { return s.pkgs[i].ReplyToMessageID != 0 })
		})
}

// replyRoots resolves reply links through the channel's packages.
type replyRoots struct {
	pkgs  []Package
	byMsg map[int64]int // source message id → package index (lowest id)
	memo  map[int64]int64
}

func newReplyRoots(pkgs []Package) *replyRoots {
	r := &replyRoots{pkgs: pkgs, byMsg: make(map[int64]int, len(pkgs)), memo: map[int64]int64{}}
	for i := range pkgs {
		if m := pkgs[i].SourceMessageID; m != 0 {
			if _, ok := r.byMsg[m]; !ok {
				r.byMsg[m] = i
			}
		}
	}
	return r
}

// root follows reply links from message msg to the first message that is not
// a known package replying to something. On a cycle (corrupt data) the root
// is the cycle's lowest message id, the same from every entry point.
func (r *replyRoots) root(msg int64) int64 {
	var path []int64
	cur := msg
	var root int64
	for {
		if v, ok := r.memo[cur]; ok {
			root = v
			break
		}
		j, ok := r.byMsg[cur]
		if !ok || r.pkgs[j].ReplyToMessageID == 0 {
			root = cur
			break
		}
		if at := slices.Index(path, cur); at >= 0 {
			root = slices.Min(path[at:])
			break
		}
		path = append(path, cur)
		cur = r.pkgs[j].ReplyToMessageID
	}
	for _, m := range path {
		r.memo[m] = root
	}
	return root
}

// captionPass groups packages whose captions normalise to the same key.
func captionPass(s *state) {
	s.keyPass(SourceCaption, MinCaption,
		func(i int) string { return CaptionKey(s.pkgs[i].Caption) },
		func(_ string, idx []int) string { return captionTitle(s.earliest(idx).Caption) })
}

// zipPass groups packages sharing the dominant root folder of their archive
// paths; key = the folder, lower-cased.
func zipPass(s *state) {
	s.keyPass(SourceZip, MinZip,
		func(i int) string { return zipKey(RootFolder(s.pkgs[i].Paths)) },
		func(_ string, idx []int) string { return RootFolder(s.earliest(idx).Paths) })
}

// patternPass groups packages sharing a file-name pattern. Date patterns are
// scoped by creator (key "YYYY-MM|creator"): in a channel of many creators,
// "January 2024" of one creator has nothing to do with another's.
func patternPass(s *state) {
	s.keyPass(SourcePattern, MinPattern,
		func(i int) string { return patternGroupKey(PatternKey(s.pkgs[i].FileName), s.creatorKey(i)) },
		func(key string, idx []int) string {
			first := s.earliest(idx)
			pat := PatternKey(first.FileName)
			if isDateKey(pat) {
				if c := trimSeparators(first.Creator); c != "" {
					return c + " – " + pat
				}
				return pat
			}
			if p := patternPrefix(baseName(first.FileName)); p != "" {
				return p
			}
			return key
		})
}

func patternGroupKey(pat, creator string) string {
	if pat == "" || !isDateKey(pat) || creator == "" {
		return pat
	}
	return pat + "|" + creator
}

// creatorPass groups at least MinCreator packages of the same creator; key =
// the normalised creator.
func creatorPass(s *state) {
	s.keyPass(SourceCreator, MinCreator,
		func(i int) string { return s.creatorKey(i) },
		func(_ string, idx []int) string { return trimSeparators(s.earliest(idx).Creator) })
}

// timePass chains packages by source post time: sorted by (PostedAt, ID),
// neighbours at most the window apart belong to one chain. The chain is built
// over the ungrouped packages plus the members of existing AUTO_TIME groups
// within the window of one of them. In a chain with such members, each
// ungrouped package joins the group of the member nearest in time (ties: the
// earlier one); a chain without them forms a new group of at least MinTime
// packages, keyed by its first post time (RFC 3339, UTC), which is unique in
// the channel because chains never overlap.
func timePass(s *state) {
	if s.window <= 0 {
		return
	}
	type item struct {
		t   int64
		i   int
		gid int64 // existing AUTO_TIME group, 0 = ungrouped
	}
	var free []item
	for i := range s.pkgs {
		if s.assigned[i] == 0 && !s.pkgs[i].PostedAt.IsZero() {
			free = append(free, item{t: s.pkgs[i].PostedAt.UnixNano(), i: i})
		}
	}
	if len(free) == 0 {
		return
	}
	byTime := func(a, b item) int { return cmp.Or(cmp.Compare(a.t, b.t), cmp.Compare(a.i, b.i)) }
	slices.SortFunc(free, byTime)
	w := int64(s.window)
	near := func(t int64) bool { // within the window of a free item?
		k := sort.Search(len(free), func(k int) bool { return free[k].t >= t })
		return (k < len(free) && free[k].t-t <= w) || (k > 0 && t-free[k-1].t <= w)
	}
	items := free
	for i := range s.pkgs {
		g := s.assigned[i]
		if g <= 0 || s.pkgs[i].GroupID != g || s.pkgs[i].PostedAt.IsZero() {
			continue
		}
		// near first: it is cheaper than the map lookup.
		if t := s.pkgs[i].PostedAt.UnixNano(); near(t) && s.groups[g].Source == SourceTime {
			if len(items) == len(free) {
				items = slices.Clone(free)
			}
			items = append(items, item{t: t, i: i, gid: g})
		}
	}
	if len(items) != len(free) {
		slices.SortFunc(items, byTime)
	}
	for start := 0; start < len(items); {
		end := start + 1
		for end < len(items) && items[end].t-items[end-1].t <= w {
			end++
		}
		chain := items[start:end]
		start = end
		var freeIdx []int
		hasGroup := false
		for _, it := range chain {
			if it.gid == 0 {
				freeIdx = append(freeIdx, it.i)
			} else {
				hasGroup = true
			}
		}
		if !hasGroup {
			if len(freeIdx) >= MinTime {
				key := time.Unix(0, chain[0].t).UTC().Format(time.RFC3339Nano)
				s.create(SourceTime, key, NameFor(s.members(freeIdx)), freeIdx)
			}
			continue
		}
		// A chain through members of several AUTO_TIME groups bridges them:
		// they become one, the oldest (lowest id), so the result does not
		// depend on the order in which the packages arrived.
		into := int64(0)
		for k := range chain {
			if chain[k].gid != 0 {
				chain[k].gid = s.mergedInto(chain[k].gid)
				if into == 0 || chain[k].gid < into {
					into = chain[k].gid
				}
			}
		}
		for k := range chain {
			if g := chain[k].gid; g != 0 && g != into {
				s.merges[g] = into
				chain[k].gid = into
			}
		}
		// Nearest member on each side, by one sweep each way.
		left := make([]int, len(chain))
		last := -1
		for k, it := range chain {
			if it.gid != 0 {
				last = k
			}
			left[k] = last
		}
		next := -1
		for k := len(chain) - 1; k >= 0; k-- {
			it := chain[k]
			if it.gid != 0 {
				next = k
				continue
			}
			best := left[k]
			if next >= 0 && (best < 0 || chain[next].t-it.t < it.t-chain[best].t) {
				best = next
			}
			s.join(chain[best].gid, []int{it.i})
		}
	}
}

// earliest is the member a group is named from: the first posted, so that
// the name does not depend on the package ids, which follow the order in
// which packages happened to be indexed.
func (s *state) earliest(idx []int) Package {
	best := idx[0]
	for _, i := range idx[1:] {
		if byPost(s.pkgs[i], s.pkgs[best]) < 0 {
			best = i
		}
	}
	return s.pkgs[best]
}

// byPost orders packages by posting: source post time, then source message
// id (unique in a channel), and only for packages without either (manual
// uploads) by id.
func byPost(a, b Package) int {
	if c := a.PostedAt.Compare(b.PostedAt); c != 0 {
		return c
	}
	return byMessage(a, b)
}

// byMessage orders packages by source message id, then id: the order in
// which they were posted.
func byMessage(a, b Package) int {
	return cmp.Or(cmp.Compare(a.SourceMessageID, b.SourceMessageID), cmp.Compare(a.ID, b.ID))
}
