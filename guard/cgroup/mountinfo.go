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

// place says where a cgroup path lies under the mount: below the mount
// point, down `hidden` levels whose names this namespace cannot see, then
// down rest. Both the path and the mount's root are relative to the
// reader's cgroup namespace: in a namespace made without a mount of its
// own, the host's mount has a root such as "/../..", and a group outside
// the namespace reads "/../other". ok is false when the mount does not show
// the group (a container's mount shows only its own subtree).
func (m mount) place(cgpath string) (hidden int, rest string, ok bool) {
	root, p := components(m.root), components(cgpath)
	n := 0
	for n < len(root) && n < len(p) && root[n] == p[n] {
		n++
	}
	root, p = root[n:], p[n:]
	if slices.ContainsFunc(root, func(c string) bool { return c != ".." }) || slices.Contains(p, "..") {
		return 0, "", false // beside or above what the mount shows
	}
	return len(root), strings.Join(p, "/"), true
}

// components splits a cgroup path ("/a/b", "/../a") into its names.
func components(p string) []string {
	return strings.FieldsFunc(p, func(r rune) bool { return r == '/' })
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
