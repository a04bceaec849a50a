package notebook

import (
	"strings"
)

// splitLines is Python's str.splitlines(keepends=True), which nbformat uses
// to write multiline strings as lists: besides \n, \r and \r\n it breaks
// after \v, \f, the file/group/record separators, NEL and the Unicode line
// and paragraph separators. "" gives an empty list, not [""].
func splitLines(s string) []string {
	lines := []string{}
	start := 0
	for i, r := range s {
		switch r {
		case '\r':
			if i+1 < len(s) && s[i+1] == '\n' {
				continue // the line ends after the \n
			}
		case '\n', '\v', '\f', '\x1c', '\x1d', '\x1e', '\u0085', '\u2028', '\u2029':
		default:
			continue
		}
		end := i + len(string(r))
		lines = append(lines, s[start:end])
		start = end
	}
	if start < len(s) {
		lines = append(lines, s[start:])
	}
	return lines
}

// multiline reads a value nbformat may hold as one string or as a list of
// lines; ok is false when v is neither.
func multiline(v any) (s string, ok bool) {
	switch v := v.(type) {
	case string:
		return v, true
	case []any:
		var b strings.Builder
		for _, line := range v {
			l, ok := line.(string)
			if !ok {
				return "", false
			}
			b.WriteString(l)
		}
		return b.String(), true
	}
	return "", false
}

// isJSONMime says whether nbformat leaves a mime bundle value alone because
// it is JSON: application/json and application/*+json.
func isJSONMime(mime string) bool {
	return mime == "application/json" ||
		(strings.HasPrefix(mime, "application/") && strings.HasSuffix(mime, "+json"))
}

// joinBundle joins, in place, the values of a mime bundle that nbformat
// rejoins on reading: lists of strings under any mime type but JSON ones.
func joinBundle(bundle map[string]any) {
	for mime, v := range bundle {
		if list, isList := v.([]any); isList && !isJSONMime(mime) {
			if s, ok := multiline(list); ok {
				bundle[mime] = s
			}
		}
	}
}

// splitBundle returns a copy of a mime bundle with the strings nbformat
// splits on writing as lists of lines: text/*, JavaScript and SVG.
func splitBundle(bundle map[string]any) map[string]any {
	out := make(map[string]any, len(bundle))
	for mime, v := range bundle {
		s, isString := v.(string)
		if isString && (strings.HasPrefix(mime, "text/") || mime == "application/javascript" || mime == "image/svg+xml") {
			out[mime] = splitLines(s)
			continue
		}
		out[mime] = v
	}
	return out
}
