package proctree

import (
	"io"
	"os"
	"strconv"
)

const procRoot = "/proc"

// procPath is /proc/PID/name.
func procPath(pid int, name string) string {
	return procRoot + "/" + strconv.Itoa(pid) + "/" + name
}

// readInto reads a whole /proc file into buf's storage, growing it when the
// file is longer, so a scan over many processes reuses one buffer. procfs
// reports a size of 0, so it reads until EOF.
func readInto(path string, buf []byte) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return buf[:0], err
	}
	defer f.Close()
	buf = buf[:0]
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}
