package cgroup

import (
	"errors"
	"io/fs"
	"strings"
	"testing"
)

func TestUsage(t *testing.T) {
	for _, c := range []struct {
		name string
		host Host
		pid  int
		want Usage
	}{
		{"v1", fakeV1, 100, Usage{Bytes: 5 * gib, WorkingSet: 5*gib - gib*3/4, Anon: 4 * gib, File: gib, InactiveFile: gib * 3 / 4}},
		{"v2", fakeV2, 100, Usage{Bytes: 3 * gib, WorkingSet: 3*gib - gib/2, Anon: 2 * gib, File: gib, InactiveFile: gib / 2}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := discover(t, c.host, c.pid).Usage()
			if err != nil || got != c.want {
				t.Errorf("Usage() = %+v, %v; want %+v", got, err, c.want)
			}
		})
	}
}

func TestUsageMissingStat(t *testing.T) {
	_, err := discover(t, fakeV1, 500).Usage()
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "memory.stat") {
		t.Errorf("Usage() error = %v, want one naming the missing memory.stat", err)
	}
}

func TestOOM(t *testing.T) {
	for _, c := range []struct {
		name string
		host Host
		pid  int
		want OOMState
	}{
		{"v1 killed twice", fakeV1, 100, OOMState{Kills: 2}},
		{"v1 parked", fakeV1, 200, OOMState{UnderOOM: true, KillDisabled: true}},
		{"v2 killed once", fakeV2, 100, OOMState{Kills: 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := discover(t, c.host, c.pid).OOM()
			if err != nil || got != c.want {
				t.Errorf("OOM() = %+v, %v; want %+v", got, err, c.want)
			}
		})
	}
	if _, err := discover(t, fakeV1, 500).OOM(); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("OOM() without memory.oom_control: error %v, want ErrNotExist", err)
	}
}

func TestReadFieldsMissingKey(t *testing.T) {
	_, err := readFields("../../testdata/cgroup/v2/sys/fs/cgroup/user.slice/memory.events", "oom_kill", "no_such_key")
	if err == nil || !strings.Contains(err.Error(), "no_such_key") {
		t.Errorf("error = %v, want one naming the missing key", err)
	}
}
