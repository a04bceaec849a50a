package supervisor

import (
	"fmt"
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
// frontend's key and signature scheme, fresh loopback tcp ports.
func childConnection(front kernelspec.ConnectionInfo, path string) (kernelspec.ConnectionInfo, error) {
	ci := kernelspec.ConnectionInfo{
		Transport:       "tcp",
		IP:              "127.0.0.1",
		Key:             front.Key,
		SignatureScheme: front.SignatureScheme,
		KernelName:      front.KernelName,
	}
	for _, port := range []*int{&ci.ShellPort, &ci.ControlPort, &ci.StdinPort, &ci.IOPubPort, &ci.HBPort} {
		p, err := reservePort()
		if err != nil {
			return ci, fmt.Errorf("choose a port for the kernel: %w", err)
		}
		*port = p
	}
	return ci, ci.Write(path)
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
