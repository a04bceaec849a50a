package ceiling

import (
	"bufio"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jupyter-guard/jupyter-guard/guard/proctree"
)

const mib = 1 << 20

// mapper is a process that maps memory on command, as a kernel's
// allocator does, and says whether the kernel let it:
//
//	map N      maps N MiB private and writable, untouched (as NumPy maps an array)
//	reserve N  reserves N GiB PROT_NONE (as CUDA, JAX, V8 and Go do)
//	commit N   makes the next N MiB of the reservation writable and touches them
//	fork       forks a child that sleeps; answers with its pid
//	own N      sets its own soft RLIMIT_DATA to N MiB
//	catch      catches NearSignal, answering "told" when it comes
//
// Each answers "ok" or "enomem" (and the detail).
const mapper = `
import ctypes, mmap, os, resource, signal, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
MiB = 1 << 20
held, base, committed = [], None, 0
print("ready", flush=True)
for line in sys.stdin:
    cmd, *args = line.split()
    n = int(args[0]) if args else 0
    try:
        if cmd == "map":
            held.append(mmap.mmap(-1, n * MiB, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS))
        elif cmd == "reserve":
            base = libc.mmap(None, n << 30, 0, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | 0x4000, -1, 0)  # PROT_NONE, MAP_NORESERVE
            if base in (None, ctypes.c_void_p(-1).value):
                raise OSError(ctypes.get_errno(), "mmap")
        elif cmd == "commit":
            if libc.mprotect(base + committed, n * MiB, mmap.PROT_READ | mmap.PROT_WRITE) != 0:
                raise OSError(ctypes.get_errno(), "mprotect")
            ctypes.memset(base + committed, 1, n * MiB)
            committed += n * MiB
        elif cmd == "fork":
            pid = os.fork()
            if pid == 0:
                signal.pause()
                os._exit(0)
            print("ok", pid, flush=True)
            continue
        elif cmd == "own":
            resource.setrlimit(resource.RLIMIT_DATA, (n * MiB, resource.getrlimit(resource.RLIMIT_DATA)[1]))
        elif cmd == "catch":
            signal.signal(NEAR, lambda *_: print("told", flush=True))
        print("ok", flush=True)
    except (OSError, MemoryError) as e:
        print("enomem" if getattr(e, "errno", 12) == 12 or isinstance(e, MemoryError) else "error", e, flush=True)
`

type mapperProc struct {
	cmd   *exec.Cmd
	in    io.Writer
	lines chan string
	pid   int
}

func start(t *testing.T) *mapperProc {
	t.Helper()
	cmd := exec.Command("python3", "-c", strings.ReplaceAll(mapper, "NEAR", "62"))
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its forked children go with it
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	p := &mapperProc{cmd: cmd, in: in, lines: make(chan string, 16), pid: cmd.Process.Pid}
	go func() {
		defer close(p.lines)
		for sc := bufio.NewScanner(out); sc.Scan(); {
			p.lines <- sc.Text()
		}
	}()
	p.line(t)
	return p
}

// line is the mapper's next line; it fails the test after 10 s.
func (p *mapperProc) line(t *testing.T) string {
	t.Helper()
	select {
	case l, ok := <-p.lines:
		if !ok {
			t.Fatal("the mapper ended")
		}
		return l
	case <-time.After(10 * time.Second):
		t.Fatal("the mapper said nothing for 10 s")
	}
	return ""
}

// do sends a command and returns the answer's first word.
func (p *mapperProc) do(t *testing.T, command string) string {
	t.Helper()
	if _, err := io.WriteString(p.in, command+"\n"); err != nil {
		t.Fatal(err)
	}
	return strings.Fields(p.line(t))[0]
}

// keep runs one Keep on pids as the guard does at a sample.
func keep(t *testing.T, c *Ceiling, plan Plan, pids ...int) {
	t.Helper()
	r := proctree.NewRSSReader()
	defer r.Close()
	each := make([]proctree.Usage, len(pids))
	if _, err := r.SumEach(pids, each); err != nil {
		t.Fatal(err)
	}
	if plan.At.IsZero() {
		plan.At = time.Now()
	}
	c.Keep(pids, each, plan)
}

func limit(t *testing.T, pid int) unix.Rlimit {
	t.Helper()
	var l unix.Rlimit
	if err := unix.Prlimit(pid, unix.RLIMIT_DATA, nil, &l); err != nil {
		t.Fatal(err)
	}
	return l
}

func vmData(t *testing.T, pid int) uint64 {
	t.Helper()
	st, _, err := proctree.ReadStatus(pid, nil)
	if err != nil {
		t.Fatal(err)
	}
	return st.Data
}

func newCeiling(t *testing.T) *Ceiling {
	c := New(log.New(io.Discard, "", 0))
	t.Cleanup(c.Release)
	return c
}

func TestALineRefusesWhatPassesIt(t *testing.T) {
	p := start(t)
	before := limit(t, p.pid)
	c := newCeiling(t)
	keep(t, c, Plan{Room: 128 * mib, Step: 4 * mib}, p.pid)
	got := limit(t, p.pid)
	if data := vmData(t, p.pid); got.Cur < data+128*mib || got.Cur > data+129*mib || got.Max != before.Max {
		t.Errorf("limit %+v for VmData %d + 128 MiB, hard limit %d before", got, data, before.Max)
	}
	if a := p.do(t, "map 100"); a != "ok" {
		t.Fatalf("100 MiB of 128: %s", a)
	}
	if a := p.do(t, "map 64"); a != "enomem" {
		t.Errorf("64 MiB more, past the line: %s", a)
	}
	if a := p.do(t, "map 16"); a != "ok" {
		t.Errorf("16 MiB more, below the line, after a refusal: %s", a)
	}
	// Its own growth moves its VmData and leaves the line where it is: no
	// system call for it.
	keep(t, c, Plan{Room: 12 * mib, Step: 4 * mib}, p.pid)
	if after := limit(t, p.pid); after != got {
		t.Errorf("limit %+v moved to %+v though the process only grew within it", got, after)
	}
	c.Release()
	if after := limit(t, p.pid); after != before {
		t.Errorf("after Release the limit is %+v, was %+v", after, before)
	}
}

// TestReservationsAreNotRefused: a process that reserves 64 GiB PROT_NONE
// under a line of 256 MiB starts and works; committing pieces of it counts,
// and committing more than the line allows fails with ENOMEM.
func TestReservationsAreNotRefused(t *testing.T) {
	p := start(t)
	c := newCeiling(t)
	keep(t, c, Plan{Room: 256 * mib, Step: 4 * mib}, p.pid)
	if a := p.do(t, "reserve 64"); a != "ok" {
		t.Fatalf("reserving 64 GiB PROT_NONE under a 256 MiB line: %s", a)
	}
	committed := 0
	for ; committed < 512; committed += 32 {
		if a := p.do(t, "commit 32"); a != "ok" {
			if a != "enomem" {
				t.Fatalf("commit: %s", a)
			}
			break
		}
	}
	if committed < 224 || committed >= 288 {
		t.Errorf("committed %d MiB of the reservation under a 256 MiB line", committed)
	}
}

// TestChildrenInheritAndGetTheirOwn: a child forked after its parent's
// line inherits it; once seen it gets a line of its own, and Release gives
// it what the tree had before, not its parent's line.
func TestChildrenInheritAndGetTheirOwn(t *testing.T) {
	p := start(t)
	before := limit(t, p.pid)
	c := newCeiling(t)
	keep(t, c, Plan{Room: 64 * mib, Step: 4 * mib}, p.pid)
	kid := forkedPid(t, p)
	if limit(t, kid) != limit(t, p.pid) {
		t.Fatalf("the child has %+v, its parent %+v", limit(t, kid), limit(t, p.pid))
	}
	keep(t, c, Plan{Room: 32 * mib, Step: 4 * mib}, p.pid, kid)
	if got, data := limit(t, kid), vmData(t, kid); got.Cur < data+32*mib || got.Cur > data+33*mib {
		t.Errorf("child's limit %+v for VmData %d + 32 MiB", got, data)
	}
	keep(t, c, Plan{Room: 32 * mib, Step: 4 * mib}, p.pid) // the child left the tree
	if got := limit(t, kid); got != before {
		t.Errorf("a child that left the tree has %+v, the tree had %+v", got, before)
	}
}

// forkedPid sends fork and returns the child's pid from the answer.
func forkedPid(t *testing.T, p *mapperProc) int {
	t.Helper()
	if _, err := io.WriteString(p.in, "fork\n"); err != nil {
		t.Fatal(err)
	}
	var word string
	var pid int
	if _, err := fmt.Sscan(p.line(t), &word, &pid); err != nil || word != "ok" {
		t.Fatalf("fork: %v", err)
	}
	return pid
}

// TestAnOwnLimitStands: a limit the kernel's code set itself is never
// raised.
func TestAnOwnLimitStands(t *testing.T) {
	p := start(t)
	data := vmData(t, p.pid)
	own := data/mib + 32
	if a := p.do(t, "own "+itoa(own)); a != "ok" {
		t.Fatal(a)
	}
	c := newCeiling(t)
	keep(t, c, Plan{Room: 256 * mib, Step: 4 * mib}, p.pid)
	if got := limit(t, p.pid).Cur; got != own*mib {
		t.Errorf("limit %d MiB, the process set %d MiB itself", got/mib, own)
	}
}

// TestStuckAtTheLineIsLifted: a process at its line while a cell runs is
// lifted, by Lift at a time up to MaxLift; Rearm takes the lifts back.
func TestStuckAtTheLineIsLifted(t *testing.T) {
	p := start(t)
	c := newCeiling(t)
	plan := Plan{Room: 64 * mib, Step: 2 * mib, Lift: 4 * mib, MaxLift: 8 * mib, Running: true}
	keep(t, c, plan, p.pid)
	line := limit(t, p.pid).Cur
	for p.do(t, "map 1") == "ok" {
	}
	for i, want := range []uint64{line + 4*mib, line + 8*mib, line + 8*mib} {
		plan.Room = line - min(line, vmData(t, p.pid)) // what it maps is the budget's at once, as when it is filled
		keep(t, c, plan, p.pid)
		if got := limit(t, p.pid).Cur; got != want {
			t.Errorf("after %d samples at the line: limit %d, want %d", i+1, got, want)
		}
		for p.do(t, "map 1") == "ok" {
		}
	}
	if _, l, ok := c.Bitten(); !ok || l < line {
		t.Errorf("Bitten = %d, %v", l, ok)
	}
	c.Rearm()
	plan.Running, plan.Room = false, 0
	keep(t, c, plan, p.pid)
	if got, data := limit(t, p.pid).Cur, vmData(t, p.pid); got != data {
		t.Errorf("after Rearm with no room left: limit %d, VmData %d", got, data)
	}
}

// TestStuckAtTheLineIsToldToo: a process that catches NearSignal and
// reached its line between two samples, never seen in its zone, is lifted
// and counted as having had nothing left; back at its line after the lift,
// it is told.
func TestStuckAtTheLineIsToldToo(t *testing.T) {
	p := start(t)
	if a := p.do(t, "catch"); a != "ok" {
		t.Fatal(a)
	}
	c := newCeiling(t)
	plan := Plan{Room: 64 * mib, Step: 2 * mib, Lift: 4 * mib, MaxLift: 8 * mib, Zone: 8 * mib, Signal: NearSignal, Running: true}
	keep(t, c, plan, p.pid)
	line := limit(t, p.pid).Cur
	for p.do(t, "map 1") == "ok" {
	}
	plan.Room = line - min(line, vmData(t, p.pid))
	keep(t, c, plan, p.pid)
	if got := limit(t, p.pid).Cur; got != line+4*mib {
		t.Errorf("limit %d, want lifted to %d", got, line+4*mib)
	}
	if left, ok := c.Least(); !ok || left > atLine {
		t.Errorf("Least = %d, %v; want at most %d", left, ok, atLine)
	}
	for p.do(t, "map 1") == "ok" {
	}
	keep(t, c, plan, p.pid)
	if got := p.line(t); got != "told" {
		t.Fatalf("at its line again: %q, want told", got)
	}
}

// TestHeadingForTheLineIsTold: a process that catches NearSignal and grows
// into its zone fast is told, and told again after retell if it still
// does; one that sits there is not.
func TestHeadingForTheLineIsTold(t *testing.T) {
	p := start(t)
	if a := p.do(t, "catch"); a != "ok" {
		t.Fatal(a)
	}
	c := newCeiling(t)
	top := vmData(t, p.pid) + 64*mib
	plan := Plan{Step: 2 * mib, Zone: 24 * mib, Signal: NearSignal, Running: true}
	now := time.Now()
	sample := func(after time.Duration) {
		t.Helper()
		plan.Room, plan.At = top-min(top, vmData(t, p.pid)), now.Add(after)
		keep(t, c, plan, p.pid)
	}
	sample(0)
	p.do(t, "map 16")
	sample(time.Second) // 16 MiB a second, 48 MiB left: not in the zone
	p.do(t, "map 40")
	sample(3 * time.Second) // 8 MiB left, 20 MiB/s: there within a second
	if got := p.line(t); got != "told" {
		t.Fatalf("heading into its zone: %q, want told", got)
	}
	if a := p.do(t, "map 2"); a != "ok" {
		t.Fatal(a)
	}
	sample(3*time.Second + retell/2) // still heading there, told a moment ago
	if a := p.do(t, "map 2"); a != "ok" {
		t.Fatalf("told again within retell: %q", a)
	}
	sample(3*time.Second + 2*retell) // still heading there: the signal did not end the cell
	if got := p.line(t); got != "told" {
		t.Fatalf("still heading for its line after retell: %q, want told again", got)
	}
	p.do(t, "map 1")
	sample(5 * time.Second) // 1 MiB in 1.8 s, 3 MiB left: no longer heading there
	c.Rearm()
	sample(6 * time.Second) // a new cell: it sits there, growing by nothing
	if a := p.do(t, "map 1"); a != "ok" {
		t.Errorf("after the zone, a small map: %q (was it told again?)", a)
	}
}

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }

// TestAProcessThatLeavesWhileACellRunsIsNoted: a Pool's worker may reach
// its line between two samples and end with the pool; Ended says one left
// while the cell ran, until the next cell.
func TestAProcessThatLeavesWhileACellRunsIsNoted(t *testing.T) {
	root, worker := start(t), start(t)
	c := newCeiling(t)
	plan := Plan{Room: 64 * mib, Step: 2 * mib}
	keep(t, c, plan, root.pid, worker.pid)
	keep(t, c, plan, root.pid) // it left while no cell ran
	if c.Ended() {
		t.Error("Ended after a process left between cells")
	}
	plan.Running = true
	keep(t, c, plan, root.pid, worker.pid)
	keep(t, c, plan, root.pid)
	if !c.Ended() {
		t.Error("not Ended after a process left while a cell ran")
	}
	c.Rearm()
	keep(t, c, plan, root.pid)
	if c.Ended() {
		t.Error("still Ended in the next cell")
	}
}

// startMapping starts a Python process that runs before, maps a file named
// as TensorFlow's library, runs after, says "mapped" and sleeps; it is
// killed when the test ends.
func startMapping(t *testing.T, before, after string) (*exec.Cmd, io.Writer, *bufio.Reader) {
	t.Helper()
	lib := t.TempDir() + "/libtensorflow_framework.so.2"
	if err := os.WriteFile(lib, make([]byte, 4096), 0o644); err != nil {
		t.Fatal(err)
	}
	script := "import mmap, sys, time\n" + before + "f = open(sys.argv[1], 'rb')\nm = mmap.mmap(f.fileno(), 4096, prot=mmap.PROT_READ)\n" +
		after + "print('mapped', flush=True)\ntime.sleep(60)"
	cmd := exec.Command("python3", "-c", script, lib)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, in, bufio.NewReader(out)
}

// TestALibraryThatDiesOfARefusalIsNamed: a process that maps TensorFlow's
// library (here a file of that name) is named by Aborts; Off gives its
// own limit back and holds no line again.
func TestALibraryThatDiesOfARefusalIsNamed(t *testing.T) {
	cmd, _, said := startMapping(t, "", "")
	if line, _ := said.ReadString('\n'); line != "mapped\n" {
		t.Fatalf("the process said %q", line)
	}
	before := limit(t, cmd.Process.Pid)
	c := newCeiling(t)
	plan := Plan{Room: 64 * mib, Step: 2 * mib}
	keep(t, c, plan, cmd.Process.Pid)
	if want := fmt.Sprintf("TensorFlow (pid %d)", cmd.Process.Pid); c.Aborts() != want {
		t.Errorf("Aborts = %q, want %q", c.Aborts(), want)
	}
	c.Off()
	keep(t, c, plan, cmd.Process.Pid)
	if got := limit(t, cmd.Process.Pid); got != before {
		t.Errorf("after Off, limit %+v, want its own %+v", got, before)
	}
	if _, ok := c.Least(); ok {
		t.Error("Least after Off")
	}
}

// TestALibraryMappedLaterIsNamedOnceTheProcessGrew: a process already
// held that maps TensorFlow's library in a later cell, growing by more
// than rescanStep from its lowest (as the import does), is named at the
// next Keep, though its libraries are no longer read at every cell.
func TestALibraryMappedLaterIsNamedOnceTheProcessGrew(t *testing.T) {
	cmd, in, said := startMapping(t, "print('ready', flush=True)\nsys.stdin.readline()\n", "grown = bytearray(80 << 20)\n")
	if line, _ := said.ReadString('\n'); line != "ready\n" {
		t.Fatalf("the process said %q", line)
	}
	c := newCeiling(t)
	plan := Plan{Room: 512 * mib, Step: 2 * mib}
	keep(t, c, plan, cmd.Process.Pid)
	if a := c.Aborts(); a != "" {
		t.Fatalf("Aborts = %q before the library was mapped", a)
	}
	if _, err := in.Write([]byte("go\n")); err != nil {
		t.Fatal(err)
	}
	if line, _ := said.ReadString('\n'); line != "mapped\n" {
		t.Fatalf("the process said %q", line)
	}
	keep(t, c, plan, cmd.Process.Pid)
	if want := fmt.Sprintf("TensorFlow (pid %d)", cmd.Process.Pid); c.Aborts() != want {
		t.Errorf("Aborts = %q after the process grew by 80 MiB, want %q", c.Aborts(), want)
	}
}
