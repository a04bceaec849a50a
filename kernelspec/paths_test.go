package kernelspec

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestDataDirFollowsEnvironment(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string // "~/" stands for the test's home
	}{
		{"default", nil, "~/.local/share/jupyter"},
		{"JUPYTER_DATA_DIR wins", map[string]string{"JUPYTER_DATA_DIR": "/srv/jd", "XDG_DATA_HOME": "/srv/xdg"}, "/srv/jd"},
		{"XDG_DATA_HOME", map[string]string{"XDG_DATA_HOME": "/srv/xdg"}, "/srv/xdg/jupyter"},
		{"relative XDG_DATA_HOME is taken as is", map[string]string{"XDG_DATA_HOME": "rel"}, "rel/jupyter"},
		{"platformdirs ignores a relative XDG_DATA_HOME", map[string]string{"JUPYTER_PLATFORM_DIRS": "1", "XDG_DATA_HOME": "rel"}, "~/.local/share/jupyter"},
		{"platformdirs uses an absolute XDG_DATA_HOME", map[string]string{"JUPYTER_PLATFORM_DIRS": "yes", "XDG_DATA_HOME": "/srv/xdg"}, "/srv/xdg/jupyter"},
		{"JUPYTER_PLATFORM_DIRS=off is off", map[string]string{"JUPYTER_PLATFORM_DIRS": "off", "XDG_DATA_HOME": "rel"}, "rel/jupyter"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := cleanEnv(t)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			got, err := DataDir()
			if err != nil {
				t.Fatal(err)
			}
			want := tc.want
			if rest, ok := strings.CutPrefix(want, "~/"); ok {
				want = filepath.Join(home, rest)
			}
			if got != want {
				t.Errorf("DataDir() = %q, want %q", got, want)
			}
		})
	}
}

func TestDataDirResolvesHomeSymlinkUnlessPlatformDirs(t *testing.T) {
	real := cleanEnv(t)
	link := filepath.Join(t.TempDir(), "home-link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", link)
	if got, _ := DataDir(); got != filepath.Join(real, ".local/share/jupyter") {
		t.Errorf("DataDir() = %q, want it under the resolved home %s", got, real)
	}
	t.Setenv("JUPYTER_PLATFORM_DIRS", "1")
	if got, _ := DataDir(); got != filepath.Join(link, ".local/share/jupyter") {
		t.Errorf("with platformdirs DataDir() = %q, want it under the unresolved home %s", got, link)
	}
}

func TestRuntimeDir(t *testing.T) {
	cleanEnv(t)
	t.Setenv("JUPYTER_DATA_DIR", "/srv/jd")
	if got, _ := RuntimeDir(); got != "/srv/jd/runtime" {
		t.Errorf("RuntimeDir() = %q, want /srv/jd/runtime", got)
	}
	t.Setenv("JUPYTER_RUNTIME_DIR", "/run/jr")
	if got, _ := RuntimeDir(); got != "/run/jr" {
		t.Errorf("RuntimeDir() = %q, want /run/jr", got)
	}
}

func TestKernelDirsOrder(t *testing.T) {
	const data = "/srv/data"
	venv := t.TempDir() // owned by us, as jupyter_core requires to prefer it
	system := []string{"/usr/local/share/jupyter/kernels", "/usr/share/jupyter/kernels"}
	for _, tc := range []struct {
		name string
		env  map[string]string
		py   Python
		want []string
	}{
		{
			name: "no python: JUPYTER_PATH in order, then user, then system",
			env:  map[string]string{"JUPYTER_PATH": "/a:/b/::/c"},
			want: append([]string{"/a/kernels", "/b/kernels", "/c/kernels", data + "/kernels"}, system...),
		},
		{
			name: "system python: user before its prefix, user base added",
			py:   Python{Prefix: "/opt/py", BasePrefix: "/opt/py", UserBase: "/home/u/.local"},
			want: append([]string{data + "/kernels", "/home/u/.local/share/jupyter/kernels", "/opt/py/share/jupyter/kernels"}, system...),
		},
		{
			name: "owned venv: its prefix before user",
			py:   Python{Prefix: venv, BasePrefix: "/opt/py"},
			want: append([]string{venv + "/share/jupyter/kernels", data + "/kernels"}, system...),
		},
		{
			name: "JUPYTER_PREFER_ENV_PATH=0 puts user first even in a venv",
			env:  map[string]string{"JUPYTER_PREFER_ENV_PATH": "0"},
			py:   Python{Prefix: venv, BasePrefix: "/opt/py"},
			want: append([]string{data + "/kernels", venv + "/share/jupyter/kernels"}, system...),
		},
		{
			name: "conda env other than base is preferred",
			env:  map[string]string{"CONDA_PREFIX": venv, "CONDA_DEFAULT_ENV": "work"},
			py:   Python{Prefix: venv, BasePrefix: venv},
			want: append([]string{venv + "/share/jupyter/kernels", data + "/kernels"}, system...),
		},
		{
			name: "a prefix that is a system dir is searched once, in the system place",
			py:   Python{Prefix: "/usr/local", BasePrefix: "/usr/local"},
			want: append([]string{data + "/kernels"}, system...),
		},
		{
			name: "platformdirs takes system dirs from XDG_DATA_DIRS",
			env:  map[string]string{"JUPYTER_PLATFORM_DIRS": "1", "XDG_DATA_DIRS": "/x1:rel:/x2"},
			want: []string{data + "/kernels", "/x1/jupyter/kernels", "/x2/jupyter/kernels"},
		},
		{
			name: "IPython adds IPYTHONDIR/kernels last",
			env:  map[string]string{"IPYTHONDIR": "/srv/ipy"},
			py:   Python{HasIPython: true},
			want: append(append([]string{data + "/kernels"}, system...), "/srv/ipy/kernels"),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cleanEnv(t)
			t.Setenv("JUPYTER_DATA_DIR", data)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			got, err := KernelDirs(tc.py)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("KernelDirs()\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}
