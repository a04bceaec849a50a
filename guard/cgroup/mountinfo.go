package cgroup

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
)

// mount is one line of /proc/self/mountinfo, reduced to what maps a cgroup
// path to a directory.
type mount struct {
	root  string // the directory of the filesystem shown at point ("/docker/<id>" in a container)
	point string
	fs    string
	opts  []string // super options: they name the v1 controllers
}

// mounts reads the cgroup mounts of the guard's own mount namespace: that is
// where it can open files, whatever the target process sees.
func (h Host) mounts() ([]mount, error) {
	file := h.path("/proc/self/mountinfo")
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var ms []mount
	for line := range bytes.Lines(data) {
		// id parent major:minor root point options [optional...] - fstype source superoptions
		pre, post, ok := strings.Cut(strings.TrimSpace(string(line)), " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if !ok || len(f) < 5 || len(g) < 3 {
			return nil, fmt.Errorf("%s: malformed line %q", file, line)
		}
		if g[0] != "cgroup" && g[0] != "cgroup2" {
			continue
		}
		ms = append(ms, mount{root: unescape(f[3]), point: unescape(f[4]), fs: g[0], opts: strings.Split(g[2], ",")})
	}
	return ms, nil
}

// holds says whether the mount carries the memory controller of version v.
func (m mount) holds(v Version) bool {
	if v == V2 {
		return m.fs == "cgroup2"
	}
	return m.fs == "cgroup" && slices.Contains(m.opts, "memory")
}

// dirOf maps a cgroup path to its place under the mount point, or reports
// that the mount does not show it (a container sees only its own subtree).
func (m mount) dirOf(path string) (string, bool) {
	if strings.Contains(path, "/..") { // outside the reader's cgroup namespace
		return "", false
	}
	if m.root == "/" {
		return m.point + path, true
	}
	if path == m.root {
		return m.point, true
	}
	if rel, ok := strings.CutPrefix(path, m.root+"/"); ok {
		return m.point + "/" + rel, true
	}
	return "", false
}

// unescape undoes mountinfo's octal escapes (\040 for a space, ...).
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
