package notebook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
)

// pyJSON writes v exactly as Python's json.dumps(v, indent=1,
// sort_keys=True, separators=(",", ": "), ensure_ascii=False) does, which is
// how nbformat writes notebooks. v is decoded JSON (map[string]any, []any,
// []string, string, json.Number, int, bool, nil).
func pyJSON(b *bytes.Buffer, v any, depth int) error {
	switch v := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case string:
		pyString(b, v)
	case int:
		b.WriteString(strconv.Itoa(v))
	case json.Number:
		n, err := pyNumber(v)
		if err != nil {
			return err
		}
		b.WriteString(n)
	case []string:
		return pyList(b, len(v), depth, func(i int) error { pyString(b, v[i]); return nil })
	case []any:
		return pyList(b, len(v), depth, func(i int) error { return pyJSON(b, v[i], depth+1) })
	case map[string]any:
		return pyObject(b, v, depth)
	default:
		return fmt.Errorf("cannot write a %T as notebook JSON", v)
	}
	return nil
}

// pyList writes a list of n items; item writes the i-th.
func pyList(b *bytes.Buffer, n, depth int, item func(i int) error) error {
	if n == 0 {
		b.WriteString("[]")
		return nil
	}
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		newline(b, depth+1)
		if err := item(i); err != nil {
			return err
		}
	}
	newline(b, depth)
	b.WriteByte(']')
	return nil
}

// pyObject writes an object with its keys sorted by code point, as Python
// sorts str keys (byte order of UTF-8 is code point order).
func pyObject(b *bytes.Buffer, m map[string]any, depth int) error {
	if len(m) == 0 {
		b.WriteString("{}")
		return nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		newline(b, depth+1)
		pyString(b, k)
		b.WriteString(": ")
		if err := pyJSON(b, m[k], depth+1); err != nil {
			return fmt.Errorf("%q: %w", k, err)
		}
	}
	newline(b, depth)
	b.WriteByte('}')
	return nil
}

// newline starts a line indented one space per depth (indent=1).
func newline(b *bytes.Buffer, depth int) {
	b.WriteByte('\n')
	for range depth {
		b.WriteByte(' ')
	}
}

// pyString quotes s as json's encode_basestring does with ensure_ascii off:
// only the quote, the backslash and control characters are escaped; every
// other character, U+2028 and U+2029 included, is written as itself.
func pyString(b *bytes.Buffer, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			if r < 0x20 {
				fmt.Fprintf(b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
}

// pyNumber spells a JSON number as Python writes the value json.loads made
// of it: an int (any size) when the text has no fraction or exponent, else
// a float in repr form.
func pyNumber(n json.Number) (string, error) {
	s := string(n)
	if s == nanNumber {
		return "NaN", nil
	}
	if !strings.ContainsAny(s, ".eE") {
		i, ok := new(big.Int).SetString(s, 10)
		if !ok {
			return "", fmt.Errorf("number %q is not an integer", s)
		}
		return i.String(), nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) { // out of range: ±Inf, as in Python
		return "", fmt.Errorf("number %q: %w", s, err)
	}
	return pyFloat(f), nil
}

// pyFloat is Python's repr of a float (what json.dumps writes): the
// shortest digits that read back to f, in positional notation with at
// least one decimal when the decimal exponent is in [-4, 16), else as
// d.ddde±XX.
func pyFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case math.IsNaN(f):
		return "NaN"
	}
	// Shortest round-trip digits, as "-d.ddde±x".
	e := strconv.FormatFloat(f, 'e', -1, 64)
	mantissa, expText, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(expText)
	sign := ""
	if strings.HasPrefix(mantissa, "-") {
		sign, mantissa = "-", mantissa[1:]
	}
	digits := strings.Replace(mantissa, ".", "", 1)

	if exp < -4 || exp >= 16 {
		m := digits[:1]
		if len(digits) > 1 {
			m += "." + digits[1:]
		}
		expSign := "+"
		if exp < 0 {
			expSign, exp = "-", -exp
		}
		return fmt.Sprintf("%s%se%s%02d", sign, m, expSign, exp)
	}
	var intPart, frac string
	switch {
	case exp < 0:
		intPart, frac = "0", strings.Repeat("0", -exp-1)+digits
	case exp+1 >= len(digits):
		intPart, frac = digits+strings.Repeat("0", exp+1-len(digits)), "0"
	default:
		intPart, frac = digits[:exp+1], digits[exp+1:]
	}
	return sign + intPart + "." + frac
}
