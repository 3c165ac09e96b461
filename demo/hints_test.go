package demo

import "testing"

func TestCommandIsWhatANewcomerCanType(t *testing.T) {
	tests := []struct {
		name, exe, cwd, onPath, want string
	}{
		{"make demo's binary", "/src/hoard/bin/hoard", "/src/hoard", "", "bin/hoard"},
		{"a binary in the directory", "/src/hoard/hoard", "/src/hoard", "", "./hoard"},
		{"installed on PATH", "/usr/local/bin/hoard", "/home/me", "/usr/local/bin/hoard", "hoard"},
		{"another hoard on PATH", "/opt/hoard/bin/hoard", "/home/me", "/usr/local/bin/hoard", "/opt/hoard/bin/hoard"},
		{"go run's temporary binary", "/tmp/go-build123/b001/exe/hoard", "/src/hoard", "", "go run ./cmd/hoard"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Command(tt.exe, tt.cwd, tt.onPath); got != tt.want {
				t.Fatalf("Command(%q, %q, %q) = %q, want %q", tt.exe, tt.cwd, tt.onPath, got, tt.want)
			}
		})
	}
}
