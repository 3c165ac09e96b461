package archive

import "testing"

func TestCreator(t *testing.T) {
	tests := []struct {
		name    string
		topic   string
		general bool
		file    string
		title   string
		want    string
	}{
		{"topic wins", "Mammoth Factory", false, "Other - 2024-01.zip", "STL Zone", "Mammoth Factory"},
		{"general topic ignored", "General", true, "Mammoth Factory - 2026-01.zip", "x", "Mammoth Factory"},
		{"general by name", "general", false, "", "Titan Forge Minis", "Titan Forge Minis"},
		{"file name", "", false, "Mammoth Factory - 2026-01.zip", "STL", "Mammoth Factory"},
		{"file name underscore month", "", false, "Bite the Bullet - 2024_01.rar", "", "Bite the Bullet"},
		{"file name dotted month", "", false, "Bite the Bullet - 2024.01.7z", "", "Bite the Bullet"},
		{"file name month word", "", false, "Loot Studios - January 2024.zip", "", "Loot Studios"},
		{"file name short month", "", false, "Loot Studios - Feb 2023 Release.part1.rar", "", "Loot Studios"},
		{"file name year month word", "", false, "Cast n Play - 2023 March.zip", "", "Cast n Play"},
		{"file name month first", "", false, "Artisan Guild - 03-2022.zip", "", "Artisan Guild"},
		{"file name with title after", "", false, "Txarli Factory - 2024-05 - Elves.zip.001", "", "Txarli Factory"},
		{"file name part suffix", "", false, "Mammoth Factory - 2026-01.part02.rar", "", "Mammoth Factory"},
		{"file name spanned zip", "", false, "Mammoth Factory - 2026-01.z01", "", "Mammoth Factory"},
		{"file name underscores", "", false, "Epic_Miniatures_-_2023-11.zip", "", "Epic Miniatures"},
		{"no date falls to title", "", false, "ArtistName_PackTitle.zip", "Epic Minis 🐉 [Completed]", "Epic Minis"},
		{"dash without spaces is not a separator", "", false, "Dragon-Bust-2024-01.zip", "", ""},
		{"bad month is not a date", "", false, "Pack - 2024-13.zip", "", ""},
		{"digits are not a creator", "", false, "2024 - 2024-01.zip", "", ""},
		{"title markers", "", false, "", "🔥 Dragon Trappers Lodge (Paid) [Completed] 🔥", "Dragon Trappers Lodge"},
		{"title subtitle", "", false, "", "Mammoth Factory - STL Archive", "Mammoth Factory"},
		{"title pipe", "", false, "", "Ghamak | Monthly releases", "Ghamak"},
		{"generic title", "", false, "", "STL", ""},
		{"generic title case", "", false, "", "3D Printing 🖨️", ""},
		{"generic title words", "", false, "", "Free STL Files", ""},
		{"franchise title", "", false, "", "Star Wars STL", ""},
		{"only emoji", "", false, "", "🐉🐉", ""},
		{"nothing", "", false, "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Creator(tt.topic, tt.general, tt.file, tt.title); got != tt.want {
				t.Errorf("Creator(%q, %v, %q, %q) = %q, want %q", tt.topic, tt.general, tt.file, tt.title, got, tt.want)
			}
		})
	}
}
