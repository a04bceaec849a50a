package kernelspec

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// nativeKernelName is the spec jupyter_client takes from ipykernel itself
// when none of that name is installed.
const nativeKernelName = "python3"

// Search is what a Jupyter running on some Python would offer.
type Search struct {
	Dirs   []string      // the kernels directories searched, in priority order
	Specs  []*KernelSpec // the visible specs, sorted by name
	Broken []error       // specs Jupyter would skip (unreadable kernel.json), with why
}

// FindAll finds the kernelspecs a Jupyter running on py offers, the way
// jupyter_client 8.10 does: for each name the first directory in
// KernelDirs wins, even when its kernel.json turns out broken; ipykernel's
// built-in python3 fills in when no python3 is installed.
func FindAll(py Python) (Search, error) {
	dirs, err := KernelDirs(py)
	if err != nil {
		return Search{}, err
	}
	s := Search{Dirs: dirs}
	found := winners(dirs)
	for _, name := range slices.Sorted(maps.Keys(found)) {
		spec, err := ReadSpec(found[name])
		if err != nil {
			s.Broken = append(s.Broken, err)
			continue
		}
		s.Specs = append(s.Specs, spec)
	}
	if _, installed := found[nativeKernelName]; py.Native != nil && !installed {
		s.Specs = append(s.Specs, py.Native)
		slices.SortFunc(s.Specs, func(a, b *KernelSpec) int { return strings.Compare(a.Name, b.Name) })
	}
	return s, nil
}

// winners maps each kernel name to the first spec directory holding it.
// Names Jupyter warns about as invalid are still listed, as Jupyter does.
func winners(kernelDirs []string) map[string]string {
	found := map[string]string{}
	for _, kd := range kernelDirs {
		entries, err := os.ReadDir(kd)
		if err != nil {
			continue // a missing directory is the common case
		}
		for _, e := range entries {
			dir := filepath.Join(kd, e.Name())
			name := strings.ToLower(e.Name())
			if _, taken := found[name]; taken || !isSpecDir(dir) {
				continue
			}
			found[name] = dir
		}
	}
	return found
}

// isSpecDir is Jupyter's test: a directory (symlinks followed) holding a
// kernel.json file.
func isSpecDir(dir string) bool {
	info, err := os.Stat(filepath.Join(dir, specFile))
	return err == nil && info.Mode().IsRegular()
}

// Get returns the visible spec called name, compared as Jupyter does,
// lowercased.
func (s Search) Get(name string) (*KernelSpec, error) {
	i := slices.IndexFunc(s.Specs, named(strings.ToLower(name)))
	if i < 0 {
		return nil, &NotFoundError{Name: name, Installed: s.names()}
	}
	return s.Specs[i], nil
}

// GuardOf returns the visible guarded spec that wraps the spec called name,
// or nil when it is not guarded.
func (s Search) GuardOf(name string) *KernelSpec {
	i := slices.IndexFunc(s.Specs, func(k *KernelSpec) bool { return k.Wraps() == name })
	if i < 0 {
		return nil
	}
	return s.Specs[i]
}

func (s Search) names() []string {
	names := make([]string, len(s.Specs))
	for i, k := range s.Specs {
		names[i] = k.Name
	}
	return names
}

func named(name string) func(*KernelSpec) bool {
	return func(k *KernelSpec) bool { return k.Name == name }
}

// NotFoundError says a kernelspec name is unknown and which ones exist.
type NotFoundError struct {
	Name      string
	Installed []string
}

func (e *NotFoundError) Error() string {
	if len(e.Installed) == 0 {
		return fmt.Sprintf("no kernelspec named %s; none are installed", e.Name)
	}
	return fmt.Sprintf("no kernelspec named %s; installed: %s", e.Name, strings.Join(e.Installed, ", "))
}
