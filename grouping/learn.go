package grouping

import (
	"math"
	"slices"
	"strings"
	"unicode/utf8"
)

// maxClashes bounds the packages a Learning names as clashes.
const maxClashes = 20

// Learning is what LearnRuleAmong decided for a manual group.
type Learning struct {
	// Rule is the rule learned; OK reports that there is one.
	Rule Rule
	OK   bool
	// Declined is the rule the members suggest that was not learned
	// because it also matches packages of other groups; Clashes are those
	// packages (at most 20) and ClashGroups their groups, sorted. Declined
	// is nil when a rule was learned or the members share nothing.
	Declined    *Rule
	Clashes     []Package
	ClashGroups []int64
}

// LearnRuleAmong learns the rule of a manual group from its members, as
// LearnRule does, but never one that also matches packages that are in
// other groups already (others: the channel's packages outside the group):
// such a rule would raise grouping conflicts at once instead of growing the
// group. Its candidates, in order: the members' shared file-name prefix
// cut back to a word (LearnRule's), the whole shared prefix (narrower), then
// their shared creator. It learns the first that matches no package of
// another group. When every candidate does, it learns none and returns the
// first as Declined with what it clashes with, for a person to decide.
func LearnRuleAmong(members, others []Package) Learning {
	cands := ruleCandidates(members)
	if len(cands) == 0 {
		return Learning{}
	}
	var first Learning
	for i, r := range cands {
		clashes, groups := clashesOf(r, others)
		if len(clashes) == 0 {
			return Learning{Rule: r, OK: true}
		}
		if i == 0 {
			declined := r
			first = Learning{Declined: &declined, Clashes: clashes, ClashGroups: groups}
		}
	}
	return first
}

// ruleCandidates are the rules the members suggest, most specific first
// (see LearnRuleAmong).
func ruleCandidates(members []Package) []Rule {
	var out []Rule
	if r, ok := LearnRule(members); ok {
		out = append(out, r)
		if r.Kind == RulePrefix {
			if whole := wholePrefix(members); utf8.RuneCountInString(whole) > utf8.RuneCountInString(r.Pattern) {
				n := float64(utf8.RuneCountInString(whole))
				out = append(out, Rule{Kind: RulePrefix, Pattern: whole,
					Confidence: math.Round(math.Min(1, minPrefixConfidence+0.02*n)*100) / 100})
			}
			if c, ok := sharedCreator(members); ok {
				out = append(out, Rule{Kind: RuleCreator, Pattern: c, Confidence: creatorConfidence})
			}
		}
	}
	return out
}

// wholePrefix is the members' longest shared normalised file-name prefix,
// not cut back to a word boundary.
func wholePrefix(members []Package) string {
	names := make([]string, len(members))
	for i, p := range members {
		names[i] = normalize(baseName(p.FileName))
	}
	end := len(names[0])
	for _, n := range names[1:] {
		end = sharedLen(names[0][:end], n)
	}
	return trimSeparators(names[0][:end])
}

// sharedCreator is the creator every member has, when they share one.
func sharedCreator(members []Package) (string, bool) {
	c := normalize(members[0].Creator)
	if c == "" {
		return "", false
	}
	for _, p := range members[1:] {
		if normalize(p.Creator) != c {
			return "", false
		}
	}
	return strings.TrimSpace(members[0].Creator), true
}

// clashesOf returns the packages of other groups that r matches (at most
// maxClashes, in the order of others) and all their groups, sorted.
func clashesOf(r Rule, others []Package) ([]Package, []int64) {
	var clashes []Package
	var groups []int64
	for _, o := range others {
		if o.GroupID == 0 || !r.Matches(o) {
			continue
		}
		if len(clashes) < maxClashes {
			clashes = append(clashes, o)
		}
		groups = append(groups, o.GroupID)
	}
	slices.Sort(groups)
	return clashes, slices.Compact(groups)
}
