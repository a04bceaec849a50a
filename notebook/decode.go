package notebook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// decodeJSON decodes one JSON value keeping numbers as json.Number, so
// integers of any size and the spelling of floats survive until written.
// Syntax errors say on which line and column they are.
func decodeJSON(data []byte) (any, error) {
	swapped, nans := pythonConstants(data)
	d := json.NewDecoder(bytes.NewReader(swapped))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, positioned(data, err, nans)
	}
	rest := bytes.TrimLeft(swapped[d.InputOffset():], " \t\r\n")
	if len(rest) > 0 {
		after := originalOffset(int64(len(swapped)-len(rest)), nans) + 1 // just past the first stray byte
		return nil, fmt.Errorf("invalid JSON at line %s: more data after the end of the JSON value", lineCol(data, after))
	}
	return v, nil
}

// positioned turns the offsets of encoding/json's errors into line:column.
func positioned(data []byte, err error, nans []int64) error {
	var syntax *json.SyntaxError
	if errors.As(err, &syntax) {
		return fmt.Errorf("invalid JSON at line %s: %v", lineCol(data, originalOffset(syntax.Offset, nans)), err)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("invalid JSON at line %s: the text ends before the JSON value does", lineCol(data, int64(len(data))+1))
	}
	return fmt.Errorf("invalid JSON: %w", err)
}

// lineCol renders the position of the byte just before offset (encoding/json
// reports errors after reading the offending byte) as "L, column C", both
// counted from 1; the column counts bytes.
func lineCol(data []byte, offset int64) string {
	before := data[:min(max(offset-1, 0), int64(len(data)))]
	line := bytes.Count(before, []byte("\n")) + 1
	col := len(before) - bytes.LastIndexByte(before, '\n')
	return fmt.Sprintf("%d, column %d", line, col)
}

// Python's json (so nbformat) reads and writes NaN, Infinity and -Infinity,
// which encoding/json rejects. Outside strings they are swapped for number
// literals before decoding: Infinity for one of the same length that
// overflows to +Inf, NaN for a marker no one writes, which pyNumber writes
// back as NaN.
var (
	infinityToken = []byte("Infinity")
	infinityNum   = []byte("1e999999")
	nanToken      = []byte("NaN")
)

// nanNumber is the json.Number that stands for NaN.
const nanNumber = "-0E-00000"

// pythonConstants returns data with the constants swapped, and where each
// NaN marker ends in the new text, to map error offsets back.
func pythonConstants(data []byte) (out []byte, nans []int64) {
	if !bytes.Contains(data, nanToken) && !bytes.Contains(data, infinityToken) {
		return data, nil
	}
	out = make([]byte, 0, len(data))
	inString := false
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch {
		case inString && c == '\\' && i+1 < len(data):
			out = append(out, c, data[i+1])
			i++
			continue
		case c == '"':
			inString = !inString
		case inString:
		case bytes.HasPrefix(data[i:], infinityToken):
			out = append(out, infinityNum...)
			i += len(infinityToken) - 1
			continue
		case bytes.HasPrefix(data[i:], nanToken):
			out = append(out, nanNumber...)
			nans = append(nans, int64(len(out)))
			i += len(nanToken) - 1
			continue
		}
		out = append(out, c)
	}
	return out, nans
}

// originalOffset maps an offset in pythonConstants' output back to data.
func originalOffset(offset int64, nans []int64) int64 {
	grown := int64(0)
	for _, end := range nans {
		if end > offset {
			break
		}
		grown += int64(len(nanNumber) - len(nanToken))
	}
	return offset - grown
}
