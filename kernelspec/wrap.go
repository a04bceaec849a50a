package kernelspec

import (
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
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

// Wrap returns the guarded form of spec: named NAME-guarded, displayed as
// "<display name> (guarded)", launching guardctl, which starts the original
// argv as its child. Language, interrupt mode, env and metadata carry over,
// minus what the proxy cannot honour: CurveZMQ (zmq4 has no CURVE), so
// "curve" leaves metadata.supported_encryption, and the launch handshake
// that kernel_protocol_version >= 5.5 may request, so that field goes.
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
	if err := dropCurve(guarded.Metadata); err != nil {
		return nil, fmt.Errorf("kernelspec %s (%s): %w", spec.Name, spec.Dir, err)
	}
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

// dropCurve removes "curve" from metadata.supported_encryption, and the key
// once nothing is left, so Jupyter never asks for CurveZMQ.
func dropCurve(metadata map[string]json.RawMessage) error {
	raw, ok := metadata["supported_encryption"]
	if !ok {
		return nil
	}
	var value any
	if err := json.Unmarshal(raw, &value); err != nil {
		return fmt.Errorf("metadata.supported_encryption: %w", err)
	}
	isCurve := func(v any) bool {
		s, ok := v.(string)
		return ok && strings.EqualFold(strings.TrimSpace(s), "curve")
	}
	switch v := value.(type) {
	case string:
		if isCurve(v) {
			delete(metadata, "supported_encryption")
		}
	case []any:
		kept := slices.DeleteFunc(v, isCurve)
		if len(kept) == 0 {
			delete(metadata, "supported_encryption")
			return nil
		}
		encoded, err := json.Marshal(kept)
		if err != nil {
			return fmt.Errorf("metadata.supported_encryption: %w", err)
		}
		metadata["supported_encryption"] = encoded
	}
	return nil
}
