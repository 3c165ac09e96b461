package grouping

import (
	"cmp"
	"slices"
	"sort"
	"strconv"
	"time"
	"unicode/utf8"
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
	roots := s.replyRootsNeeded()
	if len(roots) == 0 {
		return
	}
	s.keyPassIf(SourceReply, MinReply,
		func(i int) scopedKey {
			p := &s.pkgs[i]
			if p.ReplyToMessageID == 0 {
				if !roots[p.SourceMessageID] {
					return scopedKey{}
				}
				return scopedKey{key: strconv.FormatInt(p.SourceMessageID, 10)}
			}
			return scopedKey{key: strconv.FormatInt(s.replies.root(p.ReplyToMessageID), 10)}
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

// replyRootsNeeded is the root messages replyPass may group by: the roots
// of ungrouped replies and the keys of existing AUTO_REPLY groups. A package
// that is no reply keys its own message, and most such keys could neither
// form a group (that needs a reply) nor join one: skipping them spares a
// key and a bucket per package. It sets s.replies when there are replies.
func (s *state) replyRootsNeeded() map[int64]bool {
	roots := map[int64]bool{}
	if s.keyed[SourceReply] {
		for k, gid := range s.byKey {
			if k.src != SourceReply || gid == 0 {
				continue
			}
			if m, err := strconv.ParseInt(k.key, 10, 64); err == nil && m != 0 && strconv.FormatInt(m, 10) == k.key {
				roots[m] = true
			}
		}
	}
	for i := range s.pkgs {
		if s.assigned[i] != 0 || s.pkgs[i].ReplyToMessageID == 0 {
			continue
		}
		if s.replies == nil {
			s.replies = newReplyRoots(s.pkgs)
		}
		roots[s.replies.root(s.pkgs[i].ReplyToMessageID)] = true
	}
	return roots
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

// captionPass groups packages of one creator whose captions normalise to the
// same key (key "caption|creator"); generic captions ("New release!") have
// none.
func captionPass(s *state) {
	s.scopedPass(SourceCaption, MinCaption,
		func(i int) scopedKey { return scopedKey{CaptionKey(s.pkgs[i].Caption), s.creatorID(i)} },
		func(_ string, idx []int) string { return captionTitle(s.earliest(idx).Caption) })
}

// zipPass groups packages of one creator sharing the dominant root folder of
// their archive paths; key = the folder, lower-cased, "|creator".
func zipPass(s *state) {
	s.scopedPass(SourceZip, MinZip,
		func(i int) scopedKey {
			_, key := rootFolder(s.pkgs[i].Paths)
			return scopedKey{key, s.creatorID(i)}
		},
		func(_ string, idx []int) string { return RootFolder(s.earliest(idx).Paths) })
}

// scoped keys a signal by creator ("key|creator"): in a channel of many
// creators (a forum's topics are its creators) two of them sharing a
// caption, a folder or a file-name pattern share it by accident; only
// signals about the posts themselves (album, reply, learned rules) span
// creators. Packages without a creator share one scope.
func scoped(key, creator string) string {
	if key == "" || creator == "" {
		return key
	}
	return key + "|" + creator
}

// patternPass groups packages sharing a file-name pattern. Patterns are
// scoped by creator (key "YYYY-MM|creator", "prefix|creator"): in a channel
// of many creators, "January 2024" of one creator has nothing to do with
// another's.
func patternPass(s *state) {
	s.scopedPass(SourcePattern, MinPattern,
		func(i int) scopedKey { return scopedKey{PatternKey(s.pkgs[i].FileName), s.creatorID(i)} },
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

// designPass keeps the variants of one design together. A package's design
// is its file name without variant labels and re-upload markers (see
// VariantLabel): "Frost Giant v2", "Wyvern Rider - Supported (reupload)"
// and "Sand Worm 75mm" are variants of "Frost Giant", "Wyvern Rider" and
// "Sand Worm". An ungrouped package joins the automatic group (existing or
// formed by this run) that holds its design from the same creator — the
// group of the first posted such package — however long after the release
// it came (a v2 weeks later, a re-upload); the ones no group holds form an
// AUTO_PATTERN group of at least MinPattern packages, keyed "design:" +
// design|creator and named by the design. Manual groups take nothing in.
func designPass(s *state) {
	// creator → design → ungrouped packages
	byKey := map[int32]map[string][]int{}
	n := 0
	for i := range s.pkgs {
		if s.assigned[i] != 0 {
			continue
		}
		k := designKey(s.normName(i))
		if k == "" {
			continue
		}
		c := s.creatorID(i)
		m := byKey[c]
		if m == nil {
			m = map[string][]int{}
			byKey[c] = m
		}
		m[k] = append(m[k], i)
		n++
	}
	if n == 0 {
		return
	}
	// A design key starts with the first two bytes of its normalised name
	// unless the name starts with a word designKey drops: heads filter the
	// grouped packages before their names are normalised.
	var heads headSet
	for _, m := range byKey {
		for k := range m {
			if len(k) >= 2 {
				heads.add(k[0], k[1])
			}
		}
	}
	holder := map[scopedKey]int{} // (design, creator) → earliest posted grouped package
	var scratch []byte
	for i := range s.pkgs {
		g := s.assigned[i]
		if g == 0 || g == held {
			continue
		}
		if h, n := normHead(s.pkgs[i].FileName); n == 2 && !heads.has(h) && !variantStart[h[0]] {
			continue
		}
		c := s.creatorID(i)
		m := byKey[c]
		if m == nil {
			continue
		}
		if gr, ok := s.groups[g]; g > 0 && (!ok || gr.Source == SourceManual) {
			continue
		}
		// Most names hold no variant: their design key is the normalised
		// name itself, looked up without a copy.
		scratch = appendNormalized(scratch[:0], baseName(s.pkgs[i].FileName))
		k := ""
		if _, ok := m[string(scratch)]; ok {
			k = string(scratch)
		} else if mayHoldVariantBytes(scratch) {
			k = designKey(string(scratch))
			if _, ok := m[k]; !ok {
				continue
			}
		} else {
			continue
		}
		sk := scopedKey{k, c}
		if h, ok := holder[sk]; !ok || byPost(s.pkgs[i], s.pkgs[h]) < 0 {
			holder[sk] = i
		}
	}
	keys := make([]scopedKey, 0, n)
	for c, m := range byKey {
		for k := range m {
			keys = append(keys, scopedKey{k, c})
		}
	}
	slices.SortFunc(keys, func(a, b scopedKey) int {
		return cmp.Or(cmp.Compare(a.key, b.key), cmp.Compare(s.creatorNames[a.scope], s.creatorNames[b.scope]))
	})
	for _, sk := range keys {
		m, k := byKey[sk.scope][sk.key], s.scoped(sk)
		if h, ok := holder[sk]; ok {
			s.attach(s.assigned[h], m)
			continue
		}
		if gid, ok := s.byKey[groupKey{SourcePattern, "design:" + k}]; ok {
			s.join(gid, m)
			continue
		}
		if len(m) >= MinPattern {
			s.create(SourcePattern, "design:"+k, designName(s.earliest(m).FileName), m)
		}
	}
}

// attach adds members to group g: an existing group (g > 0) or the new group
// g refers to (g < 0).
func (s *state) attach(g int64, members []int) {
	if g > 0 {
		s.join(g, members)
		return
	}
	n := int(-g - 1)
	for _, i := range members {
		s.assigned[i] = g
		s.newGroups[n].PackageIDs = append(s.newGroups[n].PackageIDs, s.pkgs[i].ID)
	}
	slices.Sort(s.newGroups[n].PackageIDs)
	s.newMembers[n] = append(s.newMembers[n], members...)
}

// creatorPass groups at least MinCreator packages of the same creator; key =
// the normalised creator.
func creatorPass(s *state) {
	s.keyPass(SourceCreator, MinCreator,
		func(i int) string { return s.creatorKey(i) },
		func(_ string, idx []int) string { return trimSeparators(s.earliest(idx).Creator) })
}

// timeItem is one package on the time line of timePass.
type timeItem struct {
	t   int64
	i   int
	gid int64 // existing AUTO_TIME group, 0 = ungrouped
}

// timePass chains packages by source post time: sorted by (PostedAt, ID),
// neighbours at most the window apart belong to one chain, a session of the
// channel. The chain is built over the ungrouped packages plus the members
// of existing AUTO_TIME groups within the window of one of them. A group is
// one release of a session (see releases): the posts of one creator, so
// that interleaved forum topics or reposted creators never share a group
// because of the time alone. In a release with members of existing groups,
// each ungrouped package joins the group of the member nearest in time
// (ties: the earlier one); a release without them forms a new group of at
// least MinTime packages, keyed by its first post time (RFC 3339, UTC) and
// its release key, which is unique in the channel because chains never
// overlap.
func timePass(s *state) {
	if s.window <= 0 {
		return
	}
	n := 0
	for i := range s.pkgs {
		if s.assigned[i] == 0 && !s.pkgs[i].PostedAt.IsZero() {
			n++
		}
	}
	free := make([]timeItem, 0, n)
	for i := range s.pkgs {
		if s.assigned[i] == 0 && !s.pkgs[i].PostedAt.IsZero() {
			free = append(free, timeItem{t: s.pkgs[i].PostedAt.UnixNano(), i: i})
		}
	}
	if len(free) == 0 {
		return
	}
	byTime := func(a, b timeItem) int { return cmp.Or(cmp.Compare(a.t, b.t), cmp.Compare(a.i, b.i)) }
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
			items = append(items, timeItem{t: t, i: i, gid: g})
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
		if len(chain) < MinTime {
			continue
		}
		for _, r := range s.releases(chain) {
			s.timeRelease(r.key, r.items)
		}
	}
}

// release is one part of a time chain.
type release struct {
	key   string
	items []timeItem
}

// releases splits a chain into its releases, in key order, each in time
// order: the posts of each creator (key: the normalised creator; packages
// without one are one release), and where one creator's posts carry two or
// more file-name dates (a reposted backlog of monthly releases) the posts of
// each date ("creator|YYYY-MM"), the undated ones apart ("creator|").
func (s *state) releases(chain []timeItem) []release {
	first := s.creatorID(chain[0].i)
	same := true
	for _, it := range chain[1:] {
		if s.creatorID(it.i) != first {
			same = false
			break
		}
	}
	var parts []release
	if same {
		parts = []release{{key: s.creatorNames[first], items: chain}}
	} else {
		at := map[int32]int{}
		for _, it := range chain {
			c := s.creatorID(it.i)
			k, ok := at[c]
			if !ok {
				k = len(parts)
				at[c] = k
				parts = append(parts, release{key: s.creatorNames[c]})
			}
			parts[k].items = append(parts[k].items, it)
		}
	}
	out := parts[:0:0]
	for _, p := range parts {
		if len(p.items) < MinTime {
			continue
		}
		out = append(out, s.byDate(p)...)
	}
	slices.SortFunc(out, func(a, b release) int { return cmp.Compare(a.key, b.key) })
	return out
}

// byDate splits a creator's release by file-name date when it holds two
// dates or more.
func (s *state) byDate(r release) []release {
	dates := make([]string, len(r.items))
	distinct := ""
	several := false
	for k, it := range r.items {
		d := s.dateKey(it.i)
		dates[k] = d
		if d != "" {
			if distinct == "" {
				distinct = d
			} else if d != distinct {
				several = true
			}
		}
	}
	if !several {
		return []release{r}
	}
	at := map[string]int{}
	var out []release
	for k, it := range r.items {
		key := r.key + "|" + dates[k]
		n, ok := at[key]
		if !ok {
			n = len(out)
			at[key] = n
			out = append(out, release{key: key})
		}
		out[n].items = append(out[n].items, it)
	}
	return out
}

// dateKey is the file-name date of package i ("YYYY-MM"), "" if none.
func (s *state) dateKey(i int) string {
	base := baseName(s.pkgs[i].FileName)
	if k := numericDate(base); k != "" {
		return k
	}
	// A month name needs a year next to it: four digits in a row.
	for k := 0; k+4 <= len(base); k++ {
		if isDigit(base[k]) && isDigit(base[k+1]) && isDigit(base[k+2]) && isDigit(base[k+3]) {
			return monthNameDate(base)
		}
	}
	return ""
}

// timeRelease groups one release of a time chain (see timePass).
func (s *state) timeRelease(rkey string, chain []timeItem) {
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
			if rkey != "" {
				key += "|" + rkey
			}
			s.create(SourceTime, key, s.releaseName(freeIdx), freeIdx)
		}
		return
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

// releaseName names a release as a person would: the members' common
// file-name prefix (NameFor), else the first caption that is not generic
// (its first sentence), else the first posted member's design name (its
// file name without variant labels).
func (s *state) releaseName(idx []int) string {
	ord := slices.Clone(idx)
	slices.SortFunc(ord, func(a, b int) int { return byPost(s.pkgs[a], s.pkgs[b]) })
	names := make([]string, len(ord))
	for k, i := range ord {
		names[k] = baseName(s.pkgs[i].FileName)
	}
	if p := commonPrefix(names, 3); utf8.RuneCountInString(p) >= 3 && !allGeneric(p) {
		return p
	}
	for _, i := range ord {
		if c := s.pkgs[i].Caption; !genericCaption(c) {
			if t := captionSentence(c); t != "" {
				return t
			}
		}
	}
	first := s.pkgs[ord[0]].FileName
	if d := designName(first); d != "" {
		return d
	}
	return displayName(first)
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
