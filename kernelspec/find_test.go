package kernelspec

import (
	"errors"
	"path/filepath"
	"testing"
)

func TestFindFirstDirWins(t *testing.T) {
	cleanEnv(t)
	ownSystemDirs(t)
	root := t.TempDir()
	t.Setenv("JUPYTER_PATH", filepath.Join(root, "a")+":"+filepath.Join(root, "b"))
	t.Setenv("JUPYTER_DATA_DIR", filepath.Join(root, "data"))
	placeSpec(t, "ir", filepath.Join(root, "a/kernels/echo"))
	placeSpec(t, "remote", filepath.Join(root, "b/kernels/echo"))
	placeSpec(t, "python3", filepath.Join(root, "b/kernels/Mixed"))
	placeSpec(t, "broken", filepath.Join(root, "b/kernels/shadowed"))
	placeSpec(t, "ir", filepath.Join(root, "data/kernels/shadowed"))

	s, err := FindAll(Python{})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.names(); len(got) != 2 || got[0] != "echo" || got[1] != "mixed" {
		t.Fatalf("found %q, want [echo mixed]: a broken spec hides later ones of its name, as in Jupyter", got)
	}
	if len(s.Broken) != 1 {
		t.Errorf("Broken = %v, want the one broken kernel.json", s.Broken)
	}
	echo, err := s.Get("ECHO")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(root, "a/kernels/echo"); echo.Dir != want {
		t.Errorf("echo came from %s, want the first JUPYTER_PATH entry %s", echo.Dir, want)
	}
	mixed, _ := s.Get("mixed")
	if mixed.Name != "mixed" || filepath.Base(mixed.Dir) != "Mixed" {
		t.Errorf("Mixed dir gave name %q dir %q", mixed.Name, mixed.Dir)
	}

	_, err = s.Get("julia")
	var nf *NotFoundError
	if !errors.As(err, &nf) || err.Error() != "no kernelspec named julia; installed: echo, mixed" {
		t.Errorf("Get(julia) error = %v", err)
	}
}

func TestNativeKernelFillsInOnlyWithoutPython3(t *testing.T) {
	cleanEnv(t)
	ownSystemDirs(t)
	data := t.TempDir()
	t.Setenv("JUPYTER_DATA_DIR", data)
	native := &KernelSpec{Name: "python3", Dir: "/opt/ipykernel/resources", Argv: []string{"/opt/py", "-m", "ipykernel_launcher"}}
	py := Python{Native: native}

	s, _ := FindAll(py)
	if got, err := s.Get("python3"); err != nil || got != native {
		t.Fatalf("without an installed python3, Get = %v, %v; want the native spec", got, err)
	}

	placeSpec(t, "python3", filepath.Join(data, "kernels/python3"))
	s, _ = FindAll(py)
	if got, _ := s.Get("python3"); got == native {
		t.Error("an installed python3 must hide the native one")
	}
}
