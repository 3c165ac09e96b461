package web

import (
	"os"
	"strings"
	"testing"
)

// TestReadmeDocumentsEveryRoute keeps README's route table and the route
// table in step; UPDATE_README=1 regenerates it.
func TestReadmeDocumentsEveryRoute(t *testing.T) {
	e := newEnv(t)
	var b strings.Builder
	b.WriteString("| Method | Path | Access | What |\n|---|---|---|---|\n")
	for _, rt := range e.srv.routes() {
		if rt.Doc == "" {
			t.Errorf("route %s %s has no Doc", rt.Method, rt.Pattern)
		}
		method := rt.Method
		if rt.Mount {
			method = "any"
		}
		access := rt.Access.String()
		if rt.Tokens {
			access += ", app token"
		}
		b.WriteString("| " + method + " | `" + rt.Pattern + "` | " + access + " | " + rt.Doc + " |\n")
	}
	table := b.String()
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(readme)
	start := strings.Index(s, "<!-- routes:start")
	end := strings.Index(s, "<!-- routes:end -->")
	if start < 0 || end < start {
		t.Fatal("README.md lacks the routes:start/routes:end markers")
	}
	start += strings.Index(s[start:], "-->") + len("-->\n")
	if os.Getenv("UPDATE_README") == "1" {
		s = s[:start] + table + s[end:]
		if err := os.WriteFile("../README.md", []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if s[start:end] != table {
		t.Fatal("README.md's route table is out of date: run UPDATE_README=1 go test ./web -run ReadmeDocumentsEveryRoute")
	}
}
