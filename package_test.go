package hoard

import (
	"slices"
	"testing"
	"time"
)

func TestPackageSourceBefore(t *testing.T) {
	jan, feb := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2024, 2, 1, 0, 0, 0, 0, time.UTC)
	post := func(ch, msg int64, at time.Time) PackageSource {
		return PackageSource{ChannelID: ch, MessageID: msg, PostedAt: at}
	}
	tests := []struct {
		name string
		a, b PackageSource
		want bool
	}{
		{"earlier date", post(9, 9, jan), post(1, 1, feb), true},
		{"later date", post(1, 1, feb), post(9, 9, jan), false},
		{"same date, smaller channel", post(1, 9, jan), post(2, 1, jan), true},
		{"same date and channel, smaller message", post(1, 1, jan), post(1, 2, jan), true},
		{"the same post", post(1, 1, jan), post(1, 1, jan), false},
		{"a manual upload is never before", post(0, 0, jan), post(1, 1, feb), false},
		{"nor after", post(1, 1, jan), post(0, 0, feb), false},
		{"dates compare as instants", post(2, 1, jan.In(time.FixedZone("x", 3600))), post(1, 1, jan), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.a.Before(tt.b); got != tt.want {
				t.Fatalf("Before = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestSwapTag(t *testing.T) {
	tests := []struct {
		name           string
		tags           []string
		oldTag, newTag string
		want           []string
	}{
		{"category replaced, first", []string{"STL", "dragons"}, "STL", "Fantasy", []string{"Fantasy", "dragons"}},
		{"same category", []string{"STL", "dragons"}, "STL", "STL", []string{"STL", "dragons"}},
		{"to no category", []string{"STL", "dragons"}, "STL", "", []string{"dragons"}},
		{"from no category", []string{"dragons"}, "", "Paint", []string{"Paint", "dragons"}},
		{"new category already a tag", []string{"STL", "Paint"}, "STL", "Paint", []string{"Paint"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := SwapTag(tt.tags, tt.oldTag, tt.newTag); !slices.Equal(got, tt.want) {
				t.Fatalf("SwapTag = %q, want %q", got, tt.want)
			}
		})
	}
}
