package supervisor

import (
	"bytes"
	"io/fs"
	"log"
	"os"
	"path/filepath"
)

// writeIfChanged writes data to path in the proxy's private directory
// (through a temporary file, so a reader never sees half of it), unless the
// file already holds exactly that.
func writeIfChanged(path string, data []byte) error {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return nil
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}

// checkRuntimeDir says, once, when Jupyter's runtime dir is open to others:
// the proxy keeps the kernel's own files in its private directory, but the
// control socket and the death log are there, and Jupyter's connection
// files (with the key) too.
func checkRuntimeDir(dir string, logger *log.Logger) {
	fi, err := os.Stat(dir)
	if err != nil {
		return
	}
	switch st := fi.Mode(); {
	case st.Perm()&0o022 != 0 && st&fs.ModeSticky == 0:
		logger.Printf("the runtime dir %s has mode %04o: others can replace the files in it; give it mode 0700 (JUPYTER_RUNTIME_DIR)", dir, st.Perm())
	case st.Perm()&0o077 != 0:
		logger.Printf("the runtime dir %s has mode %04o: others can read what is in it; give it mode 0700 (JUPYTER_RUNTIME_DIR)", dir, st.Perm())
	}
}

// noteStrayFiles says, one line each, that files at the names older
// versions of jupyter-guard gave the kernel's files in the runtime dir are
// left alone: a proxy killed before it could remove them left them, or
// someone planted them there for this kernel (a .tmp file to receive the
// key, a directory to put code on the kernel's PYTHONPATH).
func noteStrayFiles(runtimeDir, kernelID string, logger *log.Logger) {
	for _, name := range []string{"guard-child-" + kernelID + ".json", "guard-child-" + kernelID + ".json.tmp", "guard-py-" + kernelID} {
		path := filepath.Join(runtimeDir, name)
		if _, err := os.Lstat(path); err == nil {
			logger.Printf("left alone: %s, where older versions kept the kernel's files; they are in the proxy's private directory now (remove it if an older proxy is gone)", path)
		}
	}
}
