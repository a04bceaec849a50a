package nbexec

import (
	"errors"
	"fmt"
	"strings"
)

// Place says which cell something happened in.
type Place struct {
	Index int    // in Notebook.Cells, from 0
	ID    string // the cell id, "" when the notebook has none
}

func (p Place) String() string {
	if p.ID == "" {
		return fmt.Sprintf("cell %d", p.Index+1)
	}
	return fmt.Sprintf("cell %d (id %s)", p.Index+1, p.ID)
}

// CellError is a cell that raised while errors were not allowed.
type CellError struct {
	Place
	Ename, Evalue string
	Traceback     []string
}

func (e *CellError) Error() string {
	return fmt.Sprintf("%s raised %s: %s", e.Place, e.Ename, e.Evalue)
}

// KernelDiedError is a kernel that died running a cell: the guard reports
// it with an error named KernelDied, whose text explains the death.
type KernelDiedError struct {
	Place
	Evalue    string
	Traceback []string
}

// Diagnosis is the guard's explanation of the death.
func (e *KernelDiedError) Diagnosis() string {
	if len(e.Traceback) > 0 {
		return strings.Join(e.Traceback, "\n")
	}
	return e.Evalue
}

func (e *KernelDiedError) Error() string {
	return fmt.Sprintf("the kernel died in %s: %s", e.Place, e.Evalue)
}

// KernelDied is the ename jupyter-guard gives a kernel's death.
const KernelDied = "KernelDied"

// ErrStopped is returned when Stop ended the run between two cells.
var ErrStopped = errors.New("stopped")

// errCellTimeout is the cause of a cell's context when its time is up.
var errCellTimeout = errors.New("cell timeout")

// TimeoutError is a cell that ran longer than the timeout.
type TimeoutError struct {
	Place
	Timeout string
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("%s did not finish within %s", e.Place, e.Timeout)
}
