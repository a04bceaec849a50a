package kernelspec

// These tests hold this package to the real Jupyter in the venv named by
// JUPYTER_GUARD_TEST_PYTHON.

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

const jupyterPathsScript = `
import json
from jupyter_core.paths import jupyter_data_dir, jupyter_runtime_dir
from jupyter_client.kernelspec import KernelSpecManager
print(json.dumps({"data": jupyter_data_dir(), "runtime": jupyter_runtime_dir(), "kernels": KernelSpecManager().kernel_dirs}))
`

func TestPathsAgreeWithJupyter(t *testing.T) {
	py := testPython(t)
	for _, tc := range []struct {
		name string
		env  map[string]string
	}{
		{"defaults", nil},
		{"JUPYTER_PATH and JUPYTER_DATA_DIR", map[string]string{"JUPYTER_PATH": "/srv/a:/srv/b/", "JUPYTER_DATA_DIR": "/srv/data"}},
		{"XDG_DATA_HOME", map[string]string{"XDG_DATA_HOME": "/srv/xdg"}},
		{"runtime dir", map[string]string{"JUPYTER_RUNTIME_DIR": "/run/jr"}},
		{"platformdirs", map[string]string{"JUPYTER_PLATFORM_DIRS": "1", "XDG_DATA_HOME": "rel", "XDG_DATA_DIRS": "/x1:rel:/x2"}},
		{"prefer user", map[string]string{"JUPYTER_PREFER_ENV_PATH": "no"}},
		{"prefer env", map[string]string{"JUPYTER_PREFER_ENV_PATH": "1"}},
		{"IPYTHONDIR with tilde", map[string]string{"IPYTHONDIR": "~/ipy"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cleanEnv(t)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			var want struct {
				Data, Runtime string
				Kernels       []string
			}
			if err := json.Unmarshal(runPython(t, py, "-c", jupyterPathsScript), &want); err != nil {
				t.Fatal(err)
			}
			python, err := ProbePython(py)
			if err != nil {
				t.Fatal(err)
			}
			data, _ := DataDir()
			runtime, _ := RuntimeDir()
			kernels, err := KernelDirs(python)
			if err != nil {
				t.Fatal(err)
			}
			if filepath.Clean(data) != filepath.Clean(want.Data) || filepath.Clean(runtime) != filepath.Clean(want.Runtime) {
				t.Errorf("data %q runtime %q; Jupyter says %q %q", data, runtime, want.Data, want.Runtime)
			}
			for i := range want.Kernels {
				want.Kernels[i] = filepath.Clean(want.Kernels[i])
			}
			if !slices.Equal(kernels, want.Kernels) {
				t.Errorf("kernel dirs\n ours    %q\n Jupyter %q", kernels, want.Kernels)
			}
		})
	}
}

// jupyterSpec is one entry of `jupyter kernelspec list --json`.
type jupyterSpec struct {
	ResourceDir string `json:"resource_dir"`
	Spec        struct {
		Argv          []string                   `json:"argv"`
		DisplayName   string                     `json:"display_name"`
		Language      string                     `json:"language"`
		InterruptMode string                     `json:"interrupt_mode"`
		Env           map[string]string          `json:"env"`
		Metadata      map[string]json.RawMessage `json:"metadata"`
		Protocol      string                     `json:"kernel_protocol_version"`
	} `json:"spec"`
}

// jupyterSpecs asks the real Jupyter which kernelspecs it offers.
func jupyterSpecs(t *testing.T, py string) map[string]jupyterSpec {
	t.Helper()
	var listing struct {
		Kernelspecs map[string]jupyterSpec `json:"kernelspecs"`
	}
	if err := json.Unmarshal(runPython(t, py, "-m", "jupyter", "kernelspec", "list", "--json"), &listing); err != nil {
		t.Fatal(err)
	}
	return listing.Kernelspecs
}

func TestFindAgreesWithJupyter(t *testing.T) {
	py := testPython(t)
	cleanEnv(t)
	root := t.TempDir()
	t.Setenv("JUPYTER_PATH", filepath.Join(root, "a")+":"+filepath.Join(root, "b"))
	t.Setenv("JUPYTER_DATA_DIR", filepath.Join(root, "data"))
	t.Setenv("IPYTHONDIR", filepath.Join(root, "ipy"))
	placeSpec(t, "ir", filepath.Join(root, "a/kernels/echo"))
	placeSpec(t, "python3", filepath.Join(root, "b/kernels/echo"))
	placeSpec(t, "python3", filepath.Join(root, "b/kernels/Mixed"))
	placeSpec(t, "broken", filepath.Join(root, "data/kernels/broken"))
	placeSpec(t, "broken", filepath.Join(root, "data/kernels/shadow"))
	placeSpec(t, "ir", filepath.Join(root, "ipy/kernels/shadow"))
	placeSpec(t, "ir", filepath.Join(root, "data/kernels/odd name"))
	placeSpec(t, "ir", filepath.Join(root, "ipy/kernels/from-ipython"))
	if err := os.MkdirAll(filepath.Join(root, "data/kernels/no-spec-file"), 0o755); err != nil {
		t.Fatal(err)
	}

	want := jupyterSpecs(t, py)
	python, err := ProbePython(py)
	if err != nil {
		t.Fatal(err)
	}
	found, err := FindAll(python)
	if err != nil {
		t.Fatal(err)
	}
	if len(found.Specs) != len(want) {
		t.Errorf("we find %q; Jupyter lists %q", found.names(), slices.Sorted(maps.Keys(want)))
	}
	for _, spec := range found.Specs {
		j, ok := want[spec.Name]
		switch {
		case !ok:
			t.Errorf("we find %s in %s; Jupyter does not list it", spec.Name, spec.Dir)
		case j.ResourceDir != spec.Dir:
			t.Errorf("%s: we take it from %s, Jupyter from %s", spec.Name, spec.Dir, j.ResourceDir)
		case !slices.Equal(j.Spec.Argv, spec.Argv) || j.Spec.DisplayName != spec.DisplayName ||
			j.Spec.Language != spec.Language || j.Spec.InterruptMode != spec.Interrupt() || len(j.Spec.Env) != len(spec.Env):
			t.Errorf("%s: we read %+v, Jupyter %+v", spec.Name, spec, j.Spec)
		}
	}
}

const jupyterLaunchScript = `
import json, sys
from jupyter_client.manager import KernelManager
km = KernelManager(kernel_name=sys.argv[1], transport_encryption="auto")
argv, _ = km.pre_start_kernel()
with open(km.connection_file) as f:
    conn = json.load(f)
km.cleanup_resources()
print(json.dumps({"argv": argv, "connection_file": km.connection_file, "connection": conn}))
`

func TestJupyterAcceptsGuardedSpec(t *testing.T) {
	py := testPython(t)
	cleanEnv(t)
	data := t.TempDir()
	t.Setenv("JUPYTER_DATA_DIR", data)
	t.Setenv("JUPYTER_RUNTIME_DIR", t.TempDir())
	placeSpec(t, "ir", filepath.Join(data, "kernels", "ir"))
	python, err := ProbePython(py)
	if err != nil {
		t.Fatal(err)
	}
	found, err := FindAll(python)
	if err != nil {
		t.Fatal(err)
	}
	kernels, _ := UserKernelsDir()
	ours := map[string]*KernelSpec{}
	for _, name := range []string{"python3", "ir"} {
		spec, err := found.Get(name)
		if err != nil {
			t.Fatal(err)
		}
		if ours[name], err = Install(spec, guardctl, kernels, python, Naming{}); err != nil {
			t.Fatal(err)
		}
	}

	listed := jupyterSpecs(t, py)
	for _, g := range ours {
		j, ok := listed[g.Name]
		if !ok {
			t.Errorf("Jupyter does not list %s", g.Name)
			continue
		}
		if j.ResourceDir != g.Dir || !slices.Equal(j.Spec.Argv, g.Argv) || j.Spec.DisplayName != g.DisplayName {
			t.Errorf("Jupyter reads %s as %+v from %s", g.Name, j.Spec, j.ResourceDir)
		}
		var encryption []string
		_ = json.Unmarshal(j.Spec.Metadata["supported_encryption"], &encryption) // anything else differs below
		if j.Spec.Protocol != "" || !slices.Equal(encryption, []string{"curve"}) || j.Spec.Metadata[markerKey] == nil {
			t.Errorf("%s metadata %s, protocol %q", g.Name, j.Spec.Metadata, j.Spec.Protocol)
		}
	}

	// Jupyter gives the guarded kernel CurveZMQ keys when allowed to
	// (IRkernel's too, though IRkernel itself speaks no CURVE: the proxy
	// does), and puts its connection file both where guardctl reads it and
	// where the wrapped kernel expects it.
	var launch struct {
		Argv           []string
		ConnectionFile string `json:"connection_file"`
		Connection     ConnectionInfo
	}
	for _, name := range []string{"ir-guarded", "python3-guarded"} {
		if err := json.Unmarshal(runPython(t, py, "-c", jupyterLaunchScript, name), &launch); err != nil {
			t.Fatal(err)
		}
		if keys, err := launch.Connection.Curve(); keys == nil || err != nil {
			t.Errorf("%s: Jupyter gave the guarded kernel no CurveZMQ keys we can use (%v)", name, err)
		}
	}
	sep := slices.Index(launch.Argv, "--")
	if sep < 0 || launch.Argv[3] != guardctl || launch.Argv[6] != launch.ConnectionFile ||
		!slices.Equal(launch.Argv[sep+1:], []string{python.Executable, "-m", "ipykernel_launcher", "-f", launch.ConnectionFile}) {
		t.Errorf("Jupyter would run %q (connection file %s)", launch.Argv, launch.ConnectionFile)
	}
}
