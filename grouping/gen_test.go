package grouping

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

var (
	genFirst  = []string{"Mammoth", "Dragon", "Iron", "Shadow", "Crystal", "Golden", "Arcane", "Rusty", "Silver", "Wild", "Epic", "Tiny", "Grim", "Lost", "Clockwork"}
	genSecond = []string{"Factory", "Forge", "Minis", "Studio", "Works", "Trappers Lodge", "Miniatures", "Sculpts", "Creations", "Legends", "Printables", "Guild"}
	genModels = []string{"Dragon", "Knight", "Orc Warband", "Goblin King", "Lich", "Paladin", "Wyvern", "Dwarf Ranger", "Elf Archer", "Beholder", "Treant", "Owlbear", "Mimic", "Necromancer", "Titan", "Hydra", "Centaur", "Kraken", "Golem", "Vampire Lord"}
	genVar    = []string{"Supported", "Unsupported", "Bust", "Base", "Bundle", "Terrain", "Arms", "Weapons", "Pre-Supported", "Hollow"}
	genMonth  = []string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}
)

// generate builds a realistic channel of n packages: creators posting in
// sessions (bursts of a few minutes, hours apart), monthly releases, albums,
// reply chains, captions and archive folders, plus a few manual groups with
// their learned rules. It is deterministic for a seed.
func generate(n int, seed uint64) Input {
	r := rand.New(rand.NewPCG(seed, 42))
	creators := make([]string, 0, len(genFirst)*len(genSecond))
	for _, a := range genFirst {
		for _, b := range genSecond {
			creators = append(creators, a+" "+b)
		}
	}
	in := Input{AutoGroupEnabled: true, TimeWindow: 5 * time.Minute}
	now := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	msg := int64(1000)
	var album int64
	for len(in.Packages) < n {
		// One session: one creator, 1–8 posts.
		now = now.Add(time.Duration(1+r.IntN(12)) * time.Hour)
		creator := creators[min(r.IntN(len(creators)), r.IntN(len(creators)))] // skewed
		size := 1 + r.IntN(8)
		albumID := int64(0)
		if r.IntN(10) == 0 {
			album++
			albumID = album
		}
		style := r.IntN(6)
		caption := ""
		if r.IntN(3) == 0 {
			caption = fmt.Sprintf("%s %s %s collection", genFirst[r.IntN(len(genFirst))], genModels[r.IntN(len(genModels))], genVar[r.IntN(len(genVar))])
		}
		root := int64(0)
		project := genFirst[r.IntN(len(genFirst))] + " " + genModels[r.IntN(len(genModels))] + " Project"
		for k := 0; k < size && len(in.Packages) < n; k++ {
			now = now.Add(time.Duration(30+r.IntN(150)) * time.Second)
			msg += int64(1 + r.IntN(3))
			model := genFirst[r.IntN(len(genFirst))] + " " + genModels[r.IntN(len(genModels))]
			variant := genVar[r.IntN(len(genVar))]
			var name string
			switch style {
			case 0:
				name = fmt.Sprintf("%s - %s - %s.zip", creator, now.Format("2006-01"), model)
			case 1:
				name = fmt.Sprintf("%s_%s_%d.rar", strings.ReplaceAll(model, " ", "_"), variant, r.IntN(100))
			case 2:
				name = fmt.Sprintf("%s (%s).7z", model, variant)
			case 3:
				name = fmt.Sprintf("%s %s %d %s.zip", creator, genMonth[now.Month()-1], now.Year(), model)
			case 4:
				name = fmt.Sprintf("%s %s.part1.rar", model, variant)
			default:
				name = fmt.Sprintf("%s%d.zip", strings.ReplaceAll(model, " ", ""), r.IntN(1000))
			}
			p := Package{
				ID:              int64(len(in.Packages))*3 + 7,
				FileName:        name,
				Creator:         creator,
				PostedAt:        now,
				AlbumID:         albumID,
				SourceMessageID: msg,
			}
			if k == 0 {
				root = msg
			} else if r.IntN(20) == 0 {
				p.ReplyToMessageID = root
			}
			if k == 0 || r.IntN(2) == 0 {
				p.Caption = caption
			}
			// Usually the archive's own name; a session that splits one
			// project over several archives shares the project's folder.
			folder := displayName(name)
			if style == 4 {
				folder = project
			}
			for f := range 3 + r.IntN(8) {
				switch {
				case f == 0 && r.IntN(3) == 0:
					p.Paths = append(p.Paths, "__MACOSX/"+folder+"/._part.stl")
				case r.IntN(10) == 0:
					p.Paths = append(p.Paths, fmt.Sprintf("readme%d.txt", f))
				default:
					p.Paths = append(p.Paths, fmt.Sprintf("%s/%s/part_%02d.stl", folder, variant, f))
				}
			}
			in.Packages = append(in.Packages, p)
		}
	}
	// A few manual groups, each teaching a rule.
	for g := range min(20, n/50) {
		gid := int64(g + 1)
		a, b := r.IntN(len(in.Packages)), r.IntN(len(in.Packages))
		if in.Packages[a].GroupID != 0 || in.Packages[b].GroupID != 0 || a == b {
			continue
		}
		in.Packages[a].GroupID, in.Packages[b].GroupID = gid, gid
		in.Groups = append(in.Groups, Group{ID: gid, Name: NameFor([]Package{in.Packages[a], in.Packages[b]}), Source: SourceManual})
		if rule, ok := LearnRule([]Package{in.Packages[a], in.Packages[b]}); ok {
			rule.ID, rule.GroupID = gid, gid
			in.Rules = append(in.Rules, rule)
		}
	}
	return in
}

// apply is what the store does with a plan: create the groups (ids after the
// highest existing one) and move the packages.
func apply(in Input, plan Plan) Input {
	out := in
	out.Packages = append([]Package(nil), in.Packages...)
	out.Groups = append([]Group(nil), in.Groups...)
	next := int64(0)
	for _, g := range in.Groups {
		next = max(next, g.ID)
	}
	target := map[int64]int64{}
	for _, ng := range plan.NewGroups {
		next++
		out.Groups = append(out.Groups, Group{ID: next, Name: ng.Name, Source: ng.Source, Key: ng.Key})
		for _, id := range ng.PackageIDs {
			target[id] = next
		}
	}
	for _, j := range plan.Joins {
		for _, id := range j.PackageIDs {
			target[id] = j.GroupID
		}
	}
	for i := range out.Packages {
		if g, ok := target[out.Packages[i].ID]; ok {
			out.Packages[i].GroupID = g
		}
	}
	return out
}
