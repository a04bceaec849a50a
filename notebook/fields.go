package notebook

import (
	"encoding/json"
	"fmt"
	"maps"
)

// fields is one decoded JSON object being read into a struct: each known
// key is taken out as it is read, and what is left is the Extra to keep.
type fields struct {
	m     map[string]any
	where string // "cell 3", "cell 3, output 2": prefixes every error
}

// object makes fields of v, which must be a JSON object.
func object(v any, where string) (*fields, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: expected a JSON object, found %s", where, kind(v))
	}
	return &fields{m: maps.Clone(m), where: where}, nil
}

func (f *fields) errorf(format string, args ...any) error {
	return fmt.Errorf("%s: "+format, append([]any{f.where}, args...)...)
}

// take removes key and returns its value.
func (f *fields) take(key string) (any, bool) {
	v, ok := f.m[key]
	delete(f.m, key)
	return v, ok
}

// rest is what no take asked for; nil when nothing is left.
func (f *fields) rest() map[string]any {
	if len(f.m) == 0 {
		return nil
	}
	return f.m
}

// str takes a required string.
func (f *fields) str(key string) (string, error) {
	v, ok := f.take(key)
	if !ok {
		return "", f.errorf("no %q", key)
	}
	s, ok := v.(string)
	if !ok {
		return "", f.errorf("%q must be a string, found %s", key, kind(v))
	}
	return s, nil
}

// text takes a required multiline string: a string or a list of strings.
func (f *fields) text(key string) (string, error) {
	v, ok := f.take(key)
	if !ok {
		return "", f.errorf("no %q", key)
	}
	s, ok := multiline(v)
	if !ok {
		return "", f.errorf("%q must be a string or a list of strings, found %s", key, kind(v))
	}
	return s, nil
}

// obj takes an optional object; a missing one is nil.
func (f *fields) obj(key string) (map[string]any, error) {
	v, ok := f.take(key)
	if !ok {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, f.errorf("%q must be an object, found %s", key, kind(v))
	}
	return m, nil
}

// count takes an execution count: an integer or null (nil); a missing one
// is null too.
func (f *fields) count(key string) (*int, error) {
	v, _ := f.take(key)
	if v == nil {
		return nil, nil
	}
	n, ok := v.(json.Number)
	if ok {
		if i, err := n.Int64(); err == nil {
			c := int(i)
			return &c, nil
		}
	}
	return nil, f.errorf("%q must be an integer or null, found %s", key, kind(v))
}

// list takes an optional array.
func (f *fields) list(key string) ([]any, error) {
	v, ok := f.take(key)
	if !ok {
		return nil, nil
	}
	l, ok := v.([]any)
	if !ok {
		return nil, f.errorf("%q must be a list, found %s", key, kind(v))
	}
	return l, nil
}

// kind names the JSON type of a decoded value, for error messages.
func kind(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number:
		return "the number " + string(v)
	case string:
		if r := []rune(v); len(r) > 40 {
			v = string(r[:40]) + "…"
		}
		return fmt.Sprintf("the string %q", v)
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}
