package diagnosis

import (
	"regexp"
	"strconv"
	"strings"
)

// Frame is one line of a Python stack.
type Frame struct {
	File string `json:"file"`
	Line int    `json:"line"`
	Func string `json:"func"`
}

// PythonStack is the dump Python's faulthandler (or Py_FatalError)
// writes to stderr when the interpreter dies.
type PythonStack struct {
	// Header is the line that starts the dump, e.g.
	// "Fatal Python error: Segmentation fault".
	Header string `json:"header"`
	// Frames are the crashing thread's, most recent call first.
	Frames []Frame `json:"frames"`
}

var (
	// The crashing thread's block: "Current thread 0x…" with all_threads,
	// "Stack" without.
	crashingThreadRe = regexp.MustCompile(`^(?:Current thread 0x[0-9a-f]+|Stack) \(most recent call first\):$`)
	faultFrameRe     = regexp.MustCompile(`^  File "(.*)", line (\d+|\?\?\?) in (.*)$`)
	// Cell files: ipykernel compiles a cell as /tmp/ipykernel_PID/HASH.py,
	// terminal IPython as <ipython-input-N-HASH>. ("Cell In[N], line L" is
	// only how IPython prints them in its own tracebacks.)
	ipykernelCellRe = regexp.MustCompile(`/ipykernel_\d+/\d+\.py$`)
	ipythonCellRe   = regexp.MustCompile(`^<ipython-input-(\d+)-[0-9a-f]+>$`)
	// A library's files: an installed package, or the standard library.
	sitePackagesRe = regexp.MustCompile(`/(?:site|dist)-packages/([^/]+)`)
	stdlibRe       = regexp.MustCompile(`/lib/python3\.\d+/([^/]+)`)
)

// findStack reads the last faulthandler dump in the output.
func findStack(lines []string) *PythonStack {
	start := -1
	for i := len(lines) - 1; i >= 0 && start < 0; i-- {
		if strings.HasPrefix(lines[i], "Fatal Python error: ") {
			start = i
		}
	}
	if start < 0 {
		return nil
	}
	st := &PythonStack{Header: lines[start]}
	in := false
	for _, l := range lines[start+1:] {
		if !in {
			in = crashingThreadRe.MatchString(l)
			continue
		}
		if l == "  Garbage-collecting" { // CPython notes it under the header
			continue
		}
		m := faultFrameRe.FindStringSubmatch(l)
		if m == nil {
			break
		}
		n, _ := strconv.Atoi(m[2]) // 0 for an unknown line
		st.Frames = append(st.Frames, Frame{File: m[1], Line: n, Func: m[3]})
	}
	return st
}

// cellNumber says whether the frame runs code of a notebook cell and, for
// terminal IPython's file names, which execution count it was.
func (f Frame) cellNumber() (n int, isCell bool) {
	if ipykernelCellRe.MatchString(f.File) {
		return 0, true
	}
	if m := ipythonCellRe.FindStringSubmatch(f.File); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n, true
	}
	return 0, false
}

func (f Frame) isCell() bool {
	_, ok := f.cellNumber()
	return ok
}

// userFrame is the innermost frame in a notebook cell: the user's own line
// that led to the crash.
func (s *PythonStack) userFrame() (int, bool) {
	if s == nil {
		return -1, false
	}
	for i, f := range s.Frames {
		if f.isCell() {
			return i, true
		}
	}
	return -1, false
}

// runningCellFile is the file of the outermost cell frame: the cell that
// was executed. A function called from it may live in an earlier cell.
func (s *PythonStack) runningCellFile() string {
	for i := len(s.Frames) - 1; i >= 0; i-- {
		if s.Frames[i].isCell() {
			return s.Frames[i].File
		}
	}
	return ""
}

// pkg is the installed package, or standard-library module, where the
// crash happened.
type pkg struct {
	name   string
	stdlib bool
}

// library is the innermost frame's package, above the user's cell frame:
// native code under it is where the crash most likely happened.
func (s *PythonStack) library() (pkg, bool) {
	if s == nil {
		return pkg{}, false
	}
	for _, f := range s.Frames {
		if f.isCell() {
			break
		}
		if m := sitePackagesRe.FindStringSubmatch(f.File); m != nil {
			return pkg{name: strings.TrimSuffix(m[1], ".py")}, true
		}
		if m := stdlibRe.FindStringSubmatch(f.File); m != nil {
			return pkg{name: strings.TrimSuffix(m[1], ".py"), stdlib: true}, true
		}
	}
	return pkg{}, false
}

// shortFile keeps a frame's file readable on a short line: a library's
// file from its package directory on, anything else whole.
func (f Frame) shortFile() string {
	for _, re := range []*regexp.Regexp{sitePackagesRe, stdlibRe} {
		if m := re.FindStringSubmatchIndex(f.File); m != nil {
			return f.File[m[2]:]
		}
	}
	return f.File
}
