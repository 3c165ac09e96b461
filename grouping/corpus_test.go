package grouping

import (
	"time"
)

// The labelled corpus: realistic channel histories built by test code, each
// package labelled with the group a person would put it in ("" = no group).
// The labels were written before the engine's output was looked at; change a
// label only when a person would file the package differently, never to
// follow the engine.

// corpusPkg is one package of the corpus and its label.
type corpusPkg struct {
	Package
	label string // the group a person would choose; "" = none
}

// corpusChannel is one channel's history, packages in posting order.
type corpusChannel struct {
	name string
	pkgs []corpusPkg
}

// channelBuilder appends posts to a channel; message ids grow with every
// post, archives or not.
type channelBuilder struct {
	ch    corpusChannel
	msg   int64
	album int64
}

func newChannel(name string) *channelBuilder {
	return &channelBuilder{ch: corpusChannel{name: name}, msg: 100}
}

// day is midnight UTC of the corpus's day d (day 0 = 2024-01-01).
func day(d int) time.Time { return time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, d) }

// hm is day d at hh:mm.
func hm(d, hh, mm int) time.Time {
	return day(d).Add(time.Duration(hh)*time.Hour + time.Duration(mm)*time.Minute)
}

// message posts a message without an archive (an announcement) and returns
// its id.
func (b *channelBuilder) message() int64 {
	b.msg++
	return b.msg
}

// post adds one archive post; p's SourceMessageID is assigned here and
// returned.
func (b *channelBuilder) post(label string, at time.Time, p Package) int64 {
	b.msg++
	p.SourceMessageID = b.msg
	p.PostedAt = at
	b.ch.pkgs = append(b.ch.pkgs, corpusPkg{Package: p, label: label})
	return b.msg
}

// release posts files a few minutes apart from start, all by creator, the
// first with caption; paths are "<model>/<file>.stl".
func (b *channelBuilder) release(label, creator, caption string, start time.Time, gap time.Duration, files ...string) {
	for k, f := range files {
		c := ""
		if k == 0 {
			c = caption
		}
		b.post(label, start.Add(time.Duration(k)*gap), Package{FileName: f, Creator: creator, Caption: c,
			Paths: modelPaths(baseName(f))})
	}
}

// postAlbum posts files as one platform album (same second, consecutive
// messages), the caption on the first.
func (b *channelBuilder) postAlbum(label, creator, caption string, at time.Time, files ...string) {
	b.album++
	for k, f := range files {
		c := ""
		if k == 0 {
			c = caption
		}
		b.post(label, at, Package{FileName: f, Creator: creator, Caption: c, AlbumID: 7000 + b.album,
			Paths: modelPaths(baseName(f))})
	}
}

// modelPaths is a typical archive listing: the model's own folder with
// supported and unsupported files and a render.
func modelPaths(model string) []string {
	return []string{model + "/Supported/" + model + "_sup.stl", model + "/Unsupported/" + model + ".stl",
		model + "/render.jpg"}
}

// corpus is the whole labelled corpus, one channel per situation family.
func corpus() []corpusChannel {
	return []corpusChannel{creatorChannel(), aggregatorChannel(), forumChannel(), backlogChannel(), variantsChannel()}
}

// creatorChannel is one creator's own channel: monthly releases of 5–10
// archives posted within minutes, variants and scales of one design, a v2
// update weeks later, a re-upload, generic captions, a scale album, a
// freebie.
func creatorChannel() corpusChannel {
	const c = "Mammoth Minis"
	b := newChannel("creator")
	b.release("mm-jan", c, "January 2024 release is here! 7 new models", hm(3, 10, 0), 2*time.Minute,
		"Frost Giant.zip", "Frost Giant Bust.zip", "Ice Wolves.zip", "Winter Elves.zip",
		"Winter Elves - Presupported.zip", "Snow Troll.zip", "Jan 2024 Bonus - Sleigh.zip")
	b.release("mm-feb", c, "New release!", hm(34, 18, 0), 90*time.Second,
		"Wyvern Rider - Supported.zip", "Wyvern Rider - Unsupported.zip", "Wyvern Rider - Presupported.zip",
		"Desert Nomads.zip", "Sand Worm.zip", "Sand Worm 75mm.zip", "Sand Worm 120mm.zip", "Oasis Terrain.rar",
		"Camel Riders.7z")
	// A v2 of a January model five weeks later belongs with its design.
	b.post("mm-jan", hm(40, 9, 30), Package{FileName: "Frost Giant v2.zip", Creator: c,
		Caption: "Frost Giant v2 – fixed the supports", Paths: modelPaths("Frost Giant v2")})
	b.postAlbum("mm-paladin", c, "Paladin in three scales", hm(50, 12, 0),
		"Paladin 32mm.zip", "Paladin 54mm.zip", "Paladin 75mm.zip")
	// A re-upload of a February file after a broken link.
	b.post("mm-feb", hm(70, 20, 0), Package{FileName: "Wyvern Rider - Supported (reupload).zip", Creator: c,
		Caption: "Re-upload, the old link was broken", Paths: modelPaths("Wyvern Rider")})
	// March: the same generic caption as February's on an unrelated release.
	b.release("mm-mar", c, "New release!", hm(80, 18, 0), 3*time.Minute,
		"Harpy Queen.zip", "Harpy Queen Bust.zip", "Harpy Nest.zip", "Harpy Warriors.zip", "Cliff Base.zip")
	b.post("", hm(90, 8, 0), Package{FileName: "Free Goblin.zip", Creator: c, Caption: "Enjoy",
		Paths: modelPaths("Free Goblin")})
	b.post("", hm(95, 8, 0), Package{FileName: "Painting Guide.pdf", Creator: c, Caption: "Enjoy"})
	return b.ch
}

// aggregatorChannel reposts many creators: two creators posting in the same
// hour, an album, archives whose root folders match by accident, a
// multi-part set spread over an hour, generic captions on unrelated posts.
func aggregatorChannel() corpusChannel {
	b := newChannel("aggregator")
	// Two creators in the same hour, interleaved.
	ic, pf := "Ironclad Terrain", "Pixie Forge"
	b.post("ic-mar", hm(5, 12, 0), Package{FileName: "Ironclad Terrain - 2024-03 - Bridge.zip", Creator: ic, Paths: modelPaths("Bridge")})
	b.post("ic-mar", hm(5, 12, 2), Package{FileName: "Ironclad Terrain - 2024-03 - Watchtower.zip", Creator: ic, Paths: modelPaths("Watchtower")})
	b.post("pf-fairy", hm(5, 12, 4), Package{FileName: "Fairy Queen.zip", Creator: pf, Caption: "Pixie Forge – Fairy Court", Paths: modelPaths("Fairy Queen")})
	b.post("ic-mar", hm(5, 12, 5), Package{FileName: "Ironclad Terrain - 2024-03 - Gatehouse.zip", Creator: ic, Paths: modelPaths("Gatehouse")})
	b.post("pf-fairy", hm(5, 12, 7), Package{FileName: "Fairy Knights.zip", Creator: pf, Paths: modelPaths("Fairy Knights")})
	b.post("ic-mar", hm(5, 12, 9), Package{FileName: "Ironclad Terrain - 2024-03 - Walls.zip", Creator: ic, Paths: modelPaths("Walls")})
	b.post("pf-fairy", hm(5, 12, 12), Package{FileName: "Fairy Throne.zip", Creator: pf, Paths: modelPaths("Fairy Throne")})
	b.post("ic-mar", hm(5, 12, 14), Package{FileName: "Ironclad Terrain - 2024-03 - Stairs.zip", Creator: ic, Paths: modelPaths("Stairs")})
	b.post("pf-fairy", hm(5, 12, 18), Package{FileName: "Fairy Ring Base.zip", Creator: pf, Paths: modelPaths("Fairy Ring Base")})
	// An album.
	b.postAlbum("bb-owlbear", "Beast Bros", "Beast Bros – Owlbear family", hm(5, 15, 0),
		"Owlbear Adult.zip", "Owlbear Cub.zip", "Owlbear Nest.zip", "Owlbear Base.zip")
	// Unrelated archives whose root folder matches by accident, hours apart.
	for k, f := range []struct{ name, creator, root string }{
		{"Treant.zip", "Wild Sculpts", "STL"}, {"Hydra.zip", "Grim Minis", "STL"},
		{"Lich King.zip", "Arcane Works", "files"}, {"Kraken.zip", "Deep Sea Studio", "files"},
		{"Minotaur.zip", "Labyrinth Minis", "Supported STL"}, {"Gargoyle.zip", "Stone Guild", "Supported STL"},
	} {
		b.post("", hm(6, 9+2*k, 0), Package{FileName: f.name, Creator: f.creator,
			Paths: []string{f.root + "/" + baseName(f.name) + ".stl", f.root + "/" + baseName(f.name) + "_base.stl"}})
	}
	// A multi-part set posted as separate archives over an hour.
	for k := 1; k <= 3; k++ {
		n := "Giant Titan Part " + string(rune('0'+k)) + ".zip"
		b.post("cw-titan", hm(8, 20, 20*(k-1)), Package{FileName: n, Creator: "Colossus Works",
			Paths: []string{"Giant Titan/part" + string(rune('0'+k)) + "/titan.stl"}})
	}
	// The same generic captions on unrelated posts of other creators.
	for k, f := range []struct{ name, creator, caption string }{
		{"Ghoul Pack.zip", "Dead Men Minis", "New release!"}, {"Space Marine Bike.zip", "Future Forge", "New release!"},
		{"Elf Ranger.zip", "Sylvan Studio", "Enjoy"}, {"Mech Walker.zip", "Steel Bolt", "Enjoy"},
		{"Dwarf Cannon.zip", "Clockwork Guild", "New release!"},
	} {
		b.post("", hm(10+k, 18, 0), Package{FileName: f.name, Creator: f.creator, Caption: f.caption, Paths: modelPaths(baseName(f.name))})
	}
	// Two unrelated posts minutes apart.
	b.post("", hm(20, 21, 0), Package{FileName: "Vampire Count.zip", Creator: "Night Forge", Paths: modelPaths("Vampire Count")})
	b.post("", hm(20, 21, 3), Package{FileName: "Sci-Fi Crates.zip", Creator: "Cargo Bay", Paths: modelPaths("Sci-Fi Crates")})
	return b.ch
}

// forumChannel is a forum: every topic is one creator (the topic name), the
// topics post interleaved in time; one topic has a reply chain under an
// announcement, another a second pack two weeks later; the same generic
// caption appears in several topics.
func forumChannel() corpusChannel {
	b := newChannel("forum")
	type post struct {
		label, topic, file string
		min                int
	}
	evening := []post{
		{"dt-1", "Dungeon Tiles", "Dungeon Floor Tiles.zip", 0},
		{"sf-1", "Sci-Fi Scatter", "Cargo Containers.zip", 3},
		{"dt-1", "Dungeon Tiles", "Dungeon Wall Tiles.zip", 5},
		{"hv-1", "Hobbit Village", "Round Door House.zip", 7},
		{"sf-1", "Sci-Fi Scatter", "Fuel Barrels.zip", 9},
		{"dt-1", "Dungeon Tiles", "Dungeon Doors.zip", 12},
		{"hv-1", "Hobbit Village", "Hill Cottage.zip", 14},
		{"sf-1", "Sci-Fi Scatter", "Antenna Array.zip", 16},
		{"hv-1", "Hobbit Village", "Market Stalls.zip", 19},
		{"dt-1", "Dungeon Tiles", "Dungeon Pillars.zip", 21},
		{"sf-1", "Sci-Fi Scatter", "Barricades.zip", 24},
	}
	for _, p := range evening {
		b.post(p.label, hm(12, 19, p.min), Package{FileName: p.file, Creator: p.topic, Paths: modelPaths(baseName(p.file))})
	}
	// A reply chain under an announcement (not an archive) in another topic,
	// posted while others post.
	ann := b.message()
	for k, f := range []string{"Cathedral Nave.zip", "Cathedral Tower.zip", "Cathedral Crypt.zip"} {
		b.post("gr-cathedral", hm(12, 19, 26+4*k), Package{FileName: f, Creator: "Gothic Ruins",
			ReplyToMessageID: ann, Paths: modelPaths(baseName(f))})
	}
	b.post("sf-1", hm(12, 19, 29), Package{FileName: "Landing Pad.zip", Creator: "Sci-Fi Scatter", Paths: modelPaths("Landing Pad")})
	// Two weeks later: a second Dungeon Tiles pack, and a Gothic Ruins
	// single captioned like an unrelated Hobbit Village file.
	b.release("dt-2", "Dungeon Tiles", "Cavern expansion", hm(26, 20, 0), 4*time.Minute,
		"Cavern Floors.zip", "Cavern Walls.zip", "Stalagmites.zip", "Underground River.zip")
	b.post("", hm(27, 10, 0), Package{FileName: "Gargoyle Statue.zip", Creator: "Gothic Ruins", Caption: "Enjoy", Paths: modelPaths("Gargoyle Statue")})
	b.post("", hm(29, 10, 0), Package{FileName: "Well.zip", Creator: "Hobbit Village", Caption: "Enjoy", Paths: modelPaths("Well")})
	return b.ch
}

// backlogChannel reposts a backlog in bursts: unrelated files of many
// creators minutes apart, with the file-name pattern "<creator> -
// <YYYY-MM>"; only the two files of one creator-month belong together.
func backlogChannel() corpusChannel {
	b := newChannel("backlog")
	files := []struct{ label, name, creator string }{
		{"", "Tabletop Titans - 2023-05.zip", "Tabletop Titans"},
		{"", "Orc Horde - 2023-07.zip", "Orc Horde"},
		{"ss-2023-08", "Sculpt Society - 2023-08.part1.rar", "Sculpt Society"},
		{"", "Mini Monsters - 2022-11.zip", "Mini Monsters"},
		{"ss-2023-08", "Sculpt Society - 2023-08 Bonus.zip", "Sculpt Society"},
		{"", "Epic Heroes - 2023-01.zip", "Epic Heroes"},
		{"", "Shadow Realm - 2023-02.zip", "Shadow Realm"},
		{"", "Hoard Set - Misc.zip", "Hoard Set"},
	}
	for k, f := range files {
		b.post(f.label, hm(60, 3, 2*k), Package{FileName: f.name, Creator: f.creator, Paths: []string{"STL/" + baseName(f.name) + ".stl"}})
	}
	// The same burst a week later: new months of some of the same creators.
	later := []struct{ label, name, creator string }{
		{"tt-2023-06", "Tabletop Titans - 2023-06 Heroes.zip", "Tabletop Titans"},
		{"tt-2023-06", "Tabletop Titans - 2023-06 Villains.zip", "Tabletop Titans"},
		{"", "Orc Horde - 2023-09.zip", "Orc Horde"},
		{"", "Mini Monsters - 2022-12.zip", "Mini Monsters"},
	}
	for k, f := range later {
		b.post(f.label, hm(67, 3, 3*k), Package{FileName: f.name, Creator: f.creator, Paths: []string{"STL/" + baseName(f.name) + ".stl"}})
	}
	return b.ch
}

// variantsChannel (added with issue 28's variant rule, labels written before
// the engine ran on it) holds variants of one design posted days apart, a
// model of the same name by another creator, same-named files of two
// creators, one creator reposting several of its months in one burst, and
// file names that share only a generic prefix.
func variantsChannel() corpusChannel {
	b := newChannel("variants")
	af := "Abyssal Forge"
	// One design, its variants posted over three weeks: one group.
	b.post("kq", hm(100, 10, 0), Package{FileName: "Kraken Queen - Supported.zip", Creator: af, Paths: modelPaths("Kraken Queen")})
	b.post("kq", hm(103, 18, 0), Package{FileName: "Kraken Queen (Pre-Supported).zip", Creator: af, Paths: modelPaths("Kraken Queen")})
	b.post("", hm(105, 9, 0), Package{FileName: "Sea Serpent.zip", Creator: af, Paths: modelPaths("Sea Serpent")})
	b.post("kq", hm(110, 12, 0), Package{FileName: "Kraken Queen 75mm.zip", Creator: af, Paths: modelPaths("Kraken Queen 75mm")})
	b.post("kq", hm(120, 20, 0), Package{FileName: "Kraken Queen Remix.zip", Creator: af, Paths: modelPaths("Kraken Queen Remix")})
	// Another creator's model of the same name is another design.
	b.post("", hm(111, 12, 0), Package{FileName: "Kraken Queen.zip", Creator: "Deep Ones Studio", Paths: modelPaths("Kraken Queen")})
	// Same file name, two creators, a day apart.
	b.post("", hm(101, 15, 0), Package{FileName: "Dragon.zip", Creator: "Alpha Minis", Paths: modelPaths("Dragon")})
	b.post("", hm(102, 15, 0), Package{FileName: "Dragon.zip", Creator: "Beta Minis", Paths: modelPaths("Dragon")})
	// One creator reposts three of its months in one burst: each month is
	// a release of its own.
	dtl := "Dragon Trappers Lodge"
	for k, f := range []struct{ label, name string }{
		{"dtl-2023-01", "Dragon Trappers Lodge - 2023-01 - Hero.zip"},
		{"dtl-2023-01", "Dragon Trappers Lodge - 2023-01 - Villain.zip"},
		{"dtl-2023-02", "Dragon Trappers Lodge - 2023-02 - Orc Chief.zip"},
		{"dtl-2023-02", "Dragon Trappers Lodge - 2023-02 - Troll.zip"},
		{"", "Dragon Trappers Lodge - 2023-03 - Airship.zip"},
	} {
		b.post(f.label, hm(130, 3, 2*k), Package{FileName: f.name, Creator: dtl, Paths: []string{"STL/" + baseName(f.name) + ".stl"}})
	}
	// Two unrelated models of one creator whose names share only a generic
	// prefix, days apart.
	b.post("", hm(140, 11, 0), Package{FileName: "Files - Goblin Archer.zip", Creator: "Goblin Works", Paths: modelPaths("Goblin Archer")})
	b.post("", hm(145, 11, 0), Package{FileName: "Files - Orc Shaman.zip", Creator: "Goblin Works", Paths: modelPaths("Orc Shaman")})
	return b.ch
}
