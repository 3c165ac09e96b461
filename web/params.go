package web

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"

	"github.com/go-playground/validator/v10"
	"github.com/hoard/hoard"
)

// Request parameters are hostile until checked. Every route's query and
// url-encoded form pass checkParams before its handler runs: each value is
// UTF-8 text without NUL or other control characters (tabs and line breaks
// aside) and of a bounded size, so that nothing a client sends can reach the
// database as a value it refuses (a 500) or as work without end. A route
// that reads parameters declares them as a struct (the route table's
// Params): the adapter decodes the request into it (decodeParams) and
// validates it with validate, its `validate` tags, before the handler runs,
// and the handler reads the result with paramsOf. Bad input is EINVALID
// (422) with a message naming the parameter, never a 500. The few common
// parameters of the page flow (from, done, sent, changed, back) are read
// by shared helpers, which only compare them with fixed values or pass them
// through localPath.
const (
	// maxParamLen is the default bound of a text parameter, in characters
	// (a field's own `validate:"max=…"` tag sets another): the bot's
	// command arguments have the same (hoard.MaxParamLen).
	maxParamLen = hoard.MaxParamLen
	// maxParamBytes bounds any one value, declared or not.
	maxParamBytes = hoard.MaxParamBytes
	// maxParamValues bounds the values of one request (the ids of a bulk
	// action are the most: 500).
	maxParamValues = 1000
	// maxFormBytes bounds an url-encoded form body.
	maxFormBytes = 256 << 10
)

// checkParams refuses a request whose path, query or url-encoded form holds
// a value that is not clean text (see above). It parses the request's form
// (r.Form): the query, and the body of a POST when it is url-encoded, at
// most maxFormBytes. Multipart and JSON bodies are their handlers' to read.
func checkParams(w http.ResponseWriter, r *http.Request, bounds map[string]int) error {
	if err := checkText("The path", r.URL.Path, maxParamBytes); err != nil {
		return err
	}
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "application/x-www-form-urlencoded" && r.Body != nil {
		r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	}
	if err := r.ParseForm(); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return hoard.Errorf(hoard.ETOOLARGE, "The form is larger than %d KiB.", maxFormBytes>>10)
		}
		return hoard.Errorf(hoard.EINVALID, "The query string or form is malformed.")
	}
	return checkValues(r.Form, bounds)
}

// checkValues applies checkParams' rules to one set of values; bounds are
// the declared parameters' lengths (declaredBounds), for the message about
// a value past maxParamBytes.
func checkValues(values url.Values, bounds map[string]int) error {
	n := 0
	for name, vals := range values {
		if err := checkText("A parameter name", name, 64); err != nil {
			return err
		}
		for _, v := range vals {
			if n++; n > maxParamValues {
				return hoard.Errorf(hoard.EINVALID, "The request has more than %d parameters.", maxParamValues)
			}
			if bound, ok := bounds[name]; ok && len(v) > maxParamBytes {
				return hoard.TooLong(name, bound)
			}
			if err := checkText(name, v, maxParamBytes); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkText refuses a value that is not clean text (hoard.CheckText: the
// rules the bot's command arguments follow too); the error names what the
// value is.
func checkText(name, v string, maxBytes int) error {
	return hoard.CheckText(name, v, maxBytes)
}

type paramsKey struct{}

// bindParams decodes and validates the request's parameters into a new
// value of the route's params type and puts it into the request's context
// for paramsOf.
func bindParams(r *http.Request, params reflect.Type) (*http.Request, error) {
	dst := reflect.New(params)
	if err := decodeParams(r.Form, dst.Interface()); err != nil {
		return r, err
	}
	return r.WithContext(context.WithValue(r.Context(), paramsKey{}, dst.Elem().Interface())), nil
}

// paramsOf returns the parameters the route table's adapter decoded and
// validated for the request. It panics when the route declares another
// type: the route table and its handler disagree, which every route test
// finds.
func paramsOf[T any](r *http.Request) T {
	return r.Context().Value(paramsKey{}).(T)
}

// decodeParams fills the struct dst points to from values, by the fields'
// `form` tags, and validates it with their `validate` tags. Field kinds:
// string (trimmed, unless the tag says `form:"name,raw"`; at most
// maxParamLen characters unless the validate tag has its own max), int and
// int64 (decimal; empty is zero), bool (true/false, on/off, 1/0, yes/no;
// empty is false), pointers to those (nil when absent or empty) and slices
// of string or int64 (every value; empty strings dropped). A value that is
// no number, out of range or too long is EINVALID naming the parameter.
func decodeParams(values url.Values, dst any) error {
	v := reflect.ValueOf(dst).Elem()
	if err := decodeFields(values, v); err != nil {
		return err
	}
	if err := validate.Struct(dst); err != nil {
		return aboutField(invalidFieldName(err), hoard.Errorf(hoard.EINVALID, "%s", validationMessage(err, v.Type())))
	}
	return nil
}

// decodeFields decodes the tagged fields of the struct v, and those of the
// structs it embeds.
func decodeFields(values url.Values, v reflect.Value) error {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("form"), ",")
		if f.Anonymous && f.Type.Kind() == reflect.Struct && name == "" {
			if err := decodeFields(values, v.Field(i)); err != nil {
				return err
			}
			continue
		}
		if name == "" || name == "-" {
			continue
		}
		d := fieldDecoder{name: name, raw: opts == "raw", maxLen: maxParamLen}
		if _, ok := tagRule(f.Tag.Get("validate"), "max"); ok {
			d.maxLen = -1 // the validator checks the field's own bound
		}
		if err := d.set(v.Field(i), values[name]); err != nil {
			return aboutField(name, err)
		}
	}
	return nil
}

// fieldDecoder decodes the values of one parameter into a field.
type fieldDecoder struct {
	name   string
	raw    bool // strings are not trimmed
	maxLen int  // characters of a string; negative: no bound here
}

// set decodes vals into field.
func (d fieldDecoder) set(field reflect.Value, vals []string) error {
	first := ""
	if len(vals) > 0 {
		first = vals[0]
	}
	switch field.Kind() {
	case reflect.Pointer:
		if strings.TrimSpace(first) == "" {
			return nil
		}
		p := reflect.New(field.Type().Elem())
		if err := d.set(p.Elem(), vals); err != nil {
			return err
		}
		field.Set(p)
		return nil
	case reflect.Slice:
		out := reflect.MakeSlice(field.Type(), 0, len(vals))
		for _, s := range vals {
			if strings.TrimSpace(s) == "" {
				continue
			}
			elem := reflect.New(field.Type().Elem()).Elem()
			if err := d.set(elem, []string{s}); err != nil {
				return err
			}
			out = reflect.Append(out, elem)
		}
		field.Set(out)
		return nil
	case reflect.String:
		if !d.raw {
			first = strings.TrimSpace(first)
		}
		if d.maxLen >= 0 {
			if err := hoard.CheckParam(d.name, first, d.maxLen); err != nil {
				return err
			}
		}
		field.SetString(first)
	case reflect.Int, reflect.Int32, reflect.Int64:
		s := strings.TrimSpace(first)
		if s == "" {
			return nil
		}
		n, err := strconv.ParseInt(s, 10, field.Type().Bits())
		if errors.Is(err, strconv.ErrRange) {
			return hoard.Errorf(hoard.EINVALID, "%s is out of range.", d.name)
		} else if err != nil {
			return hoard.Errorf(hoard.EINVALID, "%s must be a whole number.", d.name)
		}
		field.SetInt(n)
	case reflect.Bool:
		switch strings.ToLower(strings.TrimSpace(first)) {
		case "", "0", "false", "off", "no":
		case "1", "true", "on", "yes":
			field.SetBool(true)
		default:
			return hoard.Errorf(hoard.EINVALID, "%s must be true or false.", d.name)
		}
	default:
		panic(fmt.Sprintf("decodeParams: parameter %s has unsupported type %s", d.name, field.Type()))
	}
	return nil
}

// declaredBounds maps the text parameters of a params struct (those of
// the structs it embeds too) to their length in characters: the field's
// `validate:"max=…"` (for a list, the bound of each value), or
// maxParamLen.
func declaredBounds(t reflect.Type) map[string]int {
	bounds := map[string]int{}
	if t == nil {
		return bounds
	}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("form"), ",")
		if f.Anonymous && f.Type.Kind() == reflect.Struct && name == "" {
			maps.Copy(bounds, declaredBounds(f.Type))
			continue
		}
		tag := f.Tag.Get("validate")
		switch {
		case name == "" || name == "-":
			continue
		case f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.String:
			_, tag, _ = strings.Cut(tag, "dive,")
		case f.Type.Kind() != reflect.String:
			continue
		}
		bounds[name] = maxParamLen
		if v, ok := tagRule(tag, "max"); ok {
			bounds[name], _ = strconv.Atoi(v)
		}
	}
	return bounds
}

// tagRule returns the parameter of rule in a validate tag ("max=200" →
// "200").
func tagRule(tag, rule string) (string, bool) {
	for _, part := range strings.Split(tag, ",") {
		if k, v, _ := strings.Cut(part, "="); k == rule {
			return v, true
		}
	}
	return "", false
}

// validate checks structs by their `validate` tags; errors name fields by
// their `form` (or `json`) tags, as the client sent them.
var validate = func() *validator.Validate {
	v := validator.New(validator.WithRequiredStructEnabled())
	v.RegisterTagNameFunc(func(f reflect.StructField) string {
		for _, key := range []string{"form", "json"} {
			if name, _, _ := strings.Cut(f.Tag.Get(key), ","); name != "" && name != "-" {
				return name
			}
		}
		return strings.ToLower(f.Name)
	})
	return v
}()

// validationMessage says in words which fields a validator error is about
// and why; of is the validated struct's type (for ranges: "limit must be
// 1–200").
func validationMessage(err error, of reflect.Type) string {
	var ve validator.ValidationErrors
	if !errors.As(err, &ve) {
		return err.Error()
	}
	msgs := make([]string, 0, len(ve))
	for _, fe := range ve {
		msgs = append(msgs, fieldMessage(fe, of))
	}
	return strings.Join(msgs, " ") // each ends with a period
}

// invalidFieldName is the parameter the first failure of a validator error
// is about ("" when it is no validator error).
func invalidFieldName(err error) string {
	var ve validator.ValidationErrors
	if !errors.As(err, &ve) || len(ve) == 0 {
		return ""
	}
	return ve[0].Field()
}

// fieldMessage words one field's validation failure.
func fieldMessage(fe validator.FieldError, of reflect.Type) string {
	name, p := fe.Field(), fe.Param()
	kind := fe.Kind()
	numeric := kind >= reflect.Int && kind <= reflect.Float64
	switch fe.Tag() {
	case "required":
		return name + " is required."
	case "oneof":
		return name + " must be one of " + strings.Join(strings.Fields(p), ", ") + "."
	case "min", "max", "gte", "lte", "gt", "lt":
		switch {
		case kind == reflect.String:
			if fe.Tag() == "max" || fe.Tag() == "lte" {
				return fmt.Sprintf("%s is too long (%s characters at most).", name, p)
			}
			return fmt.Sprintf("%s is too short (%s characters at least).", name, p)
		case kind == reflect.Slice:
			if fe.Tag() == "max" || fe.Tag() == "lte" {
				return fmt.Sprintf("%s has too many values (%s at most).", name, p)
			}
			return fmt.Sprintf("%s needs at least %s values.", name, p)
		case numeric:
			if lo, hi, ok := numericRange(of, fe.StructNamespace()); ok {
				return fmt.Sprintf("%s must be %s–%s.", name, lo, hi)
			}
			return fmt.Sprintf("%s must be %s %s.", name, map[string]string{"min": "at least", "gte": "at least",
				"max": "at most", "lte": "at most", "gt": "greater than", "lt": "less than"}[fe.Tag()], p)
		}
	}
	return fmt.Sprintf("%s is not valid (%s).", name, fe.Tag())
}

// numericRange finds both bounds (min/gte and max/lte) of a numeric field
// named by a validator namespace ("catalogParams.Limit"), when it has both.
func numericRange(of reflect.Type, namespace string) (lo, hi string, ok bool) {
	if of == nil || of.Kind() != reflect.Struct {
		return "", "", false
	}
	_, field, found := strings.Cut(namespace, ".")
	if !found || strings.Contains(field, ".") {
		return "", "", false
	}
	f, found := of.FieldByName(field)
	if !found {
		return "", "", false
	}
	tag := f.Tag.Get("validate")
	lo, okLo := tagRule(tag, "min")
	if !okLo {
		lo, okLo = tagRule(tag, "gte")
	}
	hi, okHi := tagRule(tag, "max")
	if !okHi {
		hi, okHi = tagRule(tag, "lte")
	}
	return lo, hi, okLo && okHi
}
