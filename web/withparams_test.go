package web

import (
	"net/url"
	"testing"
)

// TestWithParams: a page's links keep its query but for the parameters
// set (keys sorted, each escaped, every value of a repeated key in order),
// and an empty value removes one.
func TestWithParams(t *testing.T) {
	tests := []struct {
		name string
		url  string
		set  map[string]string
		want string
	}{
		{"no query, nothing set", "/", map[string]string{"after": ""}, "/"},
		{"one set", "/", map[string]string{"view": "list"}, "/?view=list"},
		{"replaced and kept, sorted", "/?view=grid&q=dragon+bust&tab=all", map[string]string{"view": "list"},
			"/?q=dragon+bust&tab=all&view=list"},
		{"removed", "/?q=x&after=abc&prev=a~b&page=3", map[string]string{"after": "", "prev": "", "page": ""}, "/?q=x"},
		{"everything removed", "/?after=abc", map[string]string{"after": ""}, "/"},
		{"a repeated key kept in order", "/?tag=b&tag=a&q=x", map[string]string{"q": "y"}, "/?q=y&tag=b&tag=a"},
		{"a repeated key replaced by one", "/?tag=b&tag=a", map[string]string{"tag": "c"}, "/?tag=c"},
		{"escaped", "/?q=a%26b%3Dc", map[string]string{"after": "x y/é"}, "/?after=x+y%2F%C3%A9&q=a%26b%3Dc"},
		{"the path escaped as the request's", "/groups/a%20b", map[string]string{"page": "2"}, "/groups/a%20b?page=2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := url.Parse(tt.url)
			if err != nil {
				t.Fatal(err)
			}
			if got := withParams(u, tt.set); got != tt.want {
				t.Errorf("withParams(%s, %v) = %s, want %s", tt.url, tt.set, got, tt.want)
			}
		})
	}
}
