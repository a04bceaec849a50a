package kernelspec

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"strings"
)

// specFile is the file that makes a directory a kernelspec.
const specFile = "kernel.json"

// KernelSpec is one kernel.json and the resource directory holding it.
// Fields this package does not model (kernel_protocol_version, anything a
// future Jupyter adds) are kept verbatim, so rewriting a spec loses nothing.
type KernelSpec struct {
	Name string // Jupyter's name for it: the directory name, lowercased
	Dir  string // the resource directory: kernel.json, logos, other files

	Argv          []string
	DisplayName   string
	Language      string
	InterruptMode string // as written, possibly ""; Interrupt gives the effective mode
	Env           map[string]string
	// Metadata is kept raw so values this package does not read survive
	// untouched, large numbers included.
	Metadata map[string]json.RawMessage

	other map[string]json.RawMessage
}

// ReadSpec reads dir/kernel.json.
func ReadSpec(dir string) (*KernelSpec, error) {
	path := filepath.Join(dir, specFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("kernelspec: %w", err)
	}
	s := &KernelSpec{Name: strings.ToLower(filepath.Base(dir)), Dir: dir}
	if err := json.Unmarshal(data, s); err != nil {
		return nil, fmt.Errorf("kernelspec %s: %w", path, err)
	}
	if mode := s.Interrupt(); mode != "signal" && mode != "message" {
		return nil, fmt.Errorf("kernelspec %s: interrupt_mode %q is neither signal nor message", path, s.InterruptMode)
	}
	return s, nil
}

// Interrupt is how Jupyter interrupts this kernel: "signal" (the default)
// or "message". Jupyter reads the field case-insensitively.
func (s *KernelSpec) Interrupt() string {
	if s.InterruptMode == "" {
		return "signal"
	}
	return strings.ToLower(s.InterruptMode)
}

// fields maps kernel.json keys to the struct fields holding them.
func (s *KernelSpec) fields() map[string]any {
	return map[string]any{
		"argv":           &s.Argv,
		"display_name":   &s.DisplayName,
		"language":       &s.Language,
		"interrupt_mode": &s.InterruptMode,
		"env":            &s.Env,
		"metadata":       &s.Metadata,
	}
}

// UnmarshalJSON decodes the modelled fields and keeps all others.
func (s *KernelSpec) UnmarshalJSON(data []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	for key, field := range s.fields() {
		if value, ok := raw[key]; ok {
			if err := json.Unmarshal(value, field); err != nil {
				return fmt.Errorf("field %q: %w", key, err)
			}
			delete(raw, key)
		}
	}
	s.other = raw
	return nil
}

// MarshalJSON writes the kept fields back with the modelled ones, leaving
// out those that are empty: a "null" env or metadata would make Jupyter
// reject the spec.
func (s KernelSpec) MarshalJSON() ([]byte, error) {
	out := maps.Clone(s.other)
	if out == nil {
		out = map[string]json.RawMessage{}
	}
	for key, field := range s.fields() {
		if reflect.ValueOf(field).Elem().IsZero() {
			continue
		}
		value, err := json.Marshal(field)
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", key, err)
		}
		out[key] = value
	}
	return json.Marshal(out)
}

// write saves the spec as dir/kernel.json, readable by everyone like the
// rest of a kernelspec.
func (s *KernelSpec) write(dir string) error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("kernelspec %s: %w", s.Name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, specFile), append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("kernelspec %s: %w", s.Name, err)
	}
	return nil
}
