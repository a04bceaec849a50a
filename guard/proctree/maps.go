package proctree

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// Mapped is the index in libraries of the first that process pid (under
// procRoot, "/proc") has mapped, by a substring of the mapped file's path
// in /proc/PID/maps; -1 if none is.
func Mapped(procRoot string, pid int, libraries []string) (int, error) {
	maps, err := os.Open(procRoot + "/" + strconv.Itoa(pid) + "/maps")
	if err != nil {
		return -1, fmt.Errorf("libraries of pid %d: %w", pid, err)
	}
	defer maps.Close()
	sc := bufio.NewScanner(maps)
	for sc.Scan() {
		for i, lib := range libraries {
			if bytes.Contains(sc.Bytes(), []byte(lib)) {
				return i, nil
			}
		}
	}
	if err := sc.Err(); err != nil {
		return -1, fmt.Errorf("libraries of pid %d: %w", pid, err)
	}
	return -1, nil
}
