package kernelspec

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Install writes the guarded form of spec (see WrapAs) into kernelsDir,
// replacing one guardctl wrote there before, and returns it. It never
// replaces a spec guardctl did not write. A bare "python" in argv is pinned
// to py's interpreter first, as Jupyter would have resolved it.
//
// The new spec is assembled beside kernelsDir and renamed into place, so
// Jupyter never lists a half-written one.
func Install(spec *KernelSpec, guardctl, kernelsDir string, py Python, n Naming) (*KernelSpec, error) {
	if n.Name != "" && !validName.MatchString(n.Name) {
		return nil, fmt.Errorf("kernelspec name %q: use only letters, digits, '.', '_' and '-', as Jupyter does", n.Name)
	}
	// The guarded spec's directory holds copies of the original's resource
	// files: it is the proxy's --resource-dir too, so it does not depend on
	// the original staying where it is.
	dest := filepath.Join(kernelsDir, guardedName(spec, n))
	pinned := *spec
	pinned.Argv = py.pinInterpreter(spec.Argv)
	pinned.Dir = dest
	guarded, err := WrapAs(&pinned, guardctl, n)
	if err != nil {
		return nil, err
	}
	if err := checkOurs(dest); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(kernelsDir, 0o755); err != nil {
		return nil, fmt.Errorf("kernelspec %s: %w", guarded.Name, err)
	}
	staging, err := os.MkdirTemp(filepath.Dir(kernelsDir), ".guardctl-")
	if err != nil {
		return nil, fmt.Errorf("kernelspec %s: %w", guarded.Name, err)
	}
	defer os.RemoveAll(staging)

	built := filepath.Join(staging, guarded.Name)
	if err := os.CopyFS(built, os.DirFS(spec.Dir)); err != nil {
		return nil, fmt.Errorf("kernelspec %s: copying resources from %s: %w", guarded.Name, spec.Dir, err)
	}
	// The copied kernel.json may be a symlink to the original's; writing
	// through it would clobber the spec being wrapped.
	if err := os.Remove(filepath.Join(built, specFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("kernelspec %s: %w", guarded.Name, err)
	}
	if err := guarded.write(built); err != nil {
		return nil, err
	}
	if err := replaceDir(dest, built, filepath.Join(staging, "previous")); err != nil {
		return nil, fmt.Errorf("kernelspec %s: %w", guarded.Name, err)
	}
	guarded.Dir = dest
	return guarded, nil
}

// validName is what jupyter_client accepts as a kernel name (its
// _kernel_name_pat), any case: names are stored lower-case.
var validName = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

// checkOurs allows dest to be written only if it is free or holds a guarded
// spec guardctl wrote.
func checkOurs(dest string) error {
	if _, err := os.Lstat(dest); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if existing, err := ReadSpec(dest); err == nil && existing.Wraps() != "" {
		return nil
	}
	return fmt.Errorf("%s exists and guardctl did not create it; leaving it alone", dest)
}

// replaceDir moves built to dest, first moving any old dest to trash.
func replaceDir(dest, built, trash string) error {
	if err := os.Rename(dest, trash); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return os.Rename(built, dest)
}

// GuardedIn lists the guarded specs guardctl installed in kernelsDir.
// Unreadable specs are skipped: nothing shows they are guardctl's.
func GuardedIn(kernelsDir string) []*KernelSpec {
	found := winners([]string{kernelsDir})
	var guarded []*KernelSpec
	for _, name := range slices.Sorted(maps.Keys(found)) {
		if spec, err := ReadSpec(found[name]); err == nil && spec.Wraps() != "" {
			guarded = append(guarded, spec)
		}
	}
	return guarded
}

// Uninstall removes from kernelsDir the guarded spec called name, or the
// one wrapping the spec called name, and returns it. Specs guardctl did not
// install are never touched.
func Uninstall(kernelsDir, name string) (*KernelSpec, error) {
	name = strings.ToLower(name)
	for _, g := range GuardedIn(kernelsDir) {
		if g.Name == name || g.Wraps() == name {
			if err := os.RemoveAll(g.Dir); err != nil {
				return nil, fmt.Errorf("removing kernelspec %s: %w", g.Name, err)
			}
			return g, nil
		}
	}
	return nil, fmt.Errorf("no guarded kernelspec for %s in %s", name, kernelsDir)
}
