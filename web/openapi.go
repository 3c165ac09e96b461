package web

import (
	"encoding/json"
	"net/http"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// The API's OpenAPI description is made from the route table when the
// server starts (openAPIDocument) and served at /api/openapi.json, so it
// cannot say anything the table does not: its paths are the routes of the
// API (inAPI), their path parameters come from the patterns, their query
// (or form) parameters from the routes' Params structs, read by the tags
// params.go decodes and validates them with, and each summary is the
// route's Doc. TestOpenAPIFollowsRouteTable keeps both in step.

// openAPIVersion is the version of the OpenAPI specification the document
// follows.
const openAPIVersion = "3.1.0"

// Security schemes of the document: an app token, or the session cookie.
const (
	schemeToken   = "appToken"
	schemeSession = "session"
)

// inAPI reports whether a route belongs to the API the document describes:
// every route under /api/, and every route that takes app tokens (such as
// downloads, which live elsewhere).
func inAPI(rt route) bool {
	return !rt.Mount && (strings.HasPrefix(rt.Pattern, "/api/") || rt.Tokens)
}

// pathParam matches the parameters of a chi pattern: {name} or
// {name:regexp}.
var pathParam = regexp.MustCompile(`\{([^}:]+)(?::[^}]*)?\}`)

// openAPIDocument returns the OpenAPI 3.1 document (JSON) of the API routes
// among rts; appURL is the server's address, cookie the session cookie's
// name.
func openAPIDocument(rts []route, version, appURL, cookie string) ([]byte, error) {
	paths := map[string]map[string]any{}
	for _, rt := range rts {
		if !inAPI(rt) {
			continue
		}
		path := pathParam.ReplaceAllString(rt.Pattern, "{$1}")
		if paths[path] == nil {
			paths[path] = map[string]any{}
		}
		paths[path][strings.ToLower(rt.Method)] = openAPIOperation(rt)
	}
	doc := map[string]any{
		"openapi": openAPIVersion,
		"info": map[string]any{
			"title":   "hoard API",
			"version": version,
			"description": "hoard's JSON API, generated from its route table. Programs authenticate with an app token " +
				"(Settings → App tokens) as `Authorization: Bearer <token>`: tokens are read-only (GET routes marked " +
				"`x-hoard-app-token`) and never grant what only administrators may do. Browsers use the session cookie. " +
				"Errors are `{\"error\":{\"code\":…,\"message\":…}}`.",
		},
		"servers": []any{map[string]any{"url": strings.TrimRight(appURL, "/")}},
		"paths":   paths,
		"components": map[string]any{
			"securitySchemes": map[string]any{
				schemeToken: map[string]any{"type": "http", "scheme": "bearer", "bearerFormat": "hoard_…",
					"description": "An app token made in Settings: read-only, never an administrator's rights."},
				schemeSession: map[string]any{"type": "apiKey", "in": "cookie", "name": cookie,
					"description": "The session cookie of a signed-in browser."},
			},
			"schemas": map[string]any{
				"Error": map[string]any{
					"type":     "object",
					"required": []string{"error"},
					"properties": map[string]any{"error": map[string]any{
						"type":     "object",
						"required": []string{"code", "message"},
						"properties": map[string]any{
							"code":    map[string]any{"type": "string"},
							"message": map[string]any{"type": "string"},
						},
					}},
				},
			},
			"responses": map[string]any{
				"Error": map[string]any{"description": "An error, with a message for people",
					"content": map[string]any{"application/json": map[string]any{"schema": map[string]any{"$ref": "#/components/schemas/Error"}}}},
			},
		},
	}
	return json.MarshalIndent(doc, "", "  ")
}

// openAPIOperation describes one route.
func openAPIOperation(rt route) map[string]any {
	op := map[string]any{
		"operationId":       operationID(rt),
		"summary":           rt.Doc,
		"x-hoard-access":    rt.Access.String(),
		"x-hoard-app-token": rt.Tokens,
	}
	var security []any
	if rt.Access == Public {
		security = append(security, map[string]any{}) // no credentials needed
	}
	if rt.Tokens {
		security = append(security, map[string]any{schemeToken: []string{}})
	}
	security = append(security, map[string]any{schemeSession: []string{}})
	op["security"] = security

	var params []any
	for _, m := range pathParam.FindAllStringSubmatch(rt.Pattern, -1) {
		schema := map[string]any{"type": "string"}
		if name := m[1]; name == "id" || strings.HasSuffix(name, "Id") {
			schema = map[string]any{"type": "integer", "format": "int64", "minimum": 1}
		}
		params = append(params, map[string]any{"name": m[1], "in": "path", "required": true, "schema": schema})
	}
	fields := paramFields(rt.Params)
	if rt.Method == http.MethodGet {
		for _, f := range fields {
			params = append(params, map[string]any{"name": f.name, "in": "query", "required": f.required, "schema": f.schema})
		}
	} else if len(fields) > 0 {
		props, required := map[string]any{}, []string{}
		for _, f := range fields {
			props[f.name] = f.schema
			if f.required {
				required = append(required, f.name)
			}
		}
		schema := map[string]any{"type": "object", "properties": props}
		if len(required) > 0 {
			schema["required"] = required
		}
		op["requestBody"] = map[string]any{"content": map[string]any{"application/x-www-form-urlencoded": map[string]any{"schema": schema}}}
	}
	if len(params) > 0 {
		op["parameters"] = params
	}
	success := "200"
	if rt.Method != http.MethodGet {
		success = "2XX"
	}
	op["responses"] = map[string]any{
		success:   map[string]any{"description": "Success"},
		"default": map[string]any{"$ref": "#/components/responses/Error"},
	}
	return op
}

// operationID names an operation by its method and pattern:
// GET /api/packages/{id}/files → getApiPackagesIdFiles.
func operationID(rt route) string {
	var b strings.Builder
	b.WriteString(strings.ToLower(rt.Method))
	for _, word := range strings.FieldsFunc(rt.Pattern, func(c rune) bool { return !unicode.IsLetter(c) && !unicode.IsDigit(c) }) {
		b.WriteString(strings.ToUpper(word[:1]) + word[1:])
	}
	return b.String()
}

// paramField is one parameter of a Params struct, as the document shows it.
type paramField struct {
	name     string
	required bool
	schema   map[string]any
}

// paramFields lists the parameters of a route's Params struct (nil: none)
// in field order, those of embedded structs in place: by the `form` tags
// decodeParams reads, with the bounds of their `validate` tags (max, min,
// gte, lte, gt, lt, oneof, required; `dive` for the values of a list) and
// maxParamLen for a text without its own bound, as declaredBounds.
func paramFields(params any) []paramField {
	if params == nil {
		return nil
	}
	return structParamFields(reflect.TypeOf(params))
}

func structParamFields(t reflect.Type) []paramField {
	var out []paramField
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("form"), ",")
		if f.Anonymous && f.Type.Kind() == reflect.Struct && name == "" {
			out = append(out, structParamFields(f.Type)...)
			continue
		}
		if name == "" || name == "-" {
			continue
		}
		tag := f.Tag.Get("validate")
		outer, inner, _ := strings.Cut(tag, "dive")
		inner = strings.TrimPrefix(inner, ",")
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		var schema map[string]any
		if ft.Kind() == reflect.Slice {
			schema = map[string]any{"type": "array", "items": valueSchema(ft.Elem(), inner)}
			if v, ok := tagRule(outer, "max"); ok {
				schema["maxItems"] = atoiOr(v)
			}
			if v, ok := tagRule(outer, "min"); ok {
				schema["minItems"] = atoiOr(v)
			}
		} else {
			schema = valueSchema(ft, tag)
		}
		_, required := tagRule(outer, "required")
		out = append(out, paramField{name: name, required: required, schema: schema})
	}
	return out
}

// valueSchema is the schema of one value of kind t with validate rules tag.
func valueSchema(t reflect.Type, tag string) map[string]any {
	s := map[string]any{}
	rule := func(name string) (int, bool) {
		v, ok := tagRule(tag, name)
		return atoiOr(v), ok
	}
	switch t.Kind() {
	case reflect.String:
		s["type"] = "string"
		s["maxLength"] = maxParamLen
		if n, ok := rule("max"); ok {
			s["maxLength"] = n
		}
		if n, ok := rule("min"); ok {
			s["minLength"] = n
		}
		if v, ok := tagRule(tag, "oneof"); ok {
			s["enum"] = strings.Fields(v)
		}
	case reflect.Int, reflect.Int32, reflect.Int64:
		s["type"] = "integer"
		s["format"] = "int64"
		if t.Kind() == reflect.Int32 {
			s["format"] = "int32"
		}
		for _, r := range []struct {
			tag, key string
		}{{"min", "minimum"}, {"gte", "minimum"}, {"max", "maximum"}, {"lte", "maximum"}, {"gt", "exclusiveMinimum"}, {"lt", "exclusiveMaximum"}} {
			if n, ok := rule(r.tag); ok {
				s[r.key] = n
			}
		}
	case reflect.Bool:
		s["type"] = "boolean"
	default:
		s["type"] = "string"
	}
	return s
}

// atoiOr is the number v says, 0 when it says none.
func atoiOr(v string) int {
	n, _ := strconv.Atoi(v)
	return n
}

// handleOpenAPI serves the document made at start.
func (s *Server) handleOpenAPI(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache")
	_, err := w.Write(s.openapi)
	if err != nil {
		s.deps.Logger.Debug("write openapi", "err", err)
	}
	return nil
}
