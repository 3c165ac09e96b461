package main

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/store/storetest"
)

// checkGroupsSensible checks a catalog's groups as a collector would see
// them, after a cycle:
//   - an automatic group, unless an album or a reply chain (which follow the
//     posts themselves), holds the posts of one source topic or of one
//     creator: a forum's topics are its creators, and no automatic group
//     spans two of them;
//   - every group has at least two packages, so that the Ungrouped tab (the
//     catalog's search for packages in no group) lists every package that
//     truly has no group, and nothing else;
//   - a group's name is readable: trimmed, not empty, at most 120
//     characters, no file extension, not only words any post carries;
//   - the bot's `/group NAME` finds each group by its name (the store call
//     it makes, first among the matches it shows) with the members the
//     web's group page lists.
func checkGroupsSensible(t *testing.T, url string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db, err := store.Open(ctx, url, store.Options{MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	type group struct {
		id               int64
		source, name     string
		members          []string
		topics, creators int
		creatorless      bool
	}
	type memberFacts struct {
		names            []string
		topics, creators map[string]bool
		creatorless      bool
	}
	byGroup := map[int64]*memberFacts{}
	for _, p := range storetest.Packages(t, db) {
		if p.PackageGroupID == 0 {
			continue
		}
		m := byGroup[p.PackageGroupID]
		if m == nil {
			m = &memberFacts{topics: map[string]bool{}, creators: map[string]bool{}}
			byGroup[p.PackageGroupID] = m
		}
		m.names = append(m.names, p.FileName)
		m.topics[fmt.Sprintf("%d/%d", p.SourceChannelID, p.SourceTopicID)] = true
		if p.Creator == "" {
			m.creatorless = true
		} else {
			m.creators[strings.ToLower(p.Creator)] = true
		}
	}
	var groups []group
	for _, pg := range storetest.Groups(t, db) {
		g := group{id: pg.ID, source: string(pg.GroupingSource), name: pg.Name, members: []string{}}
		if m := byGroup[pg.ID]; m != nil {
			g.members, g.topics, g.creators, g.creatorless = slices.Sorted(slices.Values(m.names)), len(m.topics), len(m.creators), m.creatorless
		}
		groups = append(groups, g)
	}
	var problems []string
	for _, g := range groups {
		what := fmt.Sprintf("%s group %q", g.source, g.name)
		if len(g.members) < 2 {
			problems = append(problems, fmt.Sprintf("%s has %d members", what, len(g.members)))
		}
		if auto := g.source != "MANUAL" && g.source != "ALBUM" && g.source != "AUTO_REPLY"; auto && g.topics > 1 &&
			(g.creators != 1 || g.creatorless) {
			problems = append(problems, fmt.Sprintf("%s spans %d topics and %d creators: %q", what, g.topics, g.creators, g.members))
		}
		if p := groupNameProblem(g.name); p != "" {
			problems = append(problems, what+": "+p)
		}
		found, err := db.SearchGroupsByName(ctx, g.name, 8) // the bot's /group NAME shows 8 matches
		if err != nil {
			t.Fatal(err)
		}
		if len(found) == 0 || found[0].ID != g.id {
			problems = append(problems, fmt.Sprintf("%s: /group %s does not show it first", what, g.name))
		} else if found[0].MemberCount != len(g.members) {
			problems = append(problems, fmt.Sprintf("%s: /group %s says %d packages, the web %d", what, g.name, found[0].MemberCount, len(g.members)))
		}
		listed, _, err := db.ListPackages(ctx, store.PackageFilter{GroupID: g.id}, nil, 20) // /group N lists 20
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, p := range listed {
			names = append(names, p.FileName)
		}
		if slices.Sort(names); !slices.Equal(names, g.members) {
			problems = append(problems, fmt.Sprintf("%s: /group %d lists %q, the web %q", what, g.id, names, g.members))
		}
	}
	if got := ungroupedTab(ctx, t, db); !slices.Equal(got, ungroupedRows(t, db)) {
		problems = append(problems, fmt.Sprintf("the Ungrouped tab lists %q, the packages in no group are %q", got, ungroupedRows(t, db)))
	}
	if len(problems) > 0 {
		t.Errorf("groups a collector would not make:\n%s", strings.Join(problems, "\n"))
	}
}

// genericNameWords are words any post may carry: a group named only by them
// says nothing.
var genericNameWords = map[string]bool{"new": true, "release": true, "files": true, "file": true, "stl": true,
	"stls": true, "model": true, "models": true, "supported": true, "unsupported": true, "presupported": true,
	"the": true, "a": true, "enjoy": true, "update": true, "reposted": true, "group": true}

// groupNameProblem says what is wrong with a group's name, "" if nothing.
func groupNameProblem(name string) string {
	switch ext := strings.ToLower(path.Ext(name)); {
	case name != strings.TrimSpace(name) || name == "":
		return "its name is empty or untrimmed"
	case utf8.RuneCountInString(name) > 120:
		return "its name is longer than 120 characters"
	case slices.Contains([]string{".zip", ".rar", ".7z", ".stl", ".pdf", ".obj", ".3mf", ".001", ".002"}, ext):
		return "its name is a file name"
	}
	for _, w := range strings.FieldsFunc(strings.ToLower(name), func(r rune) bool { return !('a' <= r && r <= 'z' || '0' <= r && r <= '9' || r > 127) }) {
		if !genericNameWords[w] {
			return ""
		}
	}
	return "its name says nothing"
}

// ungroupedTab is what the catalog's Ungrouped tab lists, every page, by file name.
func ungroupedTab(ctx context.Context, t *testing.T, db *store.DB) []string {
	t.Helper()
	no := false
	q := store.SearchQuery{Grouped: &no, Sort: store.SortName, Limit: 200}
	var out []string
	for {
		res, err := db.SearchPackages(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range res.Hits {
			out = append(out, h.Package.FileName)
		}
		if res.Next == nil {
			break
		}
		q.After = res.Next
	}
	slices.Sort(out)
	return out
}

// ungroupedRows are the packages in no group (or in a group of fewer than
// two), by file name: the packages that truly have no group.
func ungroupedRows(t *testing.T, db *store.DB) []string {
	t.Helper()
	packages := storetest.Packages(t, db)
	members := map[int64]int{}
	for _, p := range packages {
		members[p.PackageGroupID]++
	}
	var out []string
	for _, p := range packages {
		if p.PackageGroupID == 0 || members[p.PackageGroupID] < 2 {
			out = append(out, p.FileName)
		}
	}
	slices.Sort(out)
	return out
}
