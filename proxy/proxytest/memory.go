package proxytest

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// RSS is this process's resident memory now and at its peak since the
// last ResetPeak (VmRSS and VmHWM in /proc/self/status), in bytes.
func RSS() (now, peak int64, err error) {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, 0, err
	}
	field := func(name string) (int64, error) {
		i := bytes.Index(status, []byte("\n"+name+":"))
		if i < 0 {
			return 0, fmt.Errorf("/proc/self/status has no %s", name)
		}
		f := bytes.Fields(status[i+len(name)+2:])
		if len(f) < 2 || string(f[1]) != "kB" {
			return 0, fmt.Errorf("/proc/self/status: %s is not in kB", name)
		}
		kb, err := strconv.ParseInt(string(f[0]), 10, 64)
		return kb << 10, err
	}
	if now, err = field("VmRSS"); err != nil {
		return 0, 0, err
	}
	peak, err = field("VmHWM")
	return now, peak, err
}

// ResetPeak makes the peak RSS's measure start now (Linux's clear_refs).
func ResetPeak() error { return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }
