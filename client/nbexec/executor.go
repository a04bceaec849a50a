package nbexec

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jupyter-guard/jupyter-guard/client"
	"github.com/jupyter-guard/jupyter-guard/notebook"
	"github.com/jupyter-guard/jupyter-guard/proxy/wire"
)

// Executor runs the code cells of one notebook on one kernel.
type Executor struct {
	Client   *client.Client
	Notebook *notebook.Notebook
	// Timeout bounds each cell; 0 is no limit.
	Timeout time.Duration
	// AllowErrors keeps going after a cell raises, as nbclient's
	// allow_errors; a cell tagged raises-exception may raise regardless.
	AllowErrors bool
	// OnStart and OnDone, if set, are called before and after each cell
	// that runs.
	OnStart func(Place)
	OnDone  func(Result)

	stop atomic.Bool
}

// Result is one cell that ran.
type Result struct {
	Place
	Cell     *notebook.Cell
	Reply    *client.Reply // nil when the cell did not finish
	Duration time.Duration
}

// Stop makes Run return ErrStopped before the next cell.
func (e *Executor) Stop() { e.stop.Store(true) }

// Run executes the notebook's code cells in order, recording outputs in
// the notebook as it goes, and returns what ran. The error is a
// *CellError, *KernelDiedError or *TimeoutError naming the cell where the
// run stopped, ErrStopped, or why the kernel could not be reached.
func (e *Executor) Run(ctx context.Context) ([]Result, error) {
	info, err := e.Client.KernelInfo(ctx)
	if err != nil {
		return nil, err
	}
	if len(info.LanguageInfo) == 0 {
		return nil, errors.New("the kernel's kernel_info_reply has no language_info")
	}
	if err := e.Notebook.SetMetadata("language_info", info.LanguageInfo); err != nil {
		return nil, err
	}
	collector := notebook.NewCollector()
	var results []Result
	executed := 0
	for i, cell := range e.Notebook.Cells {
		if cell.Type != notebook.Code || strings.TrimSpace(cell.Source) == "" {
			continue
		}
		if e.stop.Load() {
			return results, ErrStopped
		}
		executed++
		r, err := e.runCell(ctx, Place{Index: i, ID: cell.ID}, cell, collector, executed)
		results = append(results, r)
		if e.OnDone != nil {
			e.OnDone(r)
		}
		if err != nil {
			return results, err
		}
	}
	return results, nil
}

// runCell executes one cell as nbclient's execute_cell does; n is how many
// code cells have run, this one included: nbclient's execution count.
func (e *Executor) runCell(ctx context.Context, at Place, cell *notebook.Cell, collector *notebook.Collector, n int) (Result, error) {
	if e.OnStart != nil {
		e.OnStart(at)
	}
	timing := map[string]any{}
	if cell.Metadata == nil {
		cell.Metadata = map[string]any{}
	}
	cell.Metadata["execution"] = timing
	allowErrors := e.AllowErrors || hasTag(cell, "raises-exception")
	collector.Begin(cell)

	var outputErr error
	var died *KernelDiedError
	onIOPub := func(m *client.Message) {
		switch m.Header.Kind {
		case wire.Status:
			if state := executionState(m); state == "busy" || state == "idle" {
				timing["iopub.status."+state] = timestamp(m.Header.Date)
			}
		case wire.ExecuteInput:
			timing["iopub.execute_input"] = timestamp(m.Header.Date)
		}
		if err := collector.Add(m.Header.MsgType, m.Content); err != nil && outputErr == nil {
			outputErr = err
		}
		if d := kernelDied(at, m); d != nil && died == nil {
			died = d
		}
	}

	cellCtx, cancel := ctx, context.CancelFunc(func() {})
	if e.Timeout > 0 {
		cellCtx, cancel = context.WithTimeoutCause(ctx, e.Timeout, errCellTimeout)
	}
	defer cancel()
	start := time.Now()
	reply, err := e.Client.Execute(cellCtx, cell.Source, client.ExecuteOptions{ContinueOnError: allowErrors}, onIOPub)
	r := Result{Place: at, Cell: cell, Reply: reply, Duration: time.Since(start)}
	switch {
	case errors.Is(err, errCellTimeout):
		return r, &TimeoutError{Place: at, Timeout: e.Timeout.String()}
	case err != nil:
		return r, fmt.Errorf("%s: %w", at, err)
	case outputErr != nil:
		return r, fmt.Errorf("%s: recording its output: %w", at, outputErr)
	}
	timing["shell.execute_reply"] = timestamp(reply.Header.Date)
	cell.ExecutionCount = &n

	switch {
	case died != nil:
		return r, died
	case reply.Ename == KernelDied:
		return r, &KernelDiedError{Place: at, Evalue: reply.Evalue, Traceback: reply.Traceback}
	case reply.Status == "error" && !allowErrors:
		return r, &CellError{Place: at, Ename: reply.Ename, Evalue: reply.Evalue, Traceback: reply.Traceback}
	}
	return r, nil
}

// kernelDied reads the guard's KernelDied error output, if m is one.
func kernelDied(at Place, m *client.Message) *KernelDiedError {
	if m.Header.Kind != wire.Error {
		return nil
	}
	var c struct {
		Ename     string   `json:"ename"`
		Evalue    string   `json:"evalue"`
		Traceback []string `json:"traceback"`
	}
	if err := json.Unmarshal(m.Content, &c); err != nil || c.Ename != KernelDied {
		return nil
	}
	return &KernelDiedError{Place: at, Evalue: c.Evalue, Traceback: c.Traceback}
}

// hasTag says whether the cell's metadata.tags holds tag.
func hasTag(cell *notebook.Cell, tag string) bool {
	tags, _ := cell.Metadata["tags"].([]any)
	return slices.Contains(tags, any(tag))
}
