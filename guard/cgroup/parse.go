package cgroup

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"strconv"
)

// noLimit stands for v2's "max". v1 writes its own "unlimited" as a huge
// number (9223372036854771712 with 4 KiB pages); it needs no special case
// because it is always above the host's memory, which then wins.
const noLimit = math.MaxUint64

// readUint reads a file holding one number, or "max".
func readUint(file string) (uint64, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return 0, err
	}
	return parseUint(file, bytes.TrimSpace(data))
}

func parseUint(file string, v []byte) (uint64, error) {
	if string(v) == "max" {
		return noLimit, nil
	}
	n, err := strconv.ParseUint(string(v), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %q is not a number of bytes or \"max\"", file, v)
	}
	return n, nil
}

// readFields reads a flat-keyed file of "key value" lines (memory.stat,
// memory.oom_control, memory.events, cgroup.events) and returns the values
// of keys, in their order. A missing key is an error: these files carry a
// fixed set of keys on every kernel the guard supports.
func readFields(file string, keys ...string) ([]uint64, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	return parseFields(file, data, keys...)
}

func parseFields(file string, data []byte, keys ...string) (vals []uint64, err error) {
	vals = make([]uint64, len(keys))
	seen := make([]bool, len(keys))
	for line := range bytes.Lines(data) {
		k, v, ok := bytes.Cut(bytes.TrimSpace(line), []byte(" "))
		if !ok {
			continue
		}
		for i, want := range keys {
			if string(k) == want {
				if vals[i], err = parseUint(file+" "+want, v); err != nil {
					return nil, err
				}
				seen[i] = true
			}
		}
	}
	for i, ok := range seen {
		if !ok {
			return nil, fmt.Errorf("%s: no %q line", file, keys[i])
		}
	}
	return vals, nil
}
