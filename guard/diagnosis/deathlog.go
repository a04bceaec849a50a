package diagnosis

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// DeathRecord is one line of the death log: a kernel death and its evidence.
type DeathRecord struct {
	Time     time.Time `json:"time"`
	KernelID string    `json:"kernel_id"`
	PID      int       `json:"pid"`
	Cause    Cause     `json:"cause"`
	// Summary is the Evalue shown in the cell.
	Summary    string         `json:"summary"`
	Signal     string         `json:"signal,omitempty"`
	ExitCode   int            `json:"exit_code"`
	CoreDumped bool           `json:"core_dumped,omitempty"`
	Evidence   RecordEvidence `json:"evidence"`
	// Cell is the running cell; its Code is cut to the first line.
	Cell   *Cell  `json:"cell,omitempty"`
	Memory Memory `json:"memory"`
}

// RecordEvidence is what the diagnosis rested on.
type RecordEvidence struct {
	OOMKills  OOMCounter   `json:"oom_kills"`
	KernelLog KernelLog    `json:"kernel_log"`
	Signs     []OutputSign `json:"signs,omitempty"`
	Stack     *PythonStack `json:"stack,omitempty"`
}

// Record turns the diagnosis into a death log line. Cells keep only the
// first line of their code: the log is for finding a death, not the notebook.
func (d Diagnosis) Record(at time.Time) DeathRecord {
	ev := d.Evidence
	r := DeathRecord{
		Time:       at,
		KernelID:   ev.KernelID,
		PID:        ev.PID,
		Cause:      d.Cause,
		Summary:    d.Evalue,
		ExitCode:   ev.Exit.Code,
		CoreDumped: ev.Exit.CoreDumped,
		Evidence: RecordEvidence{
			OOMKills:  ev.OOMKills,
			KernelLog: ev.KernelLog,
			Signs:     d.Signs,
			Stack:     d.Stack,
		},
		Memory: ev.Memory,
	}
	if ev.Exit.Signal != 0 {
		r.Signal = signalName(ev.Exit.Signal)
	}
	if ev.Cell != nil {
		c := *ev.Cell
		c.Code = firstLine(c.Code)
		r.Cell = &c
	}
	r.Memory.TopCells = make([]Cell, len(ev.Memory.TopCells))
	for i, c := range ev.Memory.TopCells {
		c.Code = firstLine(c.Code)
		r.Memory.TopCells[i] = c
	}
	return r
}

// DeathLog is a file of JSON lines, one per kernel death, kept in the
// user's Jupyter runtime directory.
type DeathLog struct {
	path string
}

// NewDeathLog uses the file at path; it is created on the first death.
func NewDeathLog(path string) DeathLog { return DeathLog{path: path} }

// Append adds one record. The file is created readable by its owner only:
// it quotes the user's code and output.
func (l DeathLog) Append(r DeathRecord) error {
	line, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("death log: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(l.path), 0o700); err != nil {
		return fmt.Errorf("death log: %w", err)
	}
	// Never through a symlink, nor into someone else's file: in a runtime
	// dir others can write, either would hand them the user's code.
	f, err := os.OpenFile(l.path, os.O_RDWR|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return fmt.Errorf("death log %s is a symlink: not followed, nothing written", l.path)
		}
		return fmt.Errorf("death log: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("death log: %w", err)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !fi.Mode().IsRegular() || ok && int(st.Uid) != os.Geteuid() {
		f.Close()
		return fmt.Errorf("death log %s is not a file of this user's: nothing written", l.path)
	}
	// A record cut short (a full disk) must not swallow the next: start on
	// a line of its own. One write per record, so records from several
	// proxies do not mix.
	if !endsLine(f, fi.Size()) {
		line = append([]byte{'\n'}, line...)
	}
	_, err = f.Write(append(line, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("death log %s: %w", l.path, err)
	}
	return nil
}

// endsLine says whether the file of size bytes is empty or ends a line.
func endsLine(f *os.File, size int64) bool {
	if size == 0 {
		return true
	}
	last := make([]byte, 1)
	_, err := f.ReadAt(last, size-1)
	return err != nil || last[0] == '\n'
}

// Read returns every record, oldest first; a log not created yet has none.
// Lines that do not parse (say, cut short by a full disk) are skipped and
// reported in the error, after the records that did parse.
func (l DeathLog) Read() ([]DeathRecord, error) {
	f, err := os.Open(l.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("death log: %w", err)
	}
	defer f.Close()
	var (
		records []DeathRecord
		bad     []error
	)
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20) // a record quoting a long stack can outgrow bufio's 64 KiB
	for n := 1; sc.Scan(); n++ {
		var r DeathRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			bad = append(bad, fmt.Errorf("death log %s line %d: %w", l.path, n, err))
			continue
		}
		records = append(records, r)
	}
	if err := sc.Err(); err != nil {
		bad = append(bad, fmt.Errorf("death log %s: %w", l.path, err))
	}
	return records, errors.Join(bad...)
}
