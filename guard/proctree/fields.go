package proctree

import (
	"bytes"
	"fmt"
	"strconv"
)

// lookup returns the value of the "Key: value" line in a /proc file laid out
// like status or smaps_rollup, trimmed of blanks.
func lookup(data []byte, key string) ([]byte, bool) {
	for line := range bytes.Lines(data) {
		if value, ok := bytes.CutPrefix(line, []byte(key+":")); ok {
			return bytes.TrimSpace(value), true
		}
	}
	return nil, false
}

// parseKB turns a value such as "321 kB" into bytes.
func parseKB(value []byte) (uint64, error) {
	digits, ok := bytes.CutSuffix(value, []byte(" kB"))
	if !ok {
		return 0, fmt.Errorf("%q is not a size in kB", value)
	}
	kib, err := strconv.ParseUint(string(bytes.TrimSpace(digits)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a size in kB: %w", value, err)
	}
	return kib * 1024, nil
}
