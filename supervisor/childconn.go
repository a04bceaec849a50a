package supervisor

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/jupyter-guard/jupyter-guard/kernelspec"
)

// reservePort picks a free loopback port for the child and leaves it in
// TIME_WAIT, where no other bind(0) gets it for a minute but the kernel's
// own SO_REUSEADDR bind still succeeds. Binding and closing alone (as
// jupyter_client does) lets another process take the port in between.
func reservePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		return 0, err
	}
	defer c.Close()
	s, err := ln.Accept()
	if err != nil {
		return 0, err
	}
	s.Close() // the accepting side closes first, so its port is the one in TIME_WAIT
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// childConnection writes a private connection file for the next child: the
// frontend's key and signature scheme, and where the child listens. That is
// unix sockets in sockDir, the proxy's private directory, whatever transport
// Jupyter uses: a tcp port on loopback is open to every local user, who
// could subscribe to the child's iopub, and ipykernel 7 warns that it runs
// over tcp without encryption. A kernel that cannot listen on unix sockets
// (sockDir "") gets fresh loopback tcp ports.
func childConnection(front kernelspec.ConnectionInfo, path, sockDir string) (kernelspec.ConnectionInfo, error) {
	ci := kernelspec.ConnectionInfo{
		Key:             front.Key,
		SignatureScheme: front.SignatureScheme,
		KernelName:      front.KernelName,
	}
	ports := []*int{&ci.ShellPort, &ci.ControlPort, &ci.StdinPort, &ci.IOPubPort, &ci.HBPort}
	if sockDir != "" {
		// Checked again at every start: the directory is the child's only
		// protection, and a restart comes long after the first check.
		if err := openPrivDir(sockDir); err != nil {
			return ci, err
		}
		ci.Transport, ci.IP = "ipc", filepath.Join(sockDir, sockPrefix)
		for i, port := range ports {
			*port = i + 1
			// The last child's socket may still be held open by a process it
			// left behind: the proxy must find nothing there until the new
			// child binds its own.
			if err := os.Remove(sockPath(sockDir, *port)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return ci, fmt.Errorf("the kernel's socket directory: %w", err)
			}
		}
		return ci, writeConn(ci, path)
	}
	ci.Transport, ci.IP = "tcp", "127.0.0.1"
	for _, port := range ports {
		p, err := reservePort()
		if err != nil {
			return ci, fmt.Errorf("choose a port for the kernel: %w", err)
		}
		*port = p
	}
	return ci, writeConn(ci, path)
}

// writeConn writes the child's connection file, unless it already says the
// same: a restart on ipc reuses the sockets, the key and so the file, and
// needs no disk space to start.
func writeConn(ci kernelspec.ConnectionInfo, path string) error {
	data, err := ci.Encode()
	if err == nil {
		err = writeIfChanged(path, data)
	}
	if err != nil {
		return fmt.Errorf("the kernel's connection file: %w", err)
	}
	return nil
}

// tcpOnly says why the kernel argv runs cannot listen on unix sockets, or
// "" when it can. Every kernel is tried on ipc unless this table names it.
func tcpOnly(argv []string) string {
	if len(argv) > 1 && filepath.Base(argv[0]) == "deno" && argv[1] == "jupyter" {
		// deno 2.9: "invalid host '…': invalid char found in FQDN".
		return "Deno's kernel (deno jupyter) listens with Deno.listen, which takes only a tcp host"
	}
	return ""
}

// childArgv substitutes the kernelspec placeholders as jupyter_client does.
// When Jupyter launched the proxy it has already put its own connection
// file into the wrapped argv; that path is swapped for the child's.
func childArgv(argv []string, frontConnFile, childConnFile, resourceDir string) []string {
	prefix := ""
	if len(argv) > 0 && filepath.IsAbs(argv[0]) {
		prefix = filepath.Dir(filepath.Dir(argv[0])) // the sys.prefix of bin/python
	}
	r := strings.NewReplacer(
		"{connection_file}", childConnFile,
		"{resource_dir}", resourceDir,
		"{prefix}", prefix,
	)
	out := make([]string, len(argv))
	for i, a := range argv {
		if frontConnFile != "" {
			a = strings.ReplaceAll(a, frontConnFile, childConnFile)
		}
		out[i] = r.Replace(a)
	}
	return out
}

// childEnv is the proxy's environment (Jupyter set the spec's env on it)
// plus extra, with JPY_PARENT_PID naming the proxy so ipykernel exits if
// the proxy goes, and Python's faulthandler on so a crash leaves the
// Python stack in the output the proxy keeps.
func childEnv(extra []string) []string {
	env := append(os.Environ(), extra...)
	env = append(env, "JPY_PARENT_PID="+strconv.Itoa(os.Getpid()))
	if _, set := os.LookupEnv("PYTHONFAULTHANDLER"); !set {
		env = append(env, "PYTHONFAULTHANDLER=1")
	}
	return env
}
