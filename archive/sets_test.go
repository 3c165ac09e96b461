package archive

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func msg(id int64, name string, size int64) Message {
	return Message{ID: id, Name: name, Size: size, Date: t0.Add(time.Duration(id) * time.Minute)}
}

func TestGroupSets(t *testing.T) {
	type want struct {
		key      string
		base     string
		scheme   Scheme
		typ      Type
		parts    []string
		dups     int
		complete bool
		reason   string // substring
	}
	tests := []struct {
		name string
		msgs []Message
		want []want
	}{
		{"singles and non-candidates", []Message{msg(1, "a.zip", 10), msg(2, "b.stl", 5), msg(3, "c.jpg", 1), msg(4, "d.txt", 1)},
			[]want{{"single:a.zip", "a", Single, ZIP, []string{"a.zip"}, 0, true, ""}, {"single:b.stl", "b", Single, Document, []string{"b.stl"}, 0, true, ""}}},
		{"rar parts out of order", []Message{msg(3, "X.part3.rar", 5), msg(1, "x.part1.rar", 10), msg(2, "x.PART2.rar", 10)},
			[]want{{"rar-part:x", "x", RarPart, RAR, []string{"x.part1.rar", "x.PART2.rar", "X.part3.rar"}, 0, true, ""}}},
		{"rar part gap", []Message{msg(1, "x.part1.rar", 10), msg(2, "x.part2.rar", 10), msg(4, "x.part4.rar", 10), msg(5, "x.part6.rar", 1)},
			[]want{{"rar-part:x", "x", RarPart, RAR, []string{"x.part1.rar", "x.part2.rar", "x.part4.rar", "x.part6.rar"}, 0, false, "missing parts x.part3.rar, x.part5.rar"}}},
		{"rar part without first", []Message{msg(2, "x.part02.rar", 10), msg(3, "x.part03.rar", 10)},
			[]want{{"rar-part:x", "x", RarPart, RAR, []string{"x.part02.rar", "x.part03.rar"}, 0, false, "missing part x.part01.rar"}}},
		{"old rar volumes", []Message{msg(2, "x.r00", 10), msg(3, "x.r01", 5), msg(1, "x.rar", 10)},
			[]want{{"rar-volume:x", "x", RarVolume, RAR, []string{"x.rar", "x.r00", "x.r01"}, 0, true, ""}}},
		{"old rar volumes without x.rar", []Message{msg(2, "x.r00", 10), msg(3, "x.r01", 5)},
			[]want{{"rar-volume:x", "x", RarVolume, RAR, []string{"x.r00", "x.r01"}, 0, false, "missing part x.rar"}}},
		{"zip numbered", []Message{msg(1, "x.zip.001", 10), msg(2, "x.zip.002", 10), msg(3, "x.zip.003", 1)},
			[]want{{"zip-numbered:x.zip", "x", ZipNumbered, ZIP, []string{"x.zip.001", "x.zip.002", "x.zip.003"}, 0, true, ""}}},
		{"zip spanned", []Message{msg(3, "x.zip", 3), msg(1, "x.z01", 10), msg(2, "x.z02", 10)},
			[]want{{"zip-spanned:x", "x", ZipSpanned, ZIP, []string{"x.z01", "x.z02", "x.zip"}, 0, true, ""}}},
		{"zip spanned without final", []Message{msg(1, "x.z01", 10), msg(2, "x.z02", 10)},
			[]want{{"zip-spanned:x", "x", ZipSpanned, ZIP, []string{"x.z01", "x.z02"}, 0, false, "missing final part x.zip"}}},
		{"7z numbered gap", []Message{msg(1, "x.7z.001", 10), msg(2, "x.7z.003", 10)},
			[]want{{"7z-numbered:x.7z", "x", SevenZipNumbered, SevenZ, []string{"x.7z.001", "x.7z.003"}, 0, false, "missing part x.7z.002"}}},
		{"generic numbered", []Message{msg(1, "big.stl.001", 10), msg(2, "big.stl.002", 3)},
			[]want{{"numbered:big.stl", "big", Numbered, Document, []string{"big.stl.001", "big.stl.002"}, 0, true, ""}}},
		{"re-posted part is a duplicate", []Message{msg(1, "x.part1.rar", 10), msg(2, "x.part2.rar", 4), msg(9, "x.part2.rar", 4)},
			[]want{{"rar-part:x", "x", RarPart, RAR, []string{"x.part1.rar", "x.part2.rar"}, 1, true, ""}}},
		{"different file posted as same part", []Message{msg(1, "x.part1.rar", 10), msg(2, "x.part2.rar", 4), msg(9, "x.part2.rar", 5)},
			[]want{{"rar-part:x", "x", RarPart, RAR, []string{"x.part1.rar", "x.part2.rar"}, 0, false, "different files posted as the same part"}}},
		{"re-posted single", []Message{msg(1, "a.zip", 10), msg(5, "A.ZIP", 10), msg(6, "a.zip", 11)},
			[]want{{"single:a.zip", "a", Single, ZIP, []string{"a.zip"}, 1, true, ""}, {"single:a.zip#6", "a", Single, ZIP, []string{"a.zip"}, 0, true, ""}}},
		{"two schemes, same stem", []Message{msg(1, "x.part1.rar", 10), msg(2, "x.rar", 10)},
			[]want{{"rar-part:x", "x", RarPart, RAR, []string{"x.part1.rar"}, 0, true, ""}, {"single:x.rar", "x", Single, RAR, []string{"x.rar"}, 0, true, ""}}},
		{"many missing parts are summarised", func() []Message {
			return []Message{msg(1, "x.7z.001", 1), msg(2, "x.7z.050", 1)}
		}(), []want{{"7z-numbered:x.7z", "x", SevenZipNumbered, SevenZ, []string{"x.7z.001", "x.7z.050"}, 0, false, "and 28 more"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sets := GroupSets(tt.msgs)
			if len(sets) != len(tt.want) {
				t.Fatalf("got %d sets, want %d: %+v", len(sets), len(tt.want), sets)
			}
			for i, w := range tt.want {
				s := sets[i]
				var names []string
				for _, p := range s.Parts {
					names = append(names, p.Name)
				}
				type set struct {
					Key, Base string
					Scheme    Scheme
					Type      Type
					Parts     string
					Dups      int
					Complete  bool
				}
				want := set{w.key, w.base, w.scheme, w.typ, strings.Join(w.parts, ","), w.dups, w.complete}
				got := set{s.Key, s.BaseName, s.Scheme, s.Type, strings.Join(names, ","), len(s.Duplicates), s.Complete}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("set %d (%s) (-want +got):\n%s", i, s.Reason, diff)
				}
				if !strings.Contains(s.Reason, w.reason) || (w.reason == "" && s.Reason != "") {
					t.Errorf("set %d reason %q, want %q", i, s.Reason, w.reason)
				}
			}
		})
	}
}

func TestSetTotalsAndSettle(t *testing.T) {
	sets := GroupSets([]Message{msg(5, "x.part2.rar", 7), msg(3, "x.part1.rar", 10)})
	if len(sets) != 1 {
		t.Fatal(sets)
	}
	s := sets[0]
	if s.TotalSize != 17 || s.FirstMessageID != 3 || !s.Newest.Equal(t0.Add(5*time.Minute)) || !s.MultiPart() {
		t.Errorf("%+v", s)
	}
	newest := t0.Add(5 * time.Minute)
	if s.Settled(newest.Add(9*time.Minute), 10*time.Minute) {
		t.Error("settled too early")
	}
	if !s.Settled(newest.Add(10*time.Minute), 10*time.Minute) {
		t.Error("not settled after the settle time")
	}
}

func TestGroupSetsOrderIndependent(t *testing.T) {
	msgs := []Message{msg(1, "a.part1.rar", 1), msg(2, "a.part2.rar", 1), msg(3, "b.zip", 2), msg(4, "a.part2.rar", 1), msg(5, "c.z01", 1), msg(6, "c.zip", 1)}
	want := GroupSets(msgs)
	rev := make([]Message, len(msgs))
	for i, m := range msgs {
		rev[len(msgs)-1-i] = m
	}
	got := GroupSets(rev)
	if len(got) != len(want) {
		t.Fatal(len(got), len(want))
	}
	for i := range got {
		if got[i].Key != want[i].Key || len(got[i].Parts) != len(want[i].Parts) || len(got[i].Duplicates) != len(want[i].Duplicates) {
			t.Errorf("%d: %+v vs %+v", i, got[i], want[i])
		}
	}
}
