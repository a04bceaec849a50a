package kernelspec

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func withProvisioner(stanza string) *KernelSpec {
	return &KernelSpec{Name: "k", Argv: []string{"k", "{connection_file}"}, Metadata: map[string]json.RawMessage{
		"kernel_provisioner": json.RawMessage(stanza),
	}}
}

func TestProvisioners(t *testing.T) {
	for stanza, want := range map[string]struct {
		guard bool
		own   string
	}{
		`{"provisioner_name": "jupyter-guard"}`:                    {guard: true},
		`{"provisioner_name": "jupyter-guard", "config": {}}`:      {guard: true},
		`{"provisioner_name": "local-provisioner", "config": {}}`:  {},
		`{"config": {"limit": "1GiB"}}`:                            {}, // no name: Jupyter's default, config ignored
		`{"provisioner_name": "docker-provisioner", "config": {}}`: {own: "docker-provisioner"},
	} {
		spec := withProvisioner(stanza)
		if spec.GuardedByProvisioner() != want.guard || spec.OwnProvisioner() != want.own {
			t.Errorf("%s: guarded by the provisioner %v, own provisioner %q; want %v, %q",
				stanza, spec.GuardedByProvisioner(), spec.OwnProvisioner(), want.guard, want.own)
		}
	}
	if _, _, err := withProvisioner(`"jupyter-guard"`).Provisioner(); err == nil {
		t.Error("a kernel_provisioner that is not an object was accepted")
	}
}

func TestGuardOptions(t *testing.T) {
	spec := withProvisioner(`{"provisioner_name": "jupyter-guard", "config": {"limit": "2GiB", "max_restarts": 3, "action": "interrupt"}}`)
	got, err := spec.GuardOptions()
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"--action=interrupt", "--limit=2GiB", "--max-restarts=3"}; !slices.Equal(got, want) {
		t.Errorf("options %q, want %q", got, want)
	}
	// Another provisioner's config is not the guard's to read.
	if got, err := withProvisioner(`{"provisioner_name": "local-provisioner", "config": {"limit": "x"}}`).GuardOptions(); err != nil || got != nil {
		t.Errorf("local provisioner's config: %q, %v", got, err)
	}
	for config, want := range map[string]string{
		`{"limt": "2GiB"}`:      `no setting "limt"; the settings are action, `,
		`{"limit": "2 bytes"}`:  "--limit=2 bytes",
		`{"limit": ["1GiB"]}`:   "give a string or a number",
		`{"action": "explode"}`: "--action=explode",
	} {
		_, err := withProvisioner(`{"provisioner_name": "jupyter-guard", "config": ` + config + `}`).GuardOptions()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("config %s: error %v, want one saying %q", config, err, want)
		}
	}
}

// A spec that asks for the provisioner, wrapped (guardctl install, guardctl
// run): its settings go into the argv, and the provisioner is dropped, so
// that only the wrapped argv starts the guard.
func TestWrapOfASpecForTheProvisioner(t *testing.T) {
	spec := withProvisioner(`{"provisioner_name": "jupyter-guard", "config": {"limit": "1GiB"}}`)
	spec.Dir = "/k"
	g, err := Wrap(spec, guardctl)
	if err != nil {
		t.Fatal(err)
	}
	want := launcher("k-guarded", LaunchArgv(guardctl, "{connection_file}", "signal", "/k", []string{"--limit=1GiB"}, spec.Argv))
	if !slices.Equal(g.Argv, want) {
		t.Errorf("argv %q, want %q", g.Argv, want)
	}
	if _, kept := g.Metadata["kernel_provisioner"]; kept {
		t.Error("the guarded spec still names the provisioner")
	}
	if !spec.GuardedByProvisioner() {
		t.Error("Wrap changed the spec it wrapped")
	}
}
