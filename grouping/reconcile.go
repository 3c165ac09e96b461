package grouping

import (
	"cmp"
	"slices"
)

// reconcile turns the groups the passes formed from scratch (Input.Reevaluate)
// into changes of the existing automatic groups. A new group continues an
// existing automatic group of its source: the one with its key, else the one
// that holds most of its members (ties: the lowest id); an existing group
// continues at most one new group. A continued group gets the members it
// lacks as joins and, when its name or key differ, a rename; the other new
// groups stay new. Packages of automatic groups placed nowhere are
// ungrouped; automatic groups that continue nothing are dissolved. Which
// existing group continues which new one changes ids only, never members or
// names, so the outcome stays independent of the arrival order.
func (s *state) reconcile() (renames []Rename, ungroup, dissolve []int64) {
	continued := s.continuations()
	var keep []NewGroup
	var keepMembers [][]int
	for n, ng := range s.newGroups {
		gid := continued[n]
		if gid == 0 {
			s.assignNew(len(keep), s.newMembers[n])
			keep, keepMembers = append(keep, ng), append(keepMembers, s.newMembers[n])
			continue
		}
		s.join(gid, s.newMembers[n])
		if g := s.groups[gid]; g.Name != ng.Name || g.Key != ng.Key {
			renames = append(renames, Rename{GroupID: gid, Name: ng.Name, Key: ng.Key})
		}
	}
	s.newGroups, s.newMembers = keep, keepMembers

	held := map[int64]bool{} // groups that hold a package now
	for i, g := range s.assigned {
		if g > 0 {
			held[g] = true
		}
		if s.cur[i] != 0 && g == 0 {
			ungroup = append(ungroup, s.pkgs[i].ID)
		}
	}
	for _, g := range s.cur {
		if g != 0 && !held[g] {
			held[g] = true // report once
			dissolve = append(dissolve, g)
		}
	}
	slices.Sort(dissolve)
	slices.SortFunc(renames, func(a, b Rename) int { return cmp.Compare(a.GroupID, b.GroupID) })
	return renames, ungroup, dissolve
}

// continuations maps each new group (by index) to the existing automatic
// group it continues, 0 = none.
func (s *state) continuations() []int64 {
	out := make([]int64, len(s.newGroups))
	used := map[int64]bool{}
	byKey := map[groupKey]int64{}
	for _, g := range s.groups {
		k := groupKey{g.Source, g.Key}
		if g.Source == SourceManual || g.Key == "" {
			continue
		}
		if old, ok := byKey[k]; !ok || g.ID < old {
			byKey[k] = g.ID
		}
	}
	for n, ng := range s.newGroups {
		if gid, ok := byKey[groupKey{ng.Source, ng.Key}]; ok && !used[gid] {
			out[n], used[gid] = gid, true
		}
	}
	for n, ng := range s.newGroups {
		if out[n] != 0 {
			continue
		}
		counts := map[int64]int{}
		best := int64(0)
		for _, i := range s.newMembers[n] {
			g := s.cur[i]
			if g == 0 || used[g] || s.groups[g].Source != ng.Source {
				continue
			}
			counts[g]++
			if best == 0 || counts[g] > counts[best] || (counts[g] == counts[best] && g < best) {
				best = g
			}
		}
		if best != 0 {
			out[n], used[best] = best, true
		}
	}
	return out
}

// assignNew marks members as members of the new group at index n.
func (s *state) assignNew(n int, members []int) {
	for _, i := range members {
		s.assigned[i] = -int64(n + 1)
	}
}
