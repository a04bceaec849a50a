package diagnosis

import (
	"fmt"
	"syscall"
	"time"
)

// Interrupt is the last interrupt the proxy passed to the kernel before it
// died: some kernels (xeus-python) exit on SIGINT instead of stopping the
// running cell, and their death is the interrupt's doing, not the user's
// code calling exit().
type Interrupt struct {
	At time.Time `json:"at"`
	// ByGuard: jupyter-guard's own action near the memory limit; else the
	// user's (■, Kernel > Interrupt, guardctl interrupt).
	ByGuard bool `json:"by_guard,omitzero"`
}

// InterruptWindow is how soon after an interrupt a death is put down to it.
const InterruptWindow = 10 * time.Second

// endedOnInterrupt: an exit (of any code) or SIGINT soon after an
// interrupt. Crashes, aborts and kills keep their own causes.
func (d *Diagnosis) endedOnInterrupt() bool {
	e, in := d.Evidence.Exit, d.Evidence.Interrupt
	return in != nil && (e.Signal == 0 || e.killedBy(syscall.SIGINT))
}

func (d *Diagnosis) interruptSummary() string {
	in := d.Evidence.Interrupt
	who := "the interrupt (■) sent at " + in.At.Format(time.TimeOnly)
	if in.ByGuard {
		who = "the interrupt jupyter-guard sent at " + in.At.Format(time.TimeOnly) +
			" to stop the cell before the kernel ran out of memory"
	}
	return fmt.Sprintf("The kernel %s on %s", d.Evidence.Exit.endedAs(), who)
}

func (d *Diagnosis) interruptAdvice() []string {
	kernel := "This kernel"
	if d.Evidence.Kernel != "" {
		kernel = d.Evidence.Kernel
	}
	p := []string{kernel + " ends when it is interrupted instead of stopping the running cell, " +
		"so an interrupt loses its variables."}
	if d.Evidence.Interrupt.ByGuard {
		p = append(p, "jupyter-guard interrupted it (and said so in the cell first) because the "+
			"cell was about to reach the memory limit, where the OOM killer would have killed it "+
			"anyway. Make the cell use less memory: work in smaller chunks, del what you no "+
			"longer need.")
	} else {
		p = append(p, "To stop a long cell and keep the variables, use a kernel that survives "+
			"an interrupt (ipykernel, IRkernel, bash_kernel).")
	}
	return p
}
