package archive

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Message is one candidate file message of a channel or topic.
type Message struct {
	ID   int64
	Name string
	Size int64
	Date time.Time
}

// Part is a message placed in a set.
type Part struct {
	Message
	// Number is the part's order key (see NameInfo.Number); the final .zip
	// of a ZipSpanned set gets the number after the highest .zNN.
	Number int
}

// Set is a group of messages that together form one file: a single file or
// the parts of a multi-part archive.
type Set struct {
	// Key identifies the set within its channel or topic:
	// "<scheme>:<lower-cased stem>"; a single file is keyed by its lower-cased
	// name, with "#<message id>" appended when a different file of the same
	// name was posted.
	Key string
	// BaseName is the human name of the package, without part suffix and
	// archive extension ("x" for x.part1.rar).
	BaseName string
	// Scheme is the naming scheme of the parts.
	Scheme Scheme
	// Type is the type implied by the names (Unknown for numbered parts of
	// an unknown inner type: the content decides).
	Type Type
	// Parts are the distinct parts in order.
	Parts []Part
	// Duplicates are re-posts of a part already in Parts (same name, same
	// size); the earliest message is kept.
	Duplicates []Message
	// Conflicts are messages that carry an already-placed part number but
	// another name or size; their presence makes the set incomplete.
	Conflicts []Message
	// TotalSize is the sum of the sizes of Parts.
	TotalSize int64
	// FirstMessageID is the smallest message id among Parts.
	FirstMessageID int64
	// Newest is the latest post date among Parts.
	Newest time.Time
	// Complete is false when parts are missing or conflict; Reason then
	// says which, naming the missing parts.
	Complete bool
	Reason   string
}

// MultiPart reports whether the set is made of more than one part or uses a
// multi-part naming scheme.
func (s Set) MultiPart() bool { return s.Scheme != Single }

// Settled reports whether the newest part of the set was posted at least
// settle before now. A set that is not settled may still be receiving parts
// and is held back by the caller.
func (s Set) Settled(now time.Time, settle time.Duration) bool {
	return !s.Newest.After(now.Add(-settle))
}

// GroupSets groups the candidate messages of one channel or topic into sets.
// Non-candidate names are ignored. Parts are ordered, re-posts of a part with
// the same name and size are moved to Duplicates, and a set with missing
// parts, without its first part, or with two different files for one part is
// marked incomplete with a reason. Sets are returned ordered by
// FirstMessageID. The result does not depend on the order of msgs.
func GroupSets(msgs []Message) []Set {
	type member struct {
		info NameInfo
		msg  Message
	}
	groups := map[string][]member{}
	var singles []member
	sorted := slices.Clone(msgs)
	slices.SortFunc(sorted, func(a, b Message) int {
		return cmp.Or(cmp.Compare(a.ID, b.ID), cmp.Compare(a.Name, b.Name), cmp.Compare(a.Size, b.Size))
	})
	for _, m := range sorted {
		info, ok := ParseName(m.Name)
		if !ok {
			continue
		}
		if info.Scheme == Single {
			singles = append(singles, member{info, m})
			continue
		}
		k := string(info.Scheme) + ":" + strings.ToLower(info.Stem)
		groups[k] = append(groups[k], member{info, m})
	}
	// A plain x.rar or x.zip belongs to an old-style volume set of the same
	// stem when one exists (it is its first, resp. last, part).
	var rest []member
	for _, s := range singles {
		var k string
		switch s.info.Type {
		case RAR:
			k = string(RarVolume) + ":" + strings.ToLower(s.info.Base)
		case ZIP:
			k = string(ZipSpanned) + ":" + strings.ToLower(s.info.Base)
		}
		if _, ok := groups[k]; ok && k != "" {
			info := s.info
			info.Scheme, info.Stem = RarVolume, s.info.Base
			if s.info.Type == ZIP {
				info.Scheme, info.Number = ZipSpanned, -1
			}
			groups[k] = append(groups[k], member{info, s.msg})
			continue
		}
		rest = append(rest, s)
	}

	var sets []Set
	for k, ms := range groups {
		parts := make([]Part, 0, len(ms))
		for _, m := range ms {
			parts = append(parts, Part{Message: m.msg, Number: m.info.Number})
		}
		sets = append(sets, buildSet(k, ms[0].info, parts))
	}
	// Singles: same name and size is a re-post; same name with another
	// size is a different file.
	byName := map[string][]member{}
	var order []string
	for _, s := range rest {
		k := strings.ToLower(s.info.Name)
		if _, ok := byName[k]; !ok {
			order = append(order, k)
		}
		byName[k] = append(byName[k], s)
	}
	for _, k := range order {
		ms := byName[k]
		seen := map[int64]int{} // size → index in sets
		for _, m := range ms {
			if i, ok := seen[m.msg.Size]; ok {
				sets[i].Duplicates = append(sets[i].Duplicates, m.msg)
				continue
			}
			key := "single:" + k
			if len(seen) > 0 {
				key += fmt.Sprintf("#%d", m.msg.ID)
			}
			seen[m.msg.Size] = len(sets)
			sets = append(sets, Set{
				Key: key, BaseName: m.info.Base, Scheme: Single, Type: m.info.Type,
				Parts: []Part{{Message: m.msg}}, TotalSize: m.msg.Size,
				FirstMessageID: m.msg.ID, Newest: m.msg.Date, Complete: true,
			})
		}
	}
	// Sort indices, not the (large) Set values.
	idx := make([]int, len(sets))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		return cmp.Or(cmp.Compare(sets[a].FirstMessageID, sets[b].FirstMessageID), cmp.Compare(sets[a].Key, sets[b].Key))
	})
	out := make([]Set, len(sets))
	for i, j := range idx {
		out[i] = sets[j]
	}
	return out
}

// buildSet orders, dedupes and checks the parts of one multi-part group.
func buildSet(key string, info NameInfo, parts []Part) Set {
	s := Set{Key: key, BaseName: info.Base, Scheme: info.Scheme, Type: info.Type}
	// The final x.zip of an Info-ZIP split follows the highest .zNN.
	if info.Scheme == ZipSpanned {
		maxN := 0
		for _, p := range parts {
			maxN = max(maxN, p.Number)
		}
		for i := range parts {
			if parts[i].Number < 0 {
				parts[i].Number = maxN + 1
			}
		}
	}
	slices.SortFunc(parts, func(a, b Part) int {
		return cmp.Or(cmp.Compare(a.Number, b.Number), cmp.Compare(a.ID, b.ID))
	})
	var conflicts []string
	for _, p := range parts {
		if n := len(s.Parts); n > 0 && s.Parts[n-1].Number == p.Number {
			last := s.Parts[n-1]
			if last.Size == p.Size && strings.EqualFold(last.Name, p.Name) {
				s.Duplicates = append(s.Duplicates, p.Message)
			} else {
				conflicts = append(conflicts, fmt.Sprintf("%s (%d and %d bytes)", p.Name, last.Size, p.Size))
				s.Conflicts = append(s.Conflicts, p.Message)
			}
			continue
		}
		s.Parts = append(s.Parts, p)
	}
	// Stem and digits as posted, for naming missing parts.
	named := info
	for _, p := range s.Parts {
		if pi, ok := ParseName(p.Name); ok && pi.Scheme == info.Scheme {
			named.Stem, named.Digits = pi.Stem, pi.Digits
			break
		}
	}
	s.FirstMessageID = s.Parts[0].ID
	for _, p := range s.Parts {
		s.TotalSize += p.Size
		s.FirstMessageID = min(s.FirstMessageID, p.ID)
		if p.Date.After(s.Newest) {
			s.Newest = p.Date
		}
	}
	// Expected numbering: RarVolume starts at 0 (x.rar), the others at 1
	// (or 0 when a part 0 was posted).
	first := 1
	if info.Scheme == RarVolume || s.Parts[0].Number == 0 {
		first = 0
	}
	// Walk the gaps between consecutive part numbers: O(parts), however
	// large the numbers in the names are.
	const maxNamed = 20
	var missing []string
	nMissing := 0
	expect := first
	for _, p := range s.Parts {
		for n := expect; n < p.Number; n++ {
			if len(missing) == maxNamed {
				nMissing += p.Number - n
				break
			}
			missing = append(missing, partName(named, n))
			nMissing++
		}
		expect = max(expect, p.Number+1)
	}
	var reasons []string
	if info.Scheme == ZipSpanned && !hasFinalZip(s.Parts) {
		reasons = append(reasons, "missing final part "+named.Stem+".zip")
	}
	if nMissing > 0 {
		r := "missing part"
		if nMissing > 1 {
			r += "s"
		}
		r += " " + strings.Join(missing, ", ")
		if nMissing > len(missing) {
			r += fmt.Sprintf(" and %d more", nMissing-len(missing))
		}
		reasons = append(reasons, r)
	}
	if len(conflicts) > 0 {
		reasons = append(reasons, "different files posted as the same part: "+strings.Join(conflicts, ", "))
	}
	s.Complete = len(reasons) == 0
	s.Reason = strings.Join(reasons, "; ")
	return s
}

func hasFinalZip(parts []Part) bool {
	for _, p := range parts {
		if info, ok := ParseName(p.Name); ok && info.Scheme == Single {
			return true
		}
	}
	return false
}
