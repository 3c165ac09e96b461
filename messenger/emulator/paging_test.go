package emulator

import (
	"slices"
	"testing"
)

// TestPageOffsets checks the platform's offset paging (core.telegram.org/api/offsets)
// on messages 1…250 with 7 and 8 deleted: answers are newest first.
func TestPageOffsets(t *testing.T) {
	var sel []*message
	for id := 1; id <= 250; id++ {
		sel = append(sel, &message{id: id, deleted: id == 7 || id == 8})
	}
	span := func(from, to int) []int { // from down to to, without 7 and 8
		var ids []int
		for id := from; id >= to; id-- {
			if id != 7 && id != 8 {
				ids = append(ids, id)
			}
		}
		return ids
	}
	tests := []struct {
		name                                     string
		offsetID, addOffset, limit, maxID, minID int
		want                                     []int
	}{
		{"newest page", 0, 0, 100, 0, 0, span(250, 151)},
		{"older than an id", 151, 0, 100, 0, 0, span(150, 51)},
		{"to the start", 51, 0, 100, 0, 0, span(50, 1)},
		// Reverse iteration (Telethon's reverse=True): offset_id = W+1,
		// add_offset = -limit is the limit messages just after W.
		{"oldest first from the start (7 and 8 deleted)", 1, -100, 100, 0, 0, span(102, 1)},
		{"oldest first after a watermark", 121, -100, 100, 0, 0, span(220, 121)},
		{"oldest first: the last, short page", 201, -100, 100, 0, 0, span(250, 201)},
		{"oldest first: past the newest", 251, -100, 100, 0, 0, nil},
		{"oldest first with min_id, as the task suggests", 121, -100, 100, 0, 120, span(220, 121)},
		{"oldest first from a deleted message", 7, -100, 100, 0, 0, span(108, 9)},
		{"around an id", 100, -5, 10, 0, 0, span(104, 95)},
		{"max_id and min_id bound the list", 0, 0, 100, 60, 40, span(59, 41)},
		{"limit above 100 is 100", 0, 0, 500, 0, 0, span(250, 151)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []int
			for _, m := range page(sel, tt.offsetID, tt.addOffset, tt.limit, tt.maxID, tt.minID) {
				got = append(got, m.id)
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("ids\n got  %v\n want %v", got, tt.want)
			}
		})
	}
}
