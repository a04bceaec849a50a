package cgroup

import (
	"fmt"
	"os"
)

// writeFile writes a value to an existing control file. Unlike os.WriteFile
// it never creates the file: a missing control file means the feature is
// absent, and that must be an error, not a new empty file.
func writeFile(file, value string) error {
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(value)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %q to %s: %w", value, file, err)
	}
	return nil
}
