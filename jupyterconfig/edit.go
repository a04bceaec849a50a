// Package jupyterconfig sets and unsets one setting in a Jupyter JSON config
// file (jupyter_config.json and its kind: {"Section": {"key": value}}),
// leaving every other byte of the file as it was, so that Unset after Set
// gives back the file an admin wrote, layout and key order included.
//
// Set appends the setting at the end of its section (or the section at the
// end of the file), separated as the member before it is; Unset cuts
// exactly that text, and the section if it is left empty, and the file if
// nothing is left in it. Nothing else is rewritten: a re-encoded file
// would lose its key order and layout.
package jupyterconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
)

// Get returns section.key's value in the file at path, as JSON text, and
// whether it is set there; a missing file sets nothing.
func Get(path, section, key string) (string, bool, error) {
	data, err := read(path)
	if err != nil || data == nil {
		return "", false, err
	}
	sec, ok := lookup(data, topObject(data), section)
	if !ok || data[sec.valStart] != '{' {
		return "", false, nil
	}
	m, ok := lookup(data, sec.valStart, key)
	if !ok {
		return "", false, nil
	}
	return string(data[m.valStart:m.valEnd]), true, nil
}

// Set makes section.key the string value in the file at path, creating
// the file (and its directory) when there is none. It reports whether it
// changed the file: not when the setting already had this value. A setting
// with another value is someone's choice: Set leaves it and says so.
func Set(path, section, key, value string) (bool, error) {
	data, err := read(path)
	if err != nil {
		return false, err
	}
	member := quote(key) + ": " + quote(value)
	if data == nil {
		text := "{\n  " + quote(section) + ": {\n    " + member + "\n  }\n}\n"
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return false, fmt.Errorf("%s: %w", path, err)
		}
		return true, write(path, []byte(text), 0o644)
	}
	sec, ok := lookup(data, topObject(data), section)
	if !ok {
		return true, replace(path, insert(data, topObject(data), quote(section)+": {"+member+"}"))
	}
	if data[sec.valStart] != '{' {
		return false, fmt.Errorf("%s: %s is not an object; leaving the file alone", path, section)
	}
	if m, ok := lookup(data, sec.valStart, key); ok {
		if got := string(data[m.valStart:m.valEnd]); got != quote(value) {
			return false, fmt.Errorf("%s sets %s.%s to %s already; leaving it", path, section, key, got)
		}
		return false, nil
	}
	return true, replace(path, insert(data, sec.valStart, member))
}

// Unset removes section.key from the file at path when its value is the
// string value, then the section if nothing is left in it, then the file
// if it is left empty: the reverse of Set. It reports whether it removed
// anything; a setting with another value is not its to remove.
func Unset(path, section, key, value string) (bool, error) {
	data, err := read(path)
	if err != nil || data == nil {
		return false, err
	}
	sec, ok := lookup(data, topObject(data), section)
	if !ok || data[sec.valStart] != '{' {
		return false, nil
	}
	inner, _ := members(data, sec.valStart)
	i := indexOf(data, inner, key)
	if i < 0 {
		return false, nil
	}
	if got := string(data[inner[i].valStart:inner[i].valEnd]); got != quote(value) {
		return false, fmt.Errorf("%s sets %s.%s to %s, not %s; leaving it", path, section, key, got, quote(value))
	}
	if len(inner) > 1 {
		return true, replace(path, cut(data, inner, i))
	}
	top, _ := members(data, topObject(data))
	if len(top) == 1 {
		if err := os.Remove(path); err != nil {
			return false, fmt.Errorf("%s: %w", path, err)
		}
		return true, nil
	}
	return true, replace(path, cut(data, top, indexOf(data, top, section)))
}

// read returns the file's bytes, nil when there is none, or an error when
// it is not a JSON object: Jupyter itself would fail to load it.
func read(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil || data[topObject(data)] != '{' {
		return nil, fmt.Errorf("%s is not a JSON object; leaving it alone", path)
	}
	return data, nil
}

func quote(s string) string { return strconv.Quote(s) }

// member is one "key": value of an object, by offsets into the file.
type member struct {
	keyStart, keyEnd int // the key's quotes included
	valStart, valEnd int
}

// topObject is the offset of the file's opening brace.
func topObject(data []byte) int { return skipSpace(data, 0) }

// lookup finds key among the members of the object opening at open.
func lookup(data []byte, open int, key string) (member, bool) {
	ms, _ := members(data, open)
	if i := indexOf(data, ms, key); i >= 0 {
		return ms[i], true
	}
	return member{}, false
}

// indexOf is the last member named key, the one JSON decoders keep.
func indexOf(data []byte, ms []member, key string) int {
	for i := len(ms) - 1; i >= 0; i-- {
		var k string
		if json.Unmarshal(data[ms[i].keyStart:ms[i].keyEnd], &k) == nil && k == key {
			return i
		}
	}
	return -1
}

// insert adds text as the last member of the object opening at open:
// after the last member, with the separator the file puts before that
// member; into an empty object, on a line of its own.
func insert(data []byte, open int, text string) []byte {
	ms, closing := members(data, open)
	var out bytes.Buffer
	if len(ms) == 0 {
		out.Write(data[:open+1])
		out.WriteString("\n  " + text + "\n")
		out.Write(data[closing:])
		return out.Bytes()
	}
	last := ms[len(ms)-1]
	before := open + 1
	if len(ms) > 1 {
		before = ms[len(ms)-2].valEnd
	}
	sep := bytes.TrimLeft(data[before:last.keyStart], ",")
	out.Write(data[:last.valEnd])
	out.WriteString(",")
	out.Write(sep)
	out.WriteString(text)
	out.Write(data[last.valEnd:])
	return out.Bytes()
}

// cut removes member i of ms, with the separator insert put before it.
func cut(data []byte, ms []member, i int) []byte {
	from, to := ms[i].keyStart, ms[i].valEnd
	switch {
	case i > 0:
		from = ms[i-1].valEnd
	case len(ms) > 1:
		to = ms[1].keyStart
	}
	return append(append([]byte{}, data[:from]...), data[to:]...)
}

// members lists the members of the object opening at data[open] and
// returns the offset of its closing brace. data is valid JSON (read
// checked it).
func members(data []byte, open int) ([]member, int) {
	var ms []member
	i := skipSpace(data, open+1)
	for data[i] != '}' {
		if data[i] == ',' {
			i = skipSpace(data, i+1)
		}
		m := member{keyStart: i, keyEnd: scanString(data, i)}
		m.valStart = skipSpace(data, skipSpace(data, m.keyEnd)+1) // past the colon
		m.valEnd = scanValue(data, m.valStart)
		ms = append(ms, m)
		i = skipSpace(data, m.valEnd)
	}
	return ms, i
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// scanString returns the offset just past the string opening at data[i].
func scanString(data []byte, i int) int {
	for i++; data[i] != '"'; i++ {
		if data[i] == '\\' {
			i++
		}
	}
	return i + 1
}

// scanValue returns the offset just past the value starting at data[i].
func scanValue(data []byte, i int) int {
	switch data[i] {
	case '"':
		return scanString(data, i)
	case '{', '[':
		depth := 0
		for {
			switch data[i] {
			case '"':
				i = scanString(data, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
	}
	for i < len(data) && bytes.IndexByte([]byte(",}] \t\r\n"), data[i]) < 0 {
		i++
	}
	return i
}

// replace writes data over the file at path, keeping its mode.
func replace(path string, data []byte) error {
	mode := fs.FileMode(0o644)
	if info, err := os.Stat(path); err == nil {
		mode = info.Mode().Perm()
	}
	return write(path, data, mode)
}

// write replaces path's content at once (a temporary file renamed over
// it), so a Jupyter starting meanwhile reads the old file or the new one.
func write(path string, data []byte, mode fs.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".guardctl-*.json")
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
