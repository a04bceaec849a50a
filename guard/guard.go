// Package guard keeps a Jupyter kernel from being killed for memory. The
// supervisor reports the kernel's life and its cells; the guard samples the
// kernel's memory while a cell runs and, as the cell nears the budget,
// warns in the cell, then pauses the kernel's whole process tree (or
// interrupts the cell, or only warns, as configured) before the OOM killer
// would strike.
//
// The data flows samples → ledger → decision → notice: package sampler
// measures, package ledger keeps each cell's memory story, package decide
// says what to do, package freeze pauses, package notice writes what the
// user reads.
package guard

import (
	"errors"
	"fmt"
	"io/fs"
	"log"
	"os"
	"sync/atomic"
	"time"

	"github.com/jupyter-guard/jupyter-guard/guard/ceiling"
	"github.com/jupyter-guard/jupyter-guard/guard/cgroup"
	"github.com/jupyter-guard/jupyter-guard/guard/config"
	"github.com/jupyter-guard/jupyter-guard/guard/decide"
	"github.com/jupyter-guard/jupyter-guard/guard/freeze"
	"github.com/jupyter-guard/jupyter-guard/guard/gpu"
	"github.com/jupyter-guard/jupyter-guard/guard/ledger"
	"github.com/jupyter-guard/jupyter-guard/guard/memerr"
	"github.com/jupyter-guard/jupyter-guard/guard/notice"
	"github.com/jupyter-guard/jupyter-guard/guard/proctree"
	"github.com/jupyter-guard/jupyter-guard/guard/sampler"
	"github.com/jupyter-guard/jupyter-guard/guard/units"
	"github.com/jupyter-guard/jupyter-guard/internal/owner"
)

// Notifier is how the guard speaks; the supervisor implements it. Stream
// is called on the guard's loop and must not block: the proxy's forwarding
// of a cell's idle waits for what the guard posts into that cell (see
// CellFinished). Interrupt is called on a goroutine of its own, since it
// calls back into the guard (Thaw).
type Notifier interface {
	// Stream posts text into the cell whose execute_request header is
	// parent, as a stream message named name.
	Stream(parent []byte, name, text string)
	// Interrupt interrupts the kernel as the stop button does. The guard
	// has paused the kernel first, so the cell stops growing at once: send
	// the signal, then call Guard.Thaw, as for the user's interrupt.
	Interrupt()
	// Room says whether the kernel's memory has room: measured below the
	// warning line, and not paused. Only changes are said; until the
	// first, there is none. The proxy's system calls may hold its one CPU
	// only while there is (package sysio).
	Room(ample bool)
}

// Guard watches one kernel at a time. One goroutine, its loop, owns the
// decision state below (budget, ledger, pause): the sampler's samples, the
// cells' events and the questions all reach it through the loop, in the
// order they came, so no lock guards that state. The methods the proxy
// calls while forwarding (Cell*, ExecutionCount, Paused) hand the loop
// their event and never wait for it.
type Guard struct {
	cfg    config.Config
	notify Notifier
	log    *log.Logger
	smp    *sampler.Sampler
	gpu    gpu.Meter
	frz    *freeze.Freezer
	ceil   *ceiling.Ceiling // nil when the ceiling is off
	loop   *owner.Loop

	// What the forwarding path reads without the loop, published by it.
	pausedNow atomic.Bool
	// owedAfter is when a cell that ends is owed its end measurement
	// before its idle (see CellFinished), in Unix nanoseconds; 0 before
	// the first measurement.
	owedAfter atomic.Int64

	// Owned by the loop.
	budget decide.Budget
	ledger *ledger.Ledger
	// measured is closed, and replaced, by each measurement the ledger
	// records: Cells waits on it for a finished cell's end measurement.
	measured chan struct{}
	kernel   int       // the attached kernel's pid, 0 if none
	pids     []int     // the kernel's tree at the latest measurement
	gpuNow   gpu.Usage // the latest GPU measurement
	// gpuWarned is the msg_id of the last cell warned about its GPU memory.
	gpuWarned string
	paused    string // msg_id of the cell whose pause holds the kernel, "" if none (pausedNow)
	thaws     int    // counts thaws: a pause decided before one is dropped
	ample     bool   // what Room said last
	// interruptEnds names the kernel when an interrupt ends it.
	interruptEnds string
	// refusalLoses says what an allocation refused at the ceiling costs
	// the kernel (notice.Facts), "" if it lives on with its variables.
	refusalLoses string
	// tensorPool is the limit the kernel's TensorFlow allocator was started
	// with (SetTensorPool), 0 if none.
	tensorPool uint64
	// panel: the Jupyter server that started the kernel shows the guarded
	// kernels panel (jupyter-guard's server extension said so).
	panel bool
}

type post struct {
	parent []byte
	text   string
}

// New checks cfg against the memory limit of the proxy's own cgroup (which
// the kernel inherits) and starts the guard, idle until a kernel attaches.
// Its error says which setting is wrong and what to write instead.
func New(cfg config.Config, n Notifier, logger *log.Logger) (*Guard, error) {
	if logger == nil {
		logger = log.Default()
	}
	lim, grp, err := detectLimit(os.Getpid())
	if err != nil {
		return nil, fmt.Errorf("memory guard: find the memory limit: %w", err)
	}
	b, err := decide.NewBudget(cfg, lim)
	if err != nil {
		return nil, fmt.Errorf("memory guard: %w", err)
	}
	g := &Guard{
		cfg: cfg, notify: n, log: logger, budget: b,
		ledger: ledger.New(countedOn(b.Figure), 0), measured: make(chan struct{}),
		frz: freeze.New(proctree.Descendants), loop: owner.New(),
	}
	g.gpu = gpu.Open(cfg.HostProc)
	opts := sampler.Options{Log: logger}
	if _, ok := g.gpu.(gpu.NoGPU); !ok {
		opts.GPU = func(pids []int) (uint64, error) {
			u, err := g.gpu.Usage(pids)
			g.loop.Post(func() {
				g.gpuNow = u
				g.warnGPU(u, pids)
			})
			return u.Total, err
		}
	}
	g.smp = sampler.New(opts, g.sampled)
	if cfg.Ceiling {
		g.ceil = ceiling.New(logger)
	}
	if grp != nil {
		if at, err := grp.OOMGroup(); err != nil {
			logger.Printf("memory guard: %v", err)
		} else if at != "" {
			logger.Printf("memory guard: memory.oom.group is set at %s: an OOM kill there ends every process in it, not only the kernel; stopping the cell in time is what keeps them", at)
		}
	}
	return g, nil
}

// ceilingOff takes the allocation ceiling off a kernel in which lib, a
// library that ends its process when an allocation is refused, is loaded
// (ceiling.Aborts): the ceiling would kill it before the OOM killer does.
// From then on the kernel is guarded as with JUPYTER_GUARD_CEILING=off:
// the pause (or, headless, an interrupt) is the stop, and TensorFlow's own
// allocator, held to a limit from the start (SetTensorPool), fails a step
// that outgrows it with ResourceExhaustedError. On the loop.
func (g *Guard) ceilingOff(lib string) {
	g.ceil.Off()
	g.budget.Reserve = 0
	pool := g.tensorPool
	held := ""
	if pool > 0 {
		held = fmt.Sprintf(", and TensorFlow's own allocator is held to %s", units.FormatBytes(pool))
	}
	g.log.Printf("memory guard: the allocation ceiling is off for this kernel: %s is loaded, which ends its process when an allocation is refused; the pause is the stop%s", lib, held)
}

// detectLimit finds the memory limit that applies to pid: its cgroup's, or
// the host's RAM where it has no memory cgroup.
func detectLimit(pid int) (cgroup.Limit, *cgroup.Group, error) {
	grp, err := cgroup.Discover(pid)
	if errors.Is(err, cgroup.ErrNoMemoryCgroup) {
		total, terr := cgroup.System.MemTotal()
		lim := cgroup.Limit{Bytes: total, Kind: cgroup.HostMemory}
		if sign := cgroup.System.Container(); sign != "" {
			lim.Unseen = fmt.Sprintf("in a container (%s) whose memory cgroup cannot be read: %v", sign, err)
		}
		return lim, nil, terr
	}
	if err != nil {
		return cgroup.Limit{}, nil, err
	}
	lim, err := grp.Limit()
	return lim, grp, err
}

// Attach starts guarding a (new) kernel process. Cells of an earlier kernel
// that never finished are marked lost. If the kernel sits under another
// limit than the proxy (a wrapper moved it), the budget follows it.
func (g *Guard) Attach(kernelPid int) {
	lim, grp, err := detectLimit(kernelPid)
	var b decide.Budget
	g.loop.Do(func() { // after any pause of the old kernel
		b = g.attach(kernelPid, lim, err)
	})
	g.smp.Attach(kernelPid, grp, b.Figure)
	g.arm(b)
}

func (g *Guard) attach(kernelPid int, lim cgroup.Limit, err error) decide.Budget {
	if err != nil {
		g.log.Printf("memory guard: kernel pid %d: %v; keeping %s", kernelPid, err, g.budget.Source)
	}
	g.frz.Forget()
	if err == nil && lim != g.budget.Detected {
		if b, err := decide.NewBudget(g.cfg, lim); err != nil {
			g.log.Printf("memory guard: kernel pid %d is under %s: %v; keeping %s", kernelPid, lim.Source(), err, g.budget.Source)
		} else {
			b.Unattended, b.RefusalCosts, b.InterruptEnds = g.budget.Unattended, g.budget.RefusalCosts, g.budget.InterruptEnds
			g.budget = b
			g.ledger.SetCounted(countedOn(b.Figure))
			g.log.Printf("memory guard: kernel pid %d: %v (%s), measured on %s%s", kernelPid, b.Budget, b.Source, b.Figure, b.CeilingNote())
		}
	}
	g.ledger.Lose()
	g.kernel = kernelPid
	g.setPaused("")
	g.publish()
	return g.budget
}

// arm asks for pushed wake-ups from the warning line to the limit when the
// budget is the cgroup's; rungs take a while to arm, so the guard asks as
// soon as it knows them, and again with each sample (which costs nothing).
func (g *Guard) arm(b decide.Budget) {
	if b.Figure == ledger.Cgroup {
		g.smp.Arm(decide.Rungs(b))
	}
}

// Detach stops guarding the kernel: it died or was stopped. Nothing is
// thawed; the cell it was running stays Running for the diagnosis. What
// is left of its tree gets its own limits back.
func (g *Guard) Detach() {
	g.smp.Detach()
	if g.ceil != nil {
		g.ceil.Release()
	}
	g.loop.Do(func() {
		g.frz.Forget()
		g.kernel = 0
		g.setPaused("")
	})
}

// setPaused records the cell whose pause holds the kernel ("" for none).
func (g *Guard) setPaused(id string) {
	g.paused = id
	g.pausedNow.Store(id != "")
	g.sayRoom()
}

// sayRoom tells the notifier whether the kernel's memory has room (see
// Notifier.Room), if that changed.
func (g *Guard) sayRoom() {
	last, _, ok := g.ledger.Last()
	ample := ok && g.paused == "" && last.Of(g.budget.Figure) < g.budget.Warn
	if ample != g.ample {
		g.ample = ample
		g.notify.Room(ample)
	}
}

// publish updates what the forwarding path reads of the ledger: when a
// cell that ends from now on is owed its end measurement. On the loop,
// after a measurement or a new budget.
func (g *Guard) publish() {
	if _, at, ok := g.ledger.Last(); ok {
		g.owedAfter.Store(at.Add(g.firstLook()).UnixNano())
	} else {
		g.owedAfter.Store(0)
	}
}

// Ready measures a kernel that has finished starting and waits until the
// measurement is in (at most settle), so the first cell starts from there:
// a cell queued across a restart would otherwise be charged with the
// kernel's own start-up. Call it before requests reach the new kernel.
func (g *Guard) Ready() { g.smp.Sync(settle) }

// Memory is the kernel's latest measurement, for guardctl status between
// cells; ok is false before the first.
func (g *Guard) Memory() (m ledger.Memory, at time.Time, ok bool) {
	g.loop.Do(func() { m, at, ok = g.ledger.Last() })
	return m, at, ok
}

// Fresh is the kernel's latest measurement and the processes it was taken
// on, as Memory, but when it is older than maxAge it first asks the sampler
// for a new one and waits for it at most wait: between cells the sampler
// sleeps, and the kernel may have grown or shrunk since. So it does while
// a cell that has finished waits for its end measurement (CellFinished may
// let the cell's idle go before it): the latest one predates the cell's
// end, and a client that saw the idle asks about the memory after it.
func (g *Guard) Fresh(maxAge, wait time.Duration) (m ledger.Memory, pids []int, ok bool) {
	var stale bool
	g.loop.Do(func() {
		_, at, ok := g.ledger.Last()
		stale = !ok || time.Since(at) > maxAge || g.ledger.Finishing()
	})
	if stale {
		g.smp.Sync(wait)
	}
	g.loop.Do(func() {
		m, _, ok = g.ledger.Last()
		pids = g.pids
	})
	return m, pids, ok
}

// History is the kernel's measurements of the last minutes, oldest first
// (ledger.History), for the picture of its memory.
func (g *Guard) History() (h []ledger.Point) {
	g.loop.Do(func() { h = g.ledger.History() })
	return h
}

// Actions counts the guard's actions on the kernel's cells since the proxy
// started, by kind (decide.Act's names, decide.Thawed and decide.Resumed).
func (g *Guard) Actions() (acts map[string]int) {
	g.loop.Do(func() { acts = g.ledger.Acts() })
	return acts
}

// GPU is the kernel's latest GPU measurement, for guardctl status between
// cells; ok is false where there is no GPU to measure.
func (g *Guard) GPU() (u gpu.Usage, ok bool) {
	if !g.GPUMetered() {
		return gpu.Usage{}, false
	}
	g.loop.Do(func() { u = g.gpuNow })
	return u, true
}

// GPUMetered says whether there is a GPU to measure. It does not wait for
// the loop: the proxy asks it while forwarding a cell's error.
func (g *Guard) GPUMetered() bool {
	_, none := g.gpu.(gpu.NoGPU)
	return !none
}

// warnGPU warns the running cell, once, when the kernel's processes hold
// cfg.GPUWarn of a GPU's memory, unless one of them runs a framework that
// reserves most of a GPU anyway (gpu.Preallocator): for those the line says
// nothing, and their out-of-memory errors get the note instead. It is
// called with each GPU measurement, on the loop.
func (g *Guard) warnGPU(u gpu.Usage, pids []int) {
	spec := g.cfg.GPUWarn
	if spec == (config.Spec{}) {
		return
	}
	dev, over := gpu.Over(u, spec.Of)
	if !over {
		return
	}
	c, running := g.ledger.Current()
	if !running || g.gpuWarned == c.MsgID {
		return
	}
	g.gpuWarned = c.MsgID
	header := c.Header()
	for _, pid := range pids {
		if fw, err := gpu.Preallocator("/proc", pid); fw != "" {
			g.log.Printf("memory guard: no GPU warning in cell %s: pid %d runs %s, which reserves the GPU", c.Name(), pid, fw)
			return
		} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
			g.log.Printf("memory guard: GPU warning: %v", err)
		}
	}
	g.log.Printf("memory guard: GPU warning in cell %s: %s of GPU %d", c.Name(), units.FormatBytes(dev.Used), dev.Index)
	g.notify.Stream(header, "stderr", notice.GPUWarning(notice.GPUHeld{Index: dev.Index, Name: dev.Name,
		InUse: dev.MemUsed, Total: dev.MemTotal, Kernel: dev.Used}, spec.String()))
}

// NoGPU says why no GPU memory is measured ("" where it is), and whether
// a GPU could be expected here all the same (gpu.NoGPU).
func (g *Guard) NoGPU() (reason string, expected bool) {
	none, ok := g.gpu.(gpu.NoGPU)
	return none.Reason, ok && none.Expected
}

// GPUDriver is the NVIDIA driver's versions, for a death diagnosis.
func (g *Guard) GPUDriver() gpu.Driver { return g.gpu.Driver() }

// MeasureGPU measures the kernel's GPU memory now, with every process on
// each GPU: for the note under a cell that ran out of it. It reads the
// process tree and NVML, so it is called off the forwarding path.
func (g *Guard) MeasureGPU() (gpu.Usage, error) {
	var kernel int
	g.loop.Do(func() { kernel = g.kernel })
	if kernel == 0 {
		return gpu.Usage{}, errors.New("no kernel is attached")
	}
	pids, err := proctree.Descendants(kernel)
	if err != nil {
		return gpu.Usage{}, fmt.Errorf("the kernel's processes: %w", err)
	}
	return g.gpu.Usage(pids)
}

// Refusal is what the allocation ceiling had left when a cell raised e,
// for the note under it. It takes a sample first, off the forwarding path
// (the note is written in the background). False if the ceiling is off,
// or e is not the ceiling's: what it asked for was there to take.
func (g *Guard) Refusal(e memerr.Error) (notice.Refusal, bool) {
	if e.Pool {
		return g.poolRefusal(e)
	}
	if g.ceil == nil {
		return notice.Refusal{}, false
	}
	g.smp.Sync(settle)
	left, ok := g.ceil.Least()
	if !ok {
		return notice.Refusal{}, false
	}
	ended := false
	if e.Asked > 0 && e.Asked <= left && !e.Near {
		// Every process had room for it at the samples: not the
		// ceiling's, unless one ended since, unseen at its line, or it
		// came from a worker that may have lived between two samples.
		if !g.ceil.Ended() && !e.Worker {
			return notice.Refusal{}, false
		}
		ended = true
	}
	var r notice.Refusal
	g.loop.Do(func() {
		b := g.budget
		last, _, _ := g.ledger.Last()
		r = notice.Refusal{Asked: e.Asked, Left: left, Used: last.Of(b.Figure), Budget: b.Limit, Ceiling: b.Ceiling(),
			Figure: b.Figure, Source: b.Source, Work: e.Work, Near: e.Near, Ended: ended}
	})
	return r, true
}

// poolRefusal is Refusal for TensorFlow's allocator refusing at the limit
// the guard started it with; false if the guard set none (the user's own).
func (g *Guard) poolRefusal(e memerr.Error) (r notice.Refusal, ok bool) {
	g.loop.Do(func() {
		if g.tensorPool == 0 {
			return
		}
		b := g.budget
		last, _, _ := g.ledger.Last()
		r, ok = notice.Refusal{Asked: e.Asked, Used: last.Of(b.Figure), Budget: b.Limit, Figure: b.Figure, Source: b.Source,
			Work: e.Work, Pool: g.tensorPool}, true
	})
	return r, ok
}

// TensorPool is the limit SetTensorPool gave, 0 if none.
func (g *Guard) TensorPool() (pool uint64) {
	g.loop.Do(func() { pool = g.tensorPool })
	return pool
}

// SetTensorPool tells the guard that the kernel was started with
// TensorFlow's CPU allocator held to pool bytes (decide.Budget.TensorPool).
func (g *Guard) SetTensorPool(pool uint64) { g.loop.Post(func() { g.tensorPool = pool }) }

// CeilingReached is where the allocation ceiling holds if the running
// cell took the kernel to it (a process was found at its line, or within
// the zone below it, at the latest samples, or so close that the cell's
// growth since the last sample covers what was left: V8 grows its heap in
// steps that may reach the line between two samples), for the diagnosis
// of a kernel that died there; 0 otherwise.
func (g *Guard) CeilingReached() uint64 {
	if g.ceil == nil {
		return 0
	}
	_, _, bitten := g.ceil.Bitten()
	left, ok := g.ceil.Least()
	var reached uint64
	g.loop.Do(func() {
		cell, running := g.ledger.Current()
		if !running || g.budget.Reserve == 0 {
			return
		}
		reach := g.budget.Reserve / 2
		if _, at, seen := g.ledger.Last(); seen && cell.Rate > 0 {
			reach = max(reach, uint64(cell.Rate*time.Since(at).Seconds()))
		}
		if bitten || ok && left <= reach {
			reached = g.budget.Ceiling()
		}
	})
	return reached
}

// Counted is the figure cells' growth is counted on (see countedOn).
func (g *Guard) Counted() (f ledger.Figure) {
	g.loop.Do(func() { f = countedOn(g.budget.Figure) })
	return f
}

// countedOn is the figure a cell's growth is counted on: the budget's,
// except that the machine's used memory moves with every other program, so
// under a host-RAM budget a cell is charged what the kernel's tree grew.
func countedOn(budget ledger.Figure) ledger.Figure {
	if budget == ledger.Host {
		return ledger.Tree
	}
	return budget
}

// CellRequested records an execute_request: its msg_id, raw header and code.
func (g *Guard) CellRequested(msgID string, header []byte, code string) {
	now := time.Now()
	g.loop.Post(func() { g.ledger.Request(msgID, header, code, now) })
}

// CellStarted records iopub busy for an execute_request, and starts
// sampling. The cell starts from the kernel's latest measurement (see
// ledger.Start), so its first sample waits as long as that measurement's
// headroom allows: a cell as short as most are ends unmeasured, and the
// end measurement tells what it did.
func (g *Guard) CellStarted(msgID string) {
	now := time.Now()
	g.loop.Post(func() {
		g.ledger.Start(msgID, g.kernel, now)
		g.smp.Within(g.firstLook())
	})
}

// firstLook is how long a starting cell may go unmeasured: half the time
// the fastest plausible growth takes from the latest measurement to the
// next line, as the sampler paces itself (at once if there is none). On
// the loop.
func (g *Guard) firstLook() time.Duration {
	last, _, ok := g.ledger.Last()
	if !ok {
		return 0
	}
	used := last.Of(g.budget.Figure)
	room, pending := decide.Headroom(g.budget, decide.Input{Used: used, Start: used})
	if !pending {
		return sampler.MaxWait
	}
	wait, _ := sampler.Pace(room, 0, false)
	return wait
}

// ExecutionCount records the count of execute_input for a cell.
func (g *Guard) ExecutionCount(msgID string, n int) {
	g.loop.Post(func() { g.ledger.Count(msgID, n) })
}

// CellFinished records iopub idle for an execute_request; the sampler
// takes the cell's end measurement and goes idle if no cell runs. It does
// not wait: it returns what the idle must wait for before it is forwarded
// (closed at once if nothing). If the cell ran longer since the latest
// measurement than the headroom then allowed (the look the guard owed it
// never came, as when its busy came late), that is the end measurement
// and the warning it may call for, at most settle; else what the loop is
// doing or has queued, a sample among them, which may still post into the
// cell. What is posted after the idle never shows in the cell.
func (g *Guard) CellFinished(msgID string) <-chan struct{} {
	if g.ceil != nil {
		g.ceil.Rearm() // with the end measurement
	}
	now := time.Now()
	after := g.owedAfter.Load()
	owed := after != 0 && now.UnixNano() > after
	if !owed && g.loop.Idle() {
		g.loop.Post(func() {
			g.ledger.Finish(msgID, now)
			g.smp.Kick()
		})
		return closed
	}
	done := make(chan struct{})
	g.loop.Post(func() {
		g.ledger.Finish(msgID, now)
		if !owed {
			g.smp.Kick()
			close(done) // after everything the loop had to say before
			return
		}
		go func() {
			g.smp.Sync(settle)
			g.loop.Post(func() { close(done) })
		}()
	})
	return done
}

// closed is what nothing need wait for.
var closed = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// SetInterruptEnds tells the guard that an interrupt ends the attached
// kernel instead of its cell, naming it ("xeus-python 0.19.0"); "" when it
// survives one. The notices then say so before anyone interrupts it.
func (g *Guard) SetInterruptEnds(kernel string) {
	g.loop.Post(func() {
		g.interruptEnds = kernel
		g.budget.InterruptEnds = kernel != ""
	})
}

// SetRefusalLoses tells the guard what an allocation refused at the
// ceiling costs the attached kernel ("this kernel (Deno kernel 2.9.8)
// ends when its JavaScript heap cannot grow"), "" if it lives on with its
// variables. The notices then say so before the ceiling is reached, and a
// pause nobody answers ends with an interrupt, not a resume, which would
// cost the variables.
func (g *Guard) SetRefusalLoses(text string) {
	g.loop.Post(func() {
		g.refusalLoses = text
		g.budget.RefusalCosts = text != ""
	})
}

// SetUnattended tells the guard that nobody can answer a pause
// (decide.Budget's Unattended).
func (g *Guard) SetUnattended(on bool) { g.loop.Post(func() { g.budget.Unattended = on }) }

// SetPanel tells the guard that the user's Jupyter has the guarded kernels
// panel, with Resume, Interrupt and Restart: the pause notice then names it.
func (g *Guard) SetPanel(on bool) { g.loop.Post(func() { g.panel = on }) }

// Paused tells whether the guard holds the kernel stopped.
func (g *Guard) Paused() bool { return g.pausedNow.Load() }

// Thaw continues a paused kernel. Call it for every interrupt, restart or
// shutdown: a stopped kernel acts on no signal but SIGKILL and answers no
// message. For a signal, send it first and thaw after: a stopped process
// keeps the signal pending and takes it the moment it continues, while
// thawing first lets the cell run on unchecked until the supervisor gets
// to send it, which on a busy machine is time enough to allocate hundreds
// of MiB. For an interrupt_request message, thaw first: the kernel must
// run to read it. The cell is not paused again: that could trap the
// interrupt (decide.Thawed).
//
// It waits for the loop: the kernel must be running before the caller goes
// on to signal or message it.
func (g *Guard) Thaw() { g.loop.Do(func() { g.release(decide.Thawed) }) }

// Resume is guardctl resume: the user lets the paused cell go on. It fails
// if the kernel is not paused.
func (g *Guard) Resume() error {
	var released bool
	g.loop.Do(func() { released = g.release(decide.Resumed) })
	if !released {
		return errors.New("the kernel is not paused")
	}
	return nil
}

// answerFor resumes the kernel paused for cell id, at thaws, if nobody has
// answered that pause by then: with the ceiling armed, the cell runs on to
// it, where an allocation fails instead of the kernel, rather than waiting
// for a person who may not be there. A kernel that a refused allocation
// costs its variables (refusalLoses) is interrupted instead.
func (g *Guard) answerFor(id string, thaws int, after time.Duration) {
	time.AfterFunc(after, func() {
		g.loop.Post(func() {
			if g.paused != id || g.thaws != thaws {
				return // answered
			}
			if g.refusalLoses == "" {
				g.release(decide.Unanswered)
				return
			}
			c, _ := g.ledger.Get(id)
			g.log.Printf("memory guard: nobody answered the pause in cell %s within %v: interrupting it", id, after)
			g.notify.Stream(c.Header(), "stderr", notice.UnansweredInterrupt(after))
			go g.notify.Interrupt() // it thaws the kernel (Thaw), once signalled
		})
	})
}

// release thaws the kernel and records why in the paused cell; it reports
// whether the kernel was paused. On the loop.
func (g *Guard) release(why string) bool {
	g.thaws++
	id := g.paused
	g.setPaused("")
	if !g.frz.Frozen() {
		return false
	}
	n, err := g.frz.Thaw()
	if err != nil {
		g.log.Printf("memory guard: %s: %v", why, err)
	}
	g.log.Printf("memory guard: %s: %d processes continued", why, n)
	var text string
	c, ok := g.ledger.Get(id)
	if ok {
		used := c.Last().Of(g.budget.Figure)
		a := ledger.Action{Time: time.Now(), Kind: why, Used: used}
		if why == decide.Thawed {
			a.Until = used + max(c.InFlight(), c.Fill)
		}
		g.ledger.Act(id, a)
		switch why {
		case decide.Resumed:
			text = notice.Resumed(g.facts(&c, used, c.InFlight(), decide.Decision{}))
		case decide.Unanswered:
			text = notice.Unanswered(g.facts(&c, used, c.InFlight(), decide.Decision{}), g.cfg.PauseTimeout)
		}
	}
	if text != "" {
		g.notify.Stream(c.Header(), "stderr", text)
	}
	g.smp.Kick()
	return true
}

// settle is how long Cells waits for the end measurement of a cell that
// has just finished: the kick for it takes a millisecond, so only a kernel
// gone meanwhile makes it wait this long.
const settle = 250 * time.Millisecond

// Cells is the ledger, oldest cell first, for guardctl. A client that
// asks the moment a cell ends (guardctl run does) gets the cell with its
// end measurement: without it the cell's last growth would be missing.
func (g *Guard) Cells() []ledger.Cell {
	timeout := time.NewTimer(settle)
	defer timeout.Stop()
	for {
		var cells []ledger.Cell
		var measured chan struct{}
		g.loop.Do(func() {
			if g.ledger.Finishing() {
				measured = g.measured
			} else {
				cells = g.ledger.Cells()
			}
		})
		if measured == nil {
			return cells
		}
		select {
		case <-measured:
		case <-timeout.C:
			g.loop.Do(func() { cells = g.ledger.Cells() })
			return cells
		}
	}
}

// Running is the cell the kernel runs (or ran when it died), for the
// death diagnosis.
func (g *Guard) Running() (c ledger.Cell, ok bool) {
	g.loop.Do(func() {
		if cur, running := g.ledger.Current(); running {
			c, ok = g.ledger.Get(cur.MsgID)
		}
	})
	return c, ok
}

// Grew is the finished cells of the current (or last) kernel that grew
// the most, largest first: the diagnosis's "earlier cells".
func (g *Guard) Grew(n int) (grew []ledger.Cell) {
	g.loop.Do(func() {
		kernel := g.kernel
		if c, ok := g.ledger.Current(); ok && kernel == 0 {
			kernel = c.Kernel // detached after a death: the dead kernel's cells
		}
		grew = g.ledger.Top(n, kernel)
	})
	return grew
}

// Budget is the budget in force, with what it is measured on and where its
// limit comes from.
func (g *Guard) Budget() (b decide.Budget) {
	g.loop.Do(func() { b = g.budget })
	return b
}

// Close stops sampling. A paused kernel stays paused: call Thaw first
// unless it is being killed.
func (g *Guard) Close() {
	g.smp.Close()
	if g.ceil != nil {
		g.ceil.Release()
	}
	if err := g.gpu.Close(); err != nil {
		g.log.Printf("memory guard: %v", err)
	}
	g.loop.Close()
}

// sampled is the sampler's Handler: ledger, decision, action, on the
// loop. It returns how long to wait for the next sample; 0 (idle) when no
// cell runs or the kernel is paused.
func (g *Guard) sampled(s sampler.Sample) (wait time.Duration) {
	g.loop.Do(func() { wait = g.handle(s) })
	return wait
}

func (g *Guard) handle(s sampler.Sample) time.Duration {
	p, ok := g.plan(s)
	g.publish()
	g.sayRoom()
	g.smp.Ready(g.firstLook())
	if p.keep {
		g.ceil.Keep(s.Pids, s.Each, p.ceiling)
		if lib := g.ceil.Aborts(); lib != "" {
			g.ceilingOff(lib)
		}
	}
	for _, e := range p.ended {
		g.notify.Stream(e.parent, "stderr", e.text)
	}
	if !ok || len(p.decisions) == 0 {
		return p.wait
	}
	// The action, if any, is the last decision: take it before posting
	// anything, the notices can wait a millisecond, the memory cannot. An
	// interrupt pauses first too, so the cell stops growing at once; the
	// supervisor's interrupt thaws it.
	last := p.decisions[len(p.decisions)-1]
	act := last.Act
	if act == decide.Pause || act == decide.Interrupt {
		if g.pause(s, p.cell, p.thaws) {
			p.wait = 0 // nothing to sample until it is thawed
			if t, ok := g.stoppedText(s, p.cell, last); ok {
				p.texts[len(p.texts)-1] = t
			}
		} else if act == decide.Pause {
			p.texts = p.texts[:len(p.texts)-1] // not paused: say nothing of a pause
		}
	}
	for _, t := range p.texts {
		g.notify.Stream(p.header, "stderr", t)
	}
	if act == decide.Interrupt {
		// After the notices: once interrupted, the cell ends, and what is
		// posted after its idle is lost to the notebook.
		go g.notify.Interrupt()
	}
	return p.wait
}

// plan is what one sample calls for.
type plan struct {
	wait      time.Duration
	decisions []decide.Decision // none: just wait
	texts     []string          // a notice per decision
	cell      string
	header    []byte
	thaws     int    // as the decisions were taken
	ended     []post // warnings for cells that ended past the warning line unwarned
	// keep says to bring the ceiling's lines to ceiling.
	keep    bool
	ceiling ceiling.Plan
}

// plan records a sample in the ledger, arms the pushed threshold, paces the
// sampler and decides, recording the decisions in the cell. It reports
// false when the guard has nothing to watch: no cell runs, the kernel is
// paused, or the sample is of a kernel detached meanwhile.
func (g *Guard) plan(s sampler.Sample) (plan, bool) {
	if s.Root != g.kernel || s.Tree == 0 {
		// Another kernel's sample, or this one's after it died: a live
		// kernel never has an empty tree, and a dead one's zero must not
		// become its cells' last measurement.
		return plan{}, false
	}
	mem := ledger.Memory{Tree: s.Tree, Host: s.Host, GPU: s.GPU, Unfilled: s.Unfilled}
	if s.HasCgroup {
		mem.Cgroup = s.Cgroup.WorkingSet
	}
	var ended []post
	g.pids = s.Pids
	for _, c := range g.ledger.Observe(mem, s.Time) {
		if text, ok := g.lateWarning(c); ok {
			ended = append(ended, post{c.Header(), text})
		}
	}
	close(g.measured)
	g.measured = make(chan struct{})
	cell, running := g.ledger.Current()
	base := plan{ended: ended}
	if g.ceil != nil && g.budget.Reserve > 0 {
		base.keep, base.ceiling = true, g.ceilingPlan(s, mem, cell, running && g.paused == "")
	}
	if !running || g.paused != "" {
		return base, false
	}
	b := g.budget
	used := mem.Of(b.Figure)
	// The horizon includes how long this process was lately kept from
	// running: on a busy machine the next look comes that much later.
	in := decide.Input{Used: used, Start: cell.Start.Of(b.Figure), Rate: cell.Rate, Fill: cell.Fill, Done: doneIn(cell),
		Horizon: sampler.PushLatency + s.Lag}
	room, pending := decide.Headroom(b, in)
	g.arm(b)
	// Pushed thresholds cover the next trigger if one lies between the
	// cgroup's usage and where the trigger is reached.
	covered := s.NextRung != 0 && s.NextRung <= s.Cgroup.Bytes+room
	p := base
	p.wait, p.cell, p.header, p.thaws = sampler.MaxWait, cell.MsgID, cell.Header(), g.thaws
	// Decide looks at least as far ahead as Headroom did, so it acts
	// whenever no room is left.
	if pending {
		p.wait, in.Horizon = sampler.Pace(room, cell.Fastest, covered && b.Figure == ledger.Cgroup)
		in.Horizon += s.Lag
	}
	if p.keep {
		// The ceiling's samples: a process heading into its zone is to be
		// seen there (and each process may add the whole room: where two
		// grow at once, it is the samples that share it out).
		wait := zoneLook
		if p.ceiling.Room > p.ceiling.Zone {
			wait, _ = sampler.Pace(p.ceiling.Room-p.ceiling.Zone, cell.Fastest, covered && b.Figure == ledger.Cgroup)
		}
		p.wait = min(p.wait, wait)
	}
	in.Horizon += s.Cost
	p.decisions = decide.Decide(b, in)
	for i, d := range p.decisions {
		g.ledger.Act(cell.MsgID, ledger.Action{Time: s.Time, Kind: d.Act.String(), Used: used})
		f := g.facts(cell, used, cell.InFlight(), d)
		f.Soon = i < len(p.decisions)-1
		p.texts = append(p.texts, text(d.Act, f))
		g.log.Printf("memory guard: %s in cell %s at %s (line %s, %s, growing at %s/s, filling %s of up to %s at a time)",
			d.Act, cell.Name(), units.FormatBytes(used), units.FormatBytes(d.Line), b.Figure,
			units.FormatBytes(uint64(max(0, cell.Rate))), units.FormatBytes(cell.InFlight()), units.FormatBytes(cell.Fill))
	}
	return p, true
}

// ceilingPlan is where the ceiling's lines go at measurement s (whose
// memory is mem): room past each process's VmData up to the ceiling, less
// the fill in flight of the running cell, which was mapped (and so is in
// VmData) but is not yet in the figure. Only a cell's own fills count as
// in flight: what a kernel mapped long ago and never touches (NumPy's
// first import maps some 70 MiB of OpenBLAS buffers, each thread a stack)
// is not about to be filled.
func (g *Guard) ceilingPlan(s sampler.Sample, mem ledger.Memory, cell *ledger.Cell, running bool) ceiling.Plan {
	b := g.budget
	taken := mem.Of(b.Figure)
	if running {
		taken += cell.InFlight()
	}
	r := b.Reserve
	p := ceiling.Plan{Room: b.Ceiling() - min(b.Ceiling(), taken), Step: r / 8, Lift: r / 4, MaxLift: r / 4 * 3, Running: running,
		Signal: ceiling.NearSignal, At: s.Time}
	if running && (decide.Action(b) != config.Pause || doneIn(cell).Acted > 0) {
		p.Zone = zone(b, cell.Rate, s.Lag)
	}
	return p
}

// zone is how far below its line a process heading for it is told (see
// ceiling.Plan): half the reserve, or, for a cell growing fast, twice what
// it grows while a sample may come late, so that one sample lands in the
// zone; no lower than halfway from the warning line to the ceiling. While
// a pause a person can answer is still to come, there is none: the pause
// comes first.
//
// A sample may come a whole zoneLook late, beyond the lag the sampler
// measured: on a machine whose cores are all busy, xeus-python's dict of
// tuples (270-300 MiB/s) went from 89 MiB below its line to the line
// between two samples in 3 of 18 runs, and there it died, of a thread's
// first allocation at the line (glibc's "cannot allocate memory for
// thread-local data: ABORT", or a segfault). Reaching the line is what
// the zone is for avoiding.
func zone(b decide.Budget, rate float64, lag time.Duration) uint64 {
	late := uint64(2 * max(0, rate) * (zoneLook + decide.Reaction + lag).Seconds())
	return min(max(b.Reserve/2, late), (b.Ceiling()-min(b.Ceiling(), b.Warn))/2)
}

// zoneLook is how often a cell whose processes are in their zones is
// looked at: often enough to see one heading for its line, or stuck there
// (see ceiling.Plan).
const zoneLook = 50 * time.Millisecond

// lateWarning is the warning for cell c, which its end measurement shows
// past the warning line though no sample saw it there while it ran: the
// cell was too short, or its busy came late (a C call holding the GIL
// keeps ipykernel from sending it). Past the pause line it says the guard
// could not stop the cell. It is recorded in c.
func (g *Guard) lateWarning(c *ledger.Cell) (string, bool) {
	b := g.budget
	done := doneIn(c)
	used := c.End.Of(b.Figure)
	if done.Warned || done.Acted > 0 || len(decide.Decide(b, decide.Input{Used: used, Start: c.Start.Of(b.Figure), Done: done})) == 0 {
		return "", false
	}
	g.ledger.Act(c.MsgID, ledger.Action{Time: time.Now(), Kind: decide.Warn.String(), Used: used})
	if used >= b.Pause {
		g.log.Printf("memory guard: cell %s ended at %s (%s), past the %s line at %s before any sample saw it grow there",
			c.Name(), units.FormatBytes(used), b.Figure, b.Action, units.FormatBytes(b.Pause))
		return notice.Overran(g.facts(c, used, 0, decide.Decision{Act: decide.Warn, Line: b.Pause})), true
	}
	g.log.Printf("memory guard: warn in cell %s at its end, at %s (%s)", c.Name(), units.FormatBytes(used), b.Figure)
	return notice.Warning(g.facts(c, used, c.InFlight(), decide.Decision{Act: decide.Warn, Line: b.Warn})), true
}

// text is the notice for an act.
func text(a decide.Act, f notice.Facts) string {
	switch a {
	case decide.Warn:
		return notice.Warning(f)
	case decide.Alert:
		return notice.Alert(f)
	case decide.Interrupt:
		return notice.Interrupted(f)
	}
	return notice.Paused(f)
}

// pause freezes the kernel's tree for cell id. If a thaw came after the
// decision (the user interrupted meanwhile), it records the thaw in the
// cell instead, so the interrupt is not trapped by a pause. It reports
// whether the kernel is now paused.
func (g *Guard) pause(s sampler.Sample, id string, thaws int) bool {
	thawed, gone := g.thaws != thaws, g.kernel != s.Root
	if c, ok := g.ledger.Get(id); ok && thawed && !gone {
		used := c.Last().Of(g.budget.Figure)
		g.ledger.Act(id, ledger.Action{Time: time.Now(), Kind: decide.Thawed, Used: used, Until: used + max(c.InFlight(), c.Fill)})
	}
	if thawed || gone {
		return false
	}
	start := time.Now()
	r, err := g.frz.Freeze(s.Root, s.Pids)
	took := time.Since(start)
	if err != nil {
		g.log.Printf("memory guard: pause kernel pid %d: %v", s.Root, err)
	}
	if !g.frz.Frozen() {
		return false // the kernel is gone
	}
	g.setPaused(id)
	if g.budget.Reserve > 0 && (g.refusalLoses == "" || g.interruptEnds == "") {
		// Where both a resume into the ceiling and an interrupt would end
		// the kernel (Deno on SIGINT), the pause waits for the person.
		g.answerFor(id, g.thaws, g.cfg.PauseTimeout)
	}
	g.log.Printf("memory guard: paused kernel pid %d: %d processes stopped in %v (%d scans), %v after the sample",
		s.Root, r.Stopped, took, r.Scans, time.Since(s.Time))
	return true
}

// doneIn is what the guard already did in cell c, as decide counts it.
func doneIn(c *ledger.Cell) decide.Done { return decide.Tally(c.Actions) }

// facts are a notice's numbers for cell c at used with inFlight still to
// fill, for decision d, its actions so far included.
func (g *Guard) facts(c *ledger.Cell, used, inFlight uint64, d decide.Decision) notice.Facts {
	b := g.budget
	done := doneIn(c)
	// After a warning: the pause line, where the guard will pause.
	next, _ := decide.Next(b, decide.Input{Fill: c.Fill, Done: done})
	tree := c.Last().Tree
	return notice.Facts{Used: used, Budget: b.Limit, Figure: b.Figure, Source: b.Source, Action: decide.Action(b),
		Line: d.Line, Next: next, Growth: c.Growth, Rate: c.Rate,
		Again: done.Acted > 1, Unstopped: done.Unstopped, Fill: c.Fill, Room: d.Room, InFlight: inFlight, Short: decide.Short(b, used, inFlight),
		InterruptEnds: g.interruptEnds, Panel: g.panel, Ceiling: b.Ceiling(), PauseTimeout: g.cfg.PauseTimeout, RefusalLoses: g.refusalLoses,
		Outside: used - min(used, tree), TensorPool: g.tensorPoolNow()}
}

// tensorPoolNow is the limit TensorFlow's allocator holds to where it
// stands in for the ceiling (ceilingOff), 0 while the ceiling holds or
// when the guard set none.
func (g *Guard) tensorPoolNow() uint64 {
	if g.budget.Reserve > 0 {
		return 0
	}
	return g.tensorPool
}
