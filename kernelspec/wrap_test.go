package kernelspec

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

const guardctl = "/opt/jupyter-guard/bin/guardctl"

func TestWrap(t *testing.T) {
	spec := readFixture(t, "python3")
	g, err := Wrap(spec, guardctl)
	if err != nil {
		t.Fatal(err)
	}
	wantArgv := launcher("python3-guarded", []string{guardctl, "kernel",
		"-f", "{connection_file}", "--interrupt-mode", "signal", "--resource-dir", spec.Dir, "--",
		"python", "-m", "ipykernel_launcher", "-f", "{connection_file}",
	})
	if !slices.Equal(g.Argv, wantArgv) {
		t.Errorf("argv\n got %q\nwant %q", g.Argv, wantArgv)
	}
	if g.Name != "python3-guarded" || g.DisplayName != "Python 3 (ipykernel) (guarded)" || g.Language != "python" {
		t.Errorf("name %q, display name %q, language %q", g.Name, g.DisplayName, g.Language)
	}
	if g.Wraps() != "python3" {
		t.Errorf("Wraps() = %q, want python3", g.Wraps())
	}
	if _, kept := g.other["kernel_protocol_version"]; kept {
		t.Error("kernel_protocol_version kept; it may ask Jupyter for a handshake the proxy does not do")
	}
	if got := string(g.Metadata["supported_encryption"]); got != `["curve"]` {
		t.Errorf("supported_encryption = %s, want only what the proxy speaks", got)
	}
	if got := string(g.Metadata["debugger"]); got != "true" {
		t.Errorf("debugger = %s, want it kept", got)
	}
	if spec.Wraps() != "" || string(spec.Metadata["supported_encryption"]) != `["curve", "other-scheme"]` {
		t.Error("Wrap changed the spec it wrapped")
	}
}

func TestWrapKeepsInterruptModeEnvAndUnknownFields(t *testing.T) {
	spec := readFixture(t, "ir")
	g, err := Wrap(spec, guardctl)
	if err != nil {
		t.Fatal(err)
	}
	if i := slices.Index(g.Argv, "--interrupt-mode"); g.Argv[i+1] != "message" {
		t.Errorf("argv %q: want --interrupt-mode message", g.Argv)
	}
	if g.InterruptMode != "Message" || g.Env["R_LIBS_USER"] != "/opt/r-libs" {
		t.Errorf("interrupt_mode %q env %v not kept", g.InterruptMode, g.Env)
	}
	if string(g.other["future_field"]) != string(spec.other["future_field"]) {
		t.Errorf("future_field = %s, want it kept", g.other["future_field"])
	}
	if string(g.Metadata["huge"]) != "12345678901234567890" {
		t.Errorf("metadata.huge = %s, want it kept exactly", g.Metadata["huge"])
	}
}

// The proxy is the CurveZMQ server Jupyter talks to, so the guarded spec
// offers CURVE whatever its kernel declares: ipykernel 6 and IRkernel
// declare nothing, and a string is what some specs give.
func TestWrapDeclaresCurve(t *testing.T) {
	for _, declared := range []string{"", `" CURVE "`, `[]`} {
		spec := &KernelSpec{Name: "k", Argv: []string{"k"}}
		if declared != "" {
			spec.Metadata = map[string]json.RawMessage{"supported_encryption": json.RawMessage(declared)}
		}
		g, err := Wrap(spec, guardctl)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(g.Metadata["supported_encryption"]); got != `["curve"]` {
			t.Errorf("wrapping a spec declaring %q: supported_encryption = %s, want [\"curve\"]", declared, got)
		}
	}
}

func TestWrapRefuses(t *testing.T) {
	guarded, err := Wrap(readFixture(t, "python3"), guardctl)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		spec     *KernelSpec
		guardctl string
		want     string
	}{
		{"a guarded spec", guarded, guardctl, "itself the guarded form of python3"},
		{"a remote provisioner", readFixture(t, "remote"), guardctl, `provisioner "docker-provisioner"`},
		{"an empty argv", &KernelSpec{Name: "k"}, guardctl, "argv is empty"},
		{"a relative guardctl", readFixture(t, "ir"), "bin/guardctl", "not absolute"},
	} {
		if _, err := Wrap(tc.spec, tc.guardctl); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("wrapping %s: error %v, want one saying %q", tc.name, err, tc.want)
		}
	}
}

func TestWrapAllowsExplicitLocalProvisioner(t *testing.T) {
	spec := &KernelSpec{Name: "k", Argv: []string{"k"}, Metadata: map[string]json.RawMessage{
		"kernel_provisioner": json.RawMessage(`{"provisioner_name": "local-provisioner", "config": {}}`),
	}}
	if _, err := Wrap(spec, guardctl); err != nil {
		t.Error(err)
	}
}

func TestPinInterpreter(t *testing.T) {
	py := Python{Executable: "/venv/bin/python", Version: "3.11"}
	for argv0, want := range map[string]string{
		"python":     "/venv/bin/python",
		"python3":    "/venv/bin/python",
		"python3.11": "/venv/bin/python",
		"python3.10": "python3.10", // Jupyter also leaves other versions to PATH
		"R":          "R",
	} {
		if got := py.pinInterpreter([]string{argv0, "-m", "x"}); got[0] != want {
			t.Errorf("pinInterpreter(%s) = %q, want %s", argv0, got, want)
		}
	}
	if got := (Python{}).pinInterpreter([]string{"python"}); got[0] != "python" {
		t.Errorf("with no known interpreter, python became %q", got[0])
	}
}
