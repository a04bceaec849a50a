package kernelspec

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"strings"
)

// GuardedSuffix ends the name of every guarded spec.
const GuardedSuffix = "-guarded"

// markerKey is the metadata entry naming the spec a guarded spec wraps. It
// is how guardctl recognises its own specs: they are never wrapped again,
// and only they are ever overwritten or removed.
const markerKey = "jupyter_guard"

type marker struct {
	Wraps string `json:"wraps"`
}

// localProvisioner is jupyter_client's default provisioner, which runs
// argv as a local child of Jupyter.
const localProvisioner = "local-provisioner"

// Wraps returns the name of the spec this one guards, or "" when guardctl
// did not write it.
func (s *KernelSpec) Wraps() string {
	var m marker
	raw, ok := s.Metadata[markerKey]
	if !ok || json.Unmarshal(raw, &m) != nil {
		return ""
	}
	return m.Wraps
}

// Naming overrides what Wrap derives from the wrapped spec, as ipykernel's
// installer takes --name, --display-name and --env.
type Naming struct {
	Name        string            // default: NAME-guarded
	DisplayName string            // default: "<display name> (guarded)"
	Env         map[string]string // added to the spec's own env
}

// Wrap returns the guarded form of spec: named NAME-guarded, displayed as
// "<display name> (guarded)", launching guardctl, which starts the original
// argv as its child. Language, interrupt mode, env and metadata carry over,
// but for what the proxy, now the end Jupyter talks to, decides itself:
// metadata.supported_encryption says ["curve"] whatever the wrapped
// kernel supports, since the proxy is the CurveZMQ server (its child gets
// no keys); and the launch handshake that kernel_protocol_version >= 5.5
// may request is not the proxy's, so that field goes.
//
// The guarded spec has no Dir yet; Install gives it one and copies the
// original's resource files there, so {resource_dir} in the original argv,
// which Jupyter fills with the guarded spec's directory, still finds them.
func Wrap(spec *KernelSpec, guardctl string) (*KernelSpec, error) {
	return WrapAs(spec, guardctl, Naming{})
}

// WrapAs is Wrap with the name, display name and env that n gives.
func WrapAs(spec *KernelSpec, guardctl string, n Naming) (*KernelSpec, error) {
	if w := spec.Wraps(); w != "" {
		return nil, fmt.Errorf("kernelspec %s is itself the guarded form of %s", spec.Name, w)
	}
	if len(spec.Argv) == 0 {
		return nil, fmt.Errorf("kernelspec %s (%s): argv is empty", spec.Name, spec.Dir)
	}
	if !filepath.IsAbs(guardctl) {
		return nil, fmt.Errorf("guardctl path %q is not absolute; Jupyter may start kernels from any directory", guardctl)
	}
	if err := checkLocal(spec); err != nil {
		return nil, err
	}
	options, err := spec.GuardOptions()
	if err != nil {
		return nil, err
	}

	display := spec.DisplayName
	if display == "" {
		display = spec.Name
	}
	guarded := &KernelSpec{
		Name:          guardedName(spec, n),
		DisplayName:   cmp.Or(n.DisplayName, display+" (guarded)"),
		Language:      spec.Language,
		InterruptMode: spec.InterruptMode,
		Env:           maps.Clone(spec.Env),
		Metadata:      maps.Clone(spec.Metadata),
		other:         maps.Clone(spec.other),
	}
	if len(n.Env) > 0 {
		if guarded.Env == nil {
			guarded.Env = map[string]string{}
		}
		maps.Copy(guarded.Env, n.Env)
	}
	guarded.Argv = launcher(guarded.Name, LaunchArgv(guardctl, "{connection_file}", spec.Interrupt(), spec.Dir, options, spec.Argv))

	delete(guarded.other, "kernel_protocol_version")
	// The guard is in the argv now: the provisioner the spec asked for
	// (jupyter-guard's, with its settings moved into the argv above) would
	// only pass it through.
	delete(guarded.Metadata, "kernel_provisioner")
	if guarded.Metadata == nil {
		guarded.Metadata = map[string]json.RawMessage{}
	}
	guarded.Metadata["supported_encryption"] = json.RawMessage(`["curve"]`)
	mark, err := json.Marshal(marker{Wraps: spec.Name})
	if err != nil {
		return nil, err
	}
	guarded.Metadata[markerKey] = mark
	return guarded, nil
}

// guardedName is the name of spec's guarded form.
func guardedName(spec *KernelSpec, n Naming) string {
	return cmp.Or(strings.ToLower(n.Name), spec.Name+GuardedSuffix)
}

// launcher is how a guarded spec's argv runs launch (LaunchArgv, guardctl
// first): through /bin/sh, which execs guardctl (same pid, so Jupyter's
// signals reach it) or, once guardctl is gone (pip uninstall jupyter-guard
// leaves the specs it wrote), says in one line how to remove the spec,
// where Jupyter would otherwise fail with a stack trace. The script has no
// {braces}, which Jupyter would take for its own fields. The provisioner
// launches LaunchArgv through a plain shell (Shelled): guardctl has just
// told it the argv.
func launcher(name string, launch []string) []string {
	script := `if [ -x "$0" ]; then exec "$0" "$@"; fi; ` +
		`echo "jupyter-guard: $0 is gone (jupyter-guard was uninstalled or moved), so kernel ` + name +
		` cannot start: remove it with 'jupyter kernelspec remove ` + name +
		`', or reinstall jupyter-guard and run 'guardctl install' again." >&2; exit 127`
	return shell(script, launch)
}

// checkLocal refuses specs that name a provisioner of their own
// (OwnProvisioner).
func checkLocal(spec *KernelSpec) error {
	if _, _, err := spec.Provisioner(); err != nil {
		return err
	}
	if own := spec.OwnProvisioner(); own != "" {
		return fmt.Errorf("kernelspec %s uses kernel provisioner %q; guardctl guards only kernels started on this machine by %s or %s",
			spec.Name, own, localProvisioner, ProvisionerName)
	}
	return nil
}
