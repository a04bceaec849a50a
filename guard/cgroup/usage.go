package cgroup

import (
	"bytes"
	"errors"

	"github.com/jupyter-guard/jupyter-guard/guard/procfile"
)

// Usage is a cgroup's memory use.
//
// The kernel enforces the limit on Bytes, the raw charge, but before it
// OOM-kills anything it reclaims page cache, and inactive file pages go
// first and cheaply. So the OOM killer effectively acts on WorkingSet: a
// group whose Bytes sits at the limit because of cache is healthy, and one
// whose WorkingSet approaches the limit is about to lose a task. (The same
// figure is what kubelet and cAdvisor call the working set.) Active file
// cache is counted in WorkingSet because reclaiming it is slow and causes
// refaults: the group thrashes before it gets there.
type Usage struct {
	Bytes        uint64 // v1 memory.usage_in_bytes, v2 memory.current
	WorkingSet   uint64 // Bytes minus inactive file cache
	Anon         uint64 // v1 total_rss, v2 anon: memory only an exit or swap gives back
	File         uint64 // v1 total_cache, v2 file: page cache charged to the group
	InactiveFile uint64 // v1 total_inactive_file, v2 inactive_file
}

// Usage reads the group's memory use (two small files).
func (g *Group) Usage() (Usage, error) {
	r := g.UsageReader()
	defer r.Close()
	return r.Read()
}

// UsageReader reads a group's memory use again and again through open
// descriptors, as the sampler does at the end of every cell.
type UsageReader struct {
	usage, stat *procfile.File
	keys        []string
}

// UsageReader returns a reader of the group's usage; Close it when done.
func (g *Group) UsageReader() *UsageReader {
	usageFile, keys := "memory.current", []string{"anon", "file", "inactive_file"}
	if g.Version == V1 {
		usageFile, keys = "memory.usage_in_bytes", []string{"total_rss", "total_cache", "total_inactive_file"}
	}
	return &UsageReader{usage: procfile.New(g.file(usageFile)), stat: procfile.New(g.file("memory.stat")), keys: keys}
}

// Read reads the group's memory use now.
func (r *UsageReader) Read() (Usage, error) {
	var u Usage
	data, err := r.usage.Read()
	if err != nil {
		return u, err
	}
	n, err := parseUint(r.usage.Path(), bytes.TrimSpace(data))
	if err != nil {
		return u, err
	}
	if data, err = r.stat.Read(); err != nil {
		return u, err
	}
	stat, err := parseFields(r.stat.Path(), data, r.keys...)
	if err != nil {
		return u, err
	}
	u = Usage{Bytes: n, Anon: stat[0], File: stat[1], InactiveFile: stat[2]}
	// The two files are read at different instants, and v1's usage is
	// batched per CPU: never let the subtraction wrap.
	u.WorkingSet = u.Bytes - min(u.Bytes, u.InactiveFile)
	return u, nil
}

// Close closes the reader's files.
func (r *UsageReader) Close() error {
	return errors.Join(r.usage.Close(), r.stat.Close())
}
