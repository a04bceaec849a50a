package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/jupyter-guard/jupyter-guard/kernelspec"
)

func launch(t *testing.T, spec string, headless bool, env map[string]string) (launchReply, error) {
	t.Helper()
	req := launchRequest{
		KernelName: "python3", Kernelspec: json.RawMessage(spec), ResourceDir: "/k/python3",
		ConnectionFile: "/run/kernel-1.json", Argv: []string{"/venv/bin/python", "-m", "ipykernel_launcher", "-f", "/run/kernel-1.json"},
		Headless: headless,
	}
	return guardedLaunch(req, func(k string) string { return env[k] })
}

// The provisioner's argv is the wrapped spec's, with the real connection
// file: one definition (kernelspec.LaunchArgv) for both.
func TestKernelArgvIsTheWrappedSpecs(t *testing.T) {
	spec := `{"argv": ["python", "-m", "ipykernel_launcher", "-f", "{connection_file}"], "display_name": "Python 3", "language": "python", "interrupt_mode": "message"}`
	got, err := launch(t, spec, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	self, _ := selfPath()
	var ks kernelspec.KernelSpec
	if err := json.Unmarshal([]byte(spec), &ks); err != nil {
		t.Fatal(err)
	}
	ks.Name, ks.Dir = "python3", "/k/python3"
	wrapped, err := kernelspec.Wrap(&ks, self)
	if err != nil {
		t.Fatal(err)
	}
	// The wrapped spec's guardctl command (after its /bin/sh fallback) with
	// the file Jupyter fills {connection_file} with, and the kernel's argv
	// as Jupyter formatted it; and what the provisioner knows beside: a
	// person is there (TestKernelArgvHeadless).
	want := slices.Clone(wrapped.Argv[slices.Index(wrapped.Argv, self) : slices.Index(wrapped.Argv, "--")+1])
	want[slices.Index(want, "{connection_file}")] = "/run/kernel-1.json"
	want = slices.Insert(want, len(want)-1, "--headless=off")
	want = append(want, "/venv/bin/python", "-m", "ipykernel_launcher", "-f", "/run/kernel-1.json")
	if !slices.Equal(got.Argv[3:], want) || got.Argv[0] != "/bin/sh" {
		t.Errorf("argv\n got %q\nwant /bin/sh -c SCRIPT %q", got.Argv, want)
	}
}

func TestKernelArgvHeadless(t *testing.T) {
	plain := `{"argv": ["k"]}`
	for _, tc := range []struct {
		name string
		spec string
		env  map[string]string
		want []string // the options between --resource-dir DIR and --
	}{
		{"nobody there", plain, nil, []string{"--headless=on"}},
		{"the environment chose", plain, map[string]string{"JUPYTER_GUARD_HEADLESS": "off"}, nil},
		{"the kernelspec chose", `{"argv": ["k"], "metadata": {"kernel_provisioner": {"provisioner_name": "jupyter-guard", "config": {"headless": "off"}}}}`,
			nil, []string{"--headless=off"}},
		{"an action leaves it be", `{"argv": ["k"], "metadata": {"kernel_provisioner": {"provisioner_name": "jupyter-guard", "config": {"action": "warn"}}}}`,
			nil, []string{"--action=warn", "--headless=on"}},
	} {
		got, err := launch(t, tc.spec, true, tc.env)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		opts := got.Argv[slices.Index(got.Argv, "--resource-dir")+2 : slices.Index(got.Argv, "--")]
		if !slices.Equal(opts, tc.want) {
			t.Errorf("%s: options %q, want %q", tc.name, opts, tc.want)
		}
	}
	// A Jupyter server's or jupyter console's: a person can answer.
	got, err := launch(t, plain, false, nil)
	if err != nil || !slices.Equal(got.Argv[slices.Index(got.Argv, "--resource-dir")+2:slices.Index(got.Argv, "--")], []string{"--headless=off"}) {
		t.Errorf("a Jupyter server's kernel got options: %q, %v", got.Argv, err)
	}
}

func TestKernelArgvPassesAWrappedSpecThrough(t *testing.T) {
	spec := `{"argv": ["/bin/guardctl", "kernel", "-f", "{connection_file}", "--", "k"], "metadata": {"jupyter_guard": {"wraps": "k"}}}`
	got, err := launch(t, spec, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Argv, []string{"/venv/bin/python", "-m", "ipykernel_launcher", "-f", "/run/kernel-1.json"}) || !strings.Contains(got.Note, "guarded form of k") {
		t.Errorf("a wrapped spec was wrapped again: %q (%s)", got.Argv, got.Note)
	}
}

func TestKernelArgvRefuses(t *testing.T) {
	for _, tc := range []struct {
		spec string
		env  map[string]string
		want string
	}{
		{`{"argv": ["k"]}`, map[string]string{"JUPYTER_GUARD_LIMIT": "lots"}, "not starting kernel python3: JUPYTER_GUARD_LIMIT=lots"},
		{`{"argv": ["k"], "interrupt_mode": "carrier-pigeon"}`, nil, `interrupt_mode "carrier-pigeon"`},
		{`{"argv": ["k"], "metadata": {"kernel_provisioner": {"provisioner_name": "jupyter-guard", "config": {"limt": 1}}}}`, nil, `no setting "limt"`},
		{`[]`, nil, "kernelspec python3"},
	} {
		if _, err := launch(t, tc.spec, false, tc.env); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s with %v: error %v, want one saying %q", tc.spec, tc.env, err, tc.want)
		}
	}
}

func TestGuardState(t *testing.T) {
	spec := func(meta string) *kernelspec.KernelSpec {
		s := &kernelspec.KernelSpec{Name: "k"}
		if meta != "" {
			s.Metadata = map[string]json.RawMessage{"kernel_provisioner": json.RawMessage(meta)}
		}
		return s
	}
	local := `{"provisioner_name": "local-provisioner"}`
	ours := `{"provisioner_name": "jupyter-guard"}`
	remote := `{"provisioner_name": "k8s-provisioner"}`
	for _, tc := range []struct {
		meta      string
		byDefault bool
		want      string
	}{
		{"", false, "no"},
		{"", true, "yes, by the default provisioner"},
		{local, true, "no"}, // it names the local provisioner: the default does not apply
		{ours, false, "yes, by its provisioner"},
		{remote, true, "no: provisioner k8s-provisioner"},
	} {
		if got := guardState(kernelspec.Search{}, spec(tc.meta), tc.byDefault); got != tc.want {
			t.Errorf("%s (default %v): %q, want %q", tc.meta, tc.byDefault, got, tc.want)
		}
	}
}

func TestAllConfigFile(t *testing.T) {
	py := kernelspec.Python{Prefix: "/envs/lab"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--all"}, "/envs/lab/etc/jupyter/jupyter_config.json"},
		{[]string{"--all", "--sys-prefix"}, "/envs/lab/etc/jupyter/jupyter_config.json"},
		{[]string{"--all", "--prefix", "/opt/conda"}, "/opt/conda/etc/jupyter/jupyter_config.json"},
	} {
		f := newSpecFlags("install", "", "", 0, true)
		if _, err := f.parse(tc.args); err != nil {
			t.Fatal(err)
		}
		if got, err := allConfigFile(f, py); err != nil || got != tc.want {
			t.Errorf("%q: %q, %v; want %s", tc.args, got, err, tc.want)
		}
	}
	for args, want := range map[string]string{
		"--all --user":           "JUPYTER_DEFAULT_PROVISIONER_NAME=jupyter-guard",
		"--all --kernel python3": "give no --kernel",
	} {
		f := newSpecFlags("install", "", "", 0, true)
		if _, err := f.parse(strings.Fields(args)); err != nil {
			t.Fatal(err)
		}
		if _, err := allConfigFile(f, py); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one saying %q", args, err, want)
		}
	}
	if _, err := allConfigFile(newSpecFlags("install", "", "", 0, true), kernelspec.Python{}); err == nil {
		t.Error("no environment and no --prefix: no error")
	}
}
