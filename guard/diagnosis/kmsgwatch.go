package diagnosis

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"syscall"
)

// KernelLog is what the kernel log said about the kernel's processes.
type KernelLog struct {
	// Read is false when /dev/kmsg could not be read (most containers):
	// then the log is no evidence either way.
	Read bool `json:"read"`
	// Overwritten is set when records were lost before they were read.
	Overwritten bool          `json:"overwritten,omitempty"`
	Events      []KernelEvent `json:"events,omitempty"`
}

// KmsgWatcher reads the kernel log records that arrive after it was opened.
// Open one when the kernel starts and collect once it has died. A nil
// *KmsgWatcher is valid and collects nothing, so a watcher that could not
// be opened needs no special case in the caller.
type KmsgWatcher struct {
	fd int
}

// kmsgRecordMax holds the longest record /dev/kmsg returns; a smaller read
// buffer fails with EINVAL.
const kmsgRecordMax = 16 << 10

// NewKmsgWatcher opens the kernel log and skips what is already in it.
// The error says why the log cannot be read (EPERM without CAP_SYSLOG,
// ENOENT in many containers); callers may ignore it and use the nil watcher.
func NewKmsgWatcher() (*KmsgWatcher, error) { return openKmsgWatcher("/dev/kmsg") }

func openKmsgWatcher(path string) (*KmsgWatcher, error) {
	// Raw, non-blocking reads: an os.File would park in the poller and wait
	// for the next record instead of reporting that there is none.
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("kernel log %s: %w", path, err)
	}
	if _, err := syscall.Seek(fd, 0, io.SeekEnd); err != nil {
		syscall.Close(fd)
		return nil, fmt.Errorf("kernel log: seek to the end of %s: %w", path, err)
	}
	return &KmsgWatcher{fd: fd}, nil
}

// Collect reads the records that arrived since the watcher was opened (or
// last collected) and keeps the OOM killer's and the GPU driver's lines
// about the given pids: the kernel's process tree.
func (w *KmsgWatcher) Collect(pids []int) KernelLog {
	if w == nil {
		return KernelLog{}
	}
	records, overwritten, err := w.readNew()
	log := KernelLog{Read: err == nil, Overwritten: overwritten}
	for _, r := range records {
		text, ok := parseKmsgRecord(r)
		if !ok {
			continue
		}
		if ev, ok := parseKernelEvent(text); ok && slices.Contains(pids, ev.PID) {
			log.Events = append(log.Events, ev)
		}
	}
	return log
}

// readNew returns every record not read yet.
func (w *KmsgWatcher) readNew() (records []string, overwritten bool, err error) {
	buf := make([]byte, kmsgRecordMax)
	for {
		n, err := syscall.Read(w.fd, buf)
		switch {
		case errors.Is(err, syscall.EPIPE):
			// The ring buffer overwrote records we had not read; the next
			// read continues with the oldest one still there.
			overwritten = true
			continue
		case errors.Is(err, syscall.EAGAIN):
			return records, overwritten, nil
		case errors.Is(err, syscall.EINTR):
			continue
		case err != nil:
			return records, overwritten, fmt.Errorf("kernel log: read: %w", err)
		case n == 0:
			return records, overwritten, nil
		}
		records = append(records, string(buf[:n]))
	}
}

// Close releases the log. Closing a nil watcher does nothing.
func (w *KmsgWatcher) Close() error {
	if w == nil {
		return nil
	}
	return syscall.Close(w.fd)
}
