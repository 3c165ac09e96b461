package grouping

import (
	"reflect"
	"testing"
)

func TestLearnRuleAmong(t *testing.T) {
	pkg := func(id int64, name, creator string, group int64) Package {
		return Package{ID: id, FileName: name, Creator: creator, GroupID: group}
	}
	forge := "Dragon Forge"
	// The channel's other packages: an automatic group (7) holding most of
	// Dragon Forge's work, an ungrouped one, and another creator's group.
	others := []Package{
		pkg(10, "Orc Warband.rar", forge, 7),
		pkg(11, "Knight Shield.7z", forge, 7),
		pkg(12, "Painting Guide.pdf", forge, 0),
		pkg(13, "Dragon Wings Left.zip", "Wing Works", 8),
	}
	type want struct {
		Rule        Rule
		OK          bool
		Declined    *Rule
		Clashes     []int64
		ClashGroups []int64
	}
	tests := []struct {
		name    string
		members []Package
		others  []Package
		want    want
	}{
		{"a prefix nothing else has is learned", []Package{pkg(1, "Goblin Camp Tents.zip", forge, 9), pkg(2, "Goblin Camp Fire.zip", forge, 9)}, others,
			want{Rule: Rule{Kind: RulePrefix, Pattern: "goblin camp", Confidence: 0.82}, OK: true}},
		{"a shared creator that other groups hold is declined", []Package{pkg(1, "Dragon_Bust_v2_supported.stl", forge, 9), pkg(2, "Goblin Camp.zip", forge, 9)}, others,
			want{Declined: &Rule{Kind: RuleCreator, Pattern: forge, Confidence: 0.5}, Clashes: []int64{10, 11}, ClashGroups: []int64{7}}},
		{"the word prefix clashes, the whole prefix does not", []Package{pkg(1, "Dragon Wings Right.zip", "Wing Works", 9), pkg(2, "Dragon Wings Rigging.zip", "Wing Works", 9)}, others,
			want{Rule: Rule{Kind: RulePrefix, Pattern: "dragon wings rig", Confidence: 0.92}, OK: true}},
		{"the prefix clashes, the creator does not", []Package{pkg(1, "Knight Helmet.7z", "Knightly", 9), pkg(2, "Knight Sword.zip", "Knightly", 9)}, others,
			want{Rule: Rule{Kind: RuleCreator, Pattern: "Knightly", Confidence: 0.5}, OK: true}},
		{"every candidate clashes: the first is declined", []Package{pkg(1, "Knight Helmet.7z", forge, 9), pkg(2, "Knight Sword.zip", forge, 9)}, others,
			want{Declined: &Rule{Kind: RulePrefix, Pattern: "knight", Confidence: 0.72}, Clashes: []int64{11}, ClashGroups: []int64{7}}},
		{"ungrouped packages never clash: they are what a rule takes in", []Package{pkg(1, "Painting Tips.pdf", "Painter", 9), pkg(2, "Painting Tricks.pdf", "Painter", 9)},
			[]Package{pkg(12, "Painting Guide.pdf", forge, 0)},
			want{Rule: Rule{Kind: RulePrefix, Pattern: "painting", Confidence: 0.76}, OK: true}},
		{"members that share nothing", []Package{pkg(1, "Alpha.zip", "A", 9), pkg(2, "Beta.zip", "B", 9)}, others, want{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := LearnRuleAmong(tt.members, tt.others)
			got := want{Rule: l.Rule, OK: l.OK, Declined: l.Declined, ClashGroups: l.ClashGroups}
			for _, c := range l.Clashes {
				got.Clashes = append(got.Clashes, c.ID)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
				if got.Declined != nil {
					t.Logf("declined %+v", *got.Declined)
				}
			}
		})
	}
}
