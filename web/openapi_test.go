package web

import (
	"encoding/json"
	"maps"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestOpenAPIFollowsRouteTable: /api/openapi.json is valid JSON with the
// fields OpenAPI 3.1 requires, and describes exactly the API's routes of
// the table (inAPI: every /api/ route, every route that takes tokens) with
// their path parameters, declared parameters and bounds, access and
// security: it cannot drift from the table.
func TestOpenAPIFollowsRouteTable(t *testing.T) {
	e := newEnv(t)
	resp, body := e.do(nil, http.MethodGet, "/api/openapi.json", nil, nil)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("GET /api/openapi.json = %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	type schema struct {
		Type      string   `json:"type"`
		MaxLength *int     `json:"maxLength"`
		Minimum   *int     `json:"minimum"`
		Maximum   *int     `json:"maximum"`
		MaxItems  *int     `json:"maxItems"`
		Enum      []string `json:"enum"`
		Items     *schema  `json:"items"`
	}
	type param struct {
		Name     string `json:"name"`
		In       string `json:"in"`
		Required bool   `json:"required"`
		Schema   schema `json:"schema"`
	}
	type operation struct {
		OperationID string                `json:"operationId"`
		Summary     string                `json:"summary"`
		Parameters  []param               `json:"parameters"`
		Security    []map[string][]string `json:"security"`
		Responses   map[string]any        `json:"responses"`
		Access      string                `json:"x-hoard-access"`
		Tokens      bool                  `json:"x-hoard-app-token"`
	}
	var doc struct {
		OpenAPI string `json:"openapi"`
		Info    struct {
			Title   string `json:"title"`
			Version string `json:"version"`
		} `json:"info"`
		Paths      map[string]map[string]operation `json:"paths"`
		Components struct {
			SecuritySchemes map[string]struct {
				Type   string `json:"type"`
				Scheme string `json:"scheme"`
				In     string `json:"in"`
				Name   string `json:"name"`
			} `json:"securitySchemes"`
		} `json:"components"`
	}
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	if !regexp.MustCompile(`^3\.1\.\d+$`).MatchString(doc.OpenAPI) || doc.Info.Title == "" || doc.Info.Version != "test" || len(doc.Paths) == 0 {
		t.Fatalf("required fields: openapi %q, info %+v, %d paths", doc.OpenAPI, doc.Info, len(doc.Paths))
	}
	schemes := doc.Components.SecuritySchemes
	if s := schemes[schemeToken]; s.Type != "http" || s.Scheme != "bearer" {
		t.Errorf("bearer scheme = %+v", s)
	}
	if s := schemes[schemeSession]; s.Type != "apiKey" || s.In != "cookie" || s.Name != e.srv.cookieName() {
		t.Errorf("cookie scheme = %+v", s)
	}

	want := map[string]route{}
	for _, rt := range e.srv.routes() {
		if strings.HasPrefix(rt.Pattern, "/api/") || rt.Tokens {
			want[strings.ToLower(rt.Method)+" "+rt.Pattern] = rt
		}
	}
	ids := map[string]bool{}
	got := map[string]bool{}
	for path, ops := range doc.Paths {
		for method, op := range ops {
			key := method + " " + path
			got[key] = true
			rt, ok := want[key]
			if !ok {
				t.Errorf("%s is in the document but is no API route of the table", key)
				continue
			}
			if op.Summary != rt.Doc || op.Access != rt.Access.String() || op.Tokens != rt.Tokens || len(op.Responses) == 0 {
				t.Errorf("%s: summary %q, access %q, tokens %v, responses %v", key, op.Summary, op.Access, op.Tokens, op.Responses)
			}
			if op.OperationID == "" || ids[op.OperationID] {
				t.Errorf("%s: operationId %q missing or repeated", key, op.OperationID)
			}
			ids[op.OperationID] = true
			var security []string
			for _, req := range op.Security {
				for name := range req {
					if _, ok := schemes[name]; !ok {
						t.Errorf("%s: security scheme %q is not defined", key, name)
					}
					security = append(security, name)
				}
			}
			if slices.Contains(security, schemeToken) != rt.Tokens || !slices.Contains(security, schemeSession) {
				t.Errorf("%s: security %v (tokens %v)", key, security, rt.Tokens)
			}
			var pathParams, queryParams []string
			for _, p := range op.Parameters {
				switch {
				case p.In == "path" && p.Required:
					pathParams = append(pathParams, p.Name)
				case p.In == "query" && rt.Method == http.MethodGet:
					queryParams = append(queryParams, p.Name)
				default:
					t.Errorf("%s: parameter %+v", key, p)
				}
			}
			var inPattern []string
			for _, m := range pathParam.FindAllStringSubmatch(rt.Pattern, -1) {
				inPattern = append(inPattern, m[1])
			}
			if !slices.Equal(pathParams, inPattern) {
				t.Errorf("%s: path parameters %v, pattern has %v", key, pathParams, inPattern)
			}
			if rt.Method == http.MethodGet {
				if declared := slices.Sorted(maps.Keys(declaredBounds(typeOf(rt.Params)))); !isSubset(declared, queryParams) {
					t.Errorf("%s: query parameters %v lack some of the declared %v", key, queryParams, declared)
				}
			}
		}
	}
	for key := range want {
		if !got[key] {
			t.Errorf("API route %s is missing from the document", key)
		}
	}

	// Bounds come from the Params structs' tags.
	var limit, tag, sort, q *param
	for i, p := range doc.Paths["/api/packages"]["get"].Parameters {
		switch p.Name {
		case "limit":
			limit = &doc.Paths["/api/packages"]["get"].Parameters[i]
		case "tag":
			tag = &doc.Paths["/api/packages"]["get"].Parameters[i]
		case "sort":
			sort = &doc.Paths["/api/packages"]["get"].Parameters[i]
		case "q":
			q = &doc.Paths["/api/packages"]["get"].Parameters[i]
		}
	}
	switch {
	case limit == nil || limit.Schema.Type != "integer" || *limit.Schema.Minimum != 1 || *limit.Schema.Maximum != 200:
		t.Errorf("limit = %+v", limit)
	case tag == nil || tag.Schema.Type != "array" || *tag.Schema.MaxItems != 64 || *tag.Schema.Items.MaxLength != 4200:
		t.Errorf("tag = %+v", tag)
	case sort == nil || !slices.Equal(sort.Schema.Enum, []string{"relevance", "newest", "name", "size"}):
		t.Errorf("sort = %+v", sort)
	case q == nil || q.Schema.Type != "string" || *q.Schema.MaxLength != maxParamLen:
		t.Errorf("q = %+v", q)
	}
	if p := doc.Paths["/api/packages/{id}/files"]["get"].Parameters[0]; p.Name != "id" || p.Schema.Type != "integer" {
		t.Errorf("path parameter id = %+v", p)
	}
}

func isSubset(small, big []string) bool {
	for _, s := range small {
		if !slices.Contains(big, s) {
			return false
		}
	}
	return true
}

// typeOf is the type of a route's Params, nil for none.
func typeOf(params any) reflect.Type {
	if params == nil {
		return nil
	}
	return reflect.TypeOf(params)
}
