// Command relay is the floor for bench/proxy.py: a kernel "proxy" that
// copies the bytes of each of Jupyter's five connections to the kernel's
// and back, with no ZMTP, no checks and no guard. What it costs beside the
// plain kernel is what one more process and one more hop per message
// cost on the machine; the guarded kernel's figures are read against it.
//
//	go build -o bin/relay ./bench/relay
//	bin/relay -install DIR -kernel KERNELSPEC_DIR   # DIR/<name>-relay/kernel.json
//	python bench/proxy.py --plain python3 --guarded python3-guarded --guarded python3-relay
//
// As a kernel: relay CONNECTION_FILE -- ARGV..., where ARGV is the
// kernel's own, "{relay_connection_file}" in place of its connection file.
// It forwards no signals: good for measuring, not for use.
//
// With -copier PATH (bench/crelay, built with cc) that program copies the
// bytes instead of this one's goroutines: the same relay without Go's
// runtime on the path, installed as <name>-crelay.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

const placeholder = "{relay_connection_file}"

var ports = []string{"shell_port", "iopub_port", "stdin_port", "control_port", "hb_port"}

func main() {
	install := flag.String("install", "", "write a relay kernelspec for -kernel into this directory")
	kernel := flag.String("kernel", "", "the kernelspec directory to wrap (with -install)")
	copier := flag.String("copier", "", "copy the bytes with this program (bench/crelay) instead of goroutines")
	flag.Parse()
	if *install != "" {
		if err := installSpec(*install, *kernel, *copier); err != nil {
			log.Fatal(err)
		}
		return
	}
	args := flag.Args()
	if len(args) < 3 || args[1] != "--" {
		log.Fatal("usage: relay CONNECTION_FILE -- ARGV...")
	}
	if err := relay(args[0], args[2:], *copier); err != nil {
		log.Fatal(err)
	}
}

// installSpec writes dir/<name>-relay/kernel.json, running the kernelspec
// in kernelDir behind the relay (dir/<name>-crelay with a copier).
func installSpec(dir, kernelDir, copier string) error {
	raw, err := os.ReadFile(filepath.Join(kernelDir, "kernel.json"))
	if err != nil {
		return err
	}
	var spec map[string]any
	if err := json.Unmarshal(raw, &spec); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	argv, suffix := []any{self}, "relay"
	if copier != "" {
		if copier, err = filepath.Abs(copier); err != nil {
			return err
		}
		argv, suffix = append(argv, "-copier", copier), "crelay"
	}
	argv = append(argv, "{connection_file}", "--")
	for _, a := range spec["argv"].([]any) {
		argv = append(argv, strings.ReplaceAll(a.(string), "{connection_file}", placeholder))
	}
	spec["argv"] = argv
	spec["display_name"] = fmt.Sprintf("%v (%s)", spec["display_name"], suffix)
	out := filepath.Join(dir, filepath.Base(kernelDir)+"-"+suffix)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	b, _ := json.MarshalIndent(spec, "", " ")
	return os.WriteFile(filepath.Join(out, "kernel.json"), b, 0o644)
}

// relay listens where Jupyter expects the kernel, starts the kernel on
// ports of its own, and copies each connection to one of the kernel's
// (or has copier do it).
func relay(connFile string, argv []string, copier string) error {
	raw, err := os.ReadFile(connFile)
	if err != nil {
		return err
	}
	var info map[string]any
	if err := json.Unmarshal(raw, &info); err != nil {
		return err
	}
	ip, _ := info["ip"].(string)
	child := map[string]any{}
	for k, v := range info {
		child[k] = v
	}
	copierArgs := []string{ip}
	for _, name := range ports {
		spare, err := net.Listen("tcp", ip+":0")
		if err != nil {
			return err
		}
		back := spare.Addr().String()
		child[name] = spare.Addr().(*net.TCPAddr).Port
		spare.Close()
		if copier != "" {
			copierArgs = append(copierArgs, fmt.Sprint(info[name]), fmt.Sprint(child[name]))
			continue
		}
		front, err := net.Listen("tcp", fmt.Sprintf("%s:%v", ip, info[name]))
		if err != nil {
			return err
		}
		go serve(front, back)
	}
	if copier != "" {
		c := exec.Command(copier, copierArgs...)
		c.Stderr = os.Stderr
		if err := c.Start(); err != nil {
			return err
		}
		defer c.Process.Kill()
	}
	childFile := connFile + ".relay.json"
	b, _ := json.Marshal(child)
	if err := os.WriteFile(childFile, b, 0o600); err != nil {
		return err
	}
	defer os.Remove(childFile)
	for i, a := range argv {
		argv[i] = strings.ReplaceAll(a, placeholder, childFile)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	return cmd.Run()
}

// serve copies each connection to front to a new one to back, both ways.
func serve(front net.Listener, back string) {
	for {
		c, err := front.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			k, err := dialUntilUp(back)
			if err != nil {
				return
			}
			defer k.Close()
			go io.Copy(k, c)
			io.Copy(c, k)
		}()
	}
}

// dialUntilUp dials back until the kernel listens there (it may still be
// starting) or 30 s pass.
func dialUntilUp(back string) (net.Conn, error) {
	var err error
	for range 3000 {
		var k net.Conn
		if k, err = net.Dial("tcp", back); err == nil {
			return k, nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return nil, err
}
