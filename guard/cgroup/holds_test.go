package cgroup

import (
	"os"
	"path/filepath"
	"testing"
)

// procsTree writes cgroup.procs files: dir (relative) → its pids.
func procsTree(t *testing.T, groups map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for dir, procs := range groups {
		d := filepath.Join(root, dir)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "cgroup.procs"), []byte(procs), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestHoldsOnly(t *testing.T) {
	kernel := []int{100, 101, 102}
	tests := []struct {
		name   string
		groups map[string]string
		want   bool
	}{
		{"the kernel's tree alone", map[string]string{".": "100\n101\n"}, true},
		{"a group below holds a worker", map[string]string{".": "100\n", "workers": "102\n"}, true},
		{"empty", map[string]string{".": ""}, true},
		{"the server too", map[string]string{".": "100\n7\n"}, false},
		{"another process in a group below", map[string]string{".": "100\n", "other": "9\n"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := &Group{Dir: procsTree(t, tt.groups)}
			got, err := g.HoldsOnly(kernel)
			if err != nil || got != tt.want {
				t.Errorf("HoldsOnly = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
	if _, err := (&Group{Dir: filepath.Join(t.TempDir(), "gone")}).HoldsOnly(kernel); err == nil {
		t.Error("a group that does not exist holds only the kernel")
	}
}
