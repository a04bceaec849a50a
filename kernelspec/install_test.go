package kernelspec

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// entries lists a directory's names.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, de := range des {
		names = append(names, de.Name())
	}
	return names
}

func TestInstallTwice(t *testing.T) {
	kernels := filepath.Join(t.TempDir(), "share", "jupyter", "kernels")
	spec := readFixture(t, "ir")
	for range 2 {
		g, err := Install(spec, guardctl, kernels, Python{}, Naming{})
		if err != nil {
			t.Fatal(err)
		}
		if g.Dir != filepath.Join(kernels, "ir-guarded") {
			t.Errorf("installed in %s", g.Dir)
		}
	}
	if got := entries(t, kernels); !slices.Equal(got, []string{"ir-guarded"}) {
		t.Errorf("kernels dir holds %q, want just ir-guarded", got)
	}
	if got := entries(t, filepath.Dir(kernels)); !slices.Equal(got, []string{"kernels"}) {
		t.Errorf("staging left behind: %q", got)
	}

	installed, err := ReadSpec(filepath.Join(kernels, "ir-guarded"))
	if err != nil {
		t.Fatal(err)
	}
	if installed.Wraps() != "ir" || installed.Argv[3] != guardctl {
		t.Errorf("installed spec %+v", installed)
	}
	logo, _ := os.ReadFile(filepath.Join(installed.Dir, "logo-64x64.png"))
	orig, _ := os.ReadFile(filepath.Join(spec.Dir, "logo-64x64.png"))
	if len(logo) == 0 || string(logo) != string(orig) {
		t.Error("logo not copied")
	}
	info, err := os.Stat(filepath.Join(installed.Dir, "scripts", "launch.sh"))
	if err != nil || info.Mode().Perm()&0o100 == 0 {
		t.Errorf("scripts/launch.sh not copied executable: %v %v", info, err)
	}
}

func TestInstallPinsBarePython(t *testing.T) {
	kernels := t.TempDir()
	py := Python{Executable: "/venv/bin/python", Version: "3.11"}
	g, err := Install(readFixture(t, "python3"), guardctl, kernels, py, Naming{})
	if err != nil {
		t.Fatal(err)
	}
	if i := slices.Index(g.Argv, "--"); g.Argv[i+1] != "/venv/bin/python" {
		t.Errorf("argv %q: want the kernel's python pinned to /venv/bin/python", g.Argv)
	}
}

func TestInstallLeavesForeignSpecAlone(t *testing.T) {
	kernels := t.TempDir()
	foreign := filepath.Join(kernels, "ir-guarded")
	placeSpec(t, "python3", foreign)
	before, _ := os.ReadFile(filepath.Join(foreign, specFile))

	_, err := Install(readFixture(t, "ir"), guardctl, kernels, Python{}, Naming{})
	if err == nil || !strings.Contains(err.Error(), "did not create it") {
		t.Errorf("Install over a foreign spec: error %v", err)
	}
	if after, _ := os.ReadFile(filepath.Join(foreign, specFile)); string(after) != string(before) {
		t.Error("foreign spec changed")
	}
}

func TestInstallDoesNotWriteThroughSymlinkedSpecFile(t *testing.T) {
	shared := t.TempDir()
	placeSpec(t, "ir", filepath.Join(shared, "real"))
	specDir := filepath.Join(shared, "linked")
	if err := os.Mkdir(specDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(shared, "real", specFile), filepath.Join(specDir, specFile)); err != nil {
		t.Fatal(err)
	}
	spec, err := ReadSpec(specDir)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(shared, "real", specFile))

	if _, err := Install(spec, guardctl, t.TempDir(), Python{}, Naming{}); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(filepath.Join(shared, "real", specFile)); string(after) != string(before) {
		t.Error("installing rewrote the original kernel.json through its symlink")
	}
}

func TestUninstallRemovesOnlyGuardedSpecs(t *testing.T) {
	kernels := t.TempDir()
	for _, fixture := range []string{"ir", "python3"} {
		if _, err := Install(readFixture(t, fixture), guardctl, kernels, Python{}, Naming{}); err != nil {
			t.Fatal(err)
		}
	}
	placeSpec(t, "ir", filepath.Join(kernels, "ir"))
	placeSpec(t, "ir", filepath.Join(kernels, "lookalike-guarded"))

	if g, err := Uninstall(kernels, "IR"); err != nil || g.Name != "ir-guarded" {
		t.Errorf("Uninstall(IR) = %v, %v; want ir-guarded removed by its original's name", g, err)
	}
	if g, err := Uninstall(kernels, "python3-guarded"); err != nil || g.Name != "python3-guarded" {
		t.Errorf("Uninstall(python3-guarded) = %v, %v", g, err)
	}
	for _, foreign := range []string{"lookalike-guarded", "lookalike", "ir"} {
		if _, err := Uninstall(kernels, foreign); err == nil {
			t.Errorf("Uninstall(%s) succeeded on a spec guardctl did not install", foreign)
		}
	}
	if got := entries(t, kernels); !slices.Equal(got, []string{"ir", "lookalike-guarded"}) {
		t.Errorf("left %q, want the foreign specs untouched", got)
	}
}

func TestGuardedSpecsAreListedNotRewrapped(t *testing.T) {
	cleanEnv(t)
	ownSystemDirs(t)
	data := t.TempDir()
	t.Setenv("JUPYTER_DATA_DIR", data)
	placeSpec(t, "ir", filepath.Join(data, "kernels", "ir"))
	placeSpec(t, "python3", filepath.Join(data, "kernels", "python3"))
	kernels, _ := UserKernelsDir()
	if _, err := Install(readFixture(t, "ir"), guardctl, kernels, Python{}, Naming{}); err != nil {
		t.Fatal(err)
	}

	s, err := FindAll(Python{})
	if err != nil {
		t.Fatal(err)
	}
	guarded, _ := s.Get("ir-guarded")
	if g := s.GuardOf("ir"); g != guarded {
		t.Errorf("GuardOf(ir) = %v, want ir-guarded", g)
	}
	if g := s.GuardOf("python3"); g != nil {
		t.Errorf("GuardOf(python3) = %v, want none", g)
	}
	if _, err := Install(guarded, guardctl, kernels, Python{}, Naming{}); err == nil {
		t.Error("installing a guarded spec wrapped it again")
	}
	if got := GuardedIn(kernels); len(got) != 1 || got[0].Name != "ir-guarded" {
		t.Errorf("GuardedIn = %v, want [ir-guarded]", got)
	}
}
