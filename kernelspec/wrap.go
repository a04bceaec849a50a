package kernelspec

import (
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
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

	display := spec.DisplayName
	if display == "" {
		display = spec.Name
	}
	guarded := &KernelSpec{
		Name:          spec.Name + GuardedSuffix,
		DisplayName:   display + " (guarded)",
		Language:      spec.Language,
		InterruptMode: spec.InterruptMode,
		Env:           maps.Clone(spec.Env),
		Metadata:      maps.Clone(spec.Metadata),
		other:         maps.Clone(spec.other),
	}
	guarded.Argv = append([]string{
		guardctl, "kernel",
		"-f", "{connection_file}",
		"--interrupt-mode", spec.Interrupt(),
		"--resource-dir", spec.Dir,
		"--",
	}, spec.Argv...)

	delete(guarded.other, "kernel_protocol_version")
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

// checkLocal refuses specs that name a provisioner other than the local
// one: those may start the kernel in a container or on another host, where
// a guardctl on this machine would watch the launcher, not the kernel.
func checkLocal(spec *KernelSpec) error {
	raw, ok := spec.Metadata["kernel_provisioner"]
	if !ok {
		return nil
	}
	var cfg map[string]json.RawMessage
	if err := json.Unmarshal(raw, &cfg); err != nil {
		return fmt.Errorf("kernelspec %s (%s): metadata.kernel_provisioner is not an object", spec.Name, spec.Dir)
	}
	rawName, ok := cfg["provisioner_name"]
	if !ok {
		return nil // Jupyter then uses its default
	}
	var name string
	if json.Unmarshal(rawName, &name) != nil || name != localProvisioner {
		return fmt.Errorf("kernelspec %s uses kernel provisioner %s; guardctl guards only kernels started by %s",
			spec.Name, rawName, localProvisioner)
	}
	return nil
}
