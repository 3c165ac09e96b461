package web

import (
	"context"
	"net/http"
	"net/url"

	"github.com/go-chi/chi/v5"
)

// catalogHeading introduces a catalog page that lists one creator's or one
// tag's packages.
type catalogHeading struct {
	Title string // the page's title and heading
	Note  string // a line under it
	// SearchAll is the catalog search for the same packages, where more
	// filters can be added.
	SearchAll string
}

// pathText reads a path parameter that is text (a creator, a tag): its
// escaped form decoded, clean text of at most maxLen characters, not
// empty; anything else is not found.
func pathText(r *http.Request, name string, maxLen int) (string, error) {
	v := chi.URLParam(r, name)
	if r.URL.RawPath != "" { // chi matched the escaped path
		var err error
		if v, err = url.PathUnescape(v); err != nil {
			return "", errNotFound
		}
	}
	if v == "" || len([]rune(v)) > maxLen || checkText(name, v, maxParamBytes) != nil {
		return "", errNotFound
	}
	return v, nil
}

// withCatalogParams returns r with the catalog parameters in, for
// renderCatalog.
func withCatalogParams(r *http.Request, in catalogParams) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), paramsKey{}, in))
}

// handleCreator renders a creator's page: every package by the creator,
// newest first unless the page asks otherwise, with the catalog's views,
// tabs and selection.
func (s *Server) handleCreator(w http.ResponseWriter, r *http.Request) error {
	name, err := pathText(r, "name", maxParamLen)
	if err != nil {
		return err
	}
	in := paramsOf[catalogParams](r)
	in.Creator, in.Q, in.Exact = name, "", true
	if in.Sort == "" {
		in.Sort = "newest"
	}
	return s.renderCatalog(w, withCatalogParams(r, in), catalogHeading{Title: "By " + name,
		Note: "Everything by this creator.", SearchAll: "/?creator=" + url.QueryEscape(name)})
}

// handleTag renders a tag's page: every package tagged with it.
func (s *Server) handleTag(w http.ResponseWriter, r *http.Request) error {
	tag, err := pathText(r, "tag", maxTagLen)
	if err != nil {
		return err
	}
	in := paramsOf[catalogParams](r)
	in.Tags, in.Q, in.Exact = []string{tag}, "", true
	if in.Sort == "" {
		in.Sort = "newest"
	}
	return s.renderCatalog(w, withCatalogParams(r, in), catalogHeading{Title: "Tagged " + tag,
		Note: "Everything tagged with this tag.", SearchAll: "/?tag=" + url.QueryEscape(tag)})
}
