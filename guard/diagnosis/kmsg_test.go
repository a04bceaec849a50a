package diagnosis

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
)

// The records of a real OOM kill in a memory cgroup, read from /dev/kmsg.
func TestParseRealMemcgOOMRecords(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(testdata, "kmsg-memcg-oom.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var events []KernelEvent
	for rec := range strings.Lines(string(data)) {
		text, ok := parseKmsgRecord(rec)
		if !ok {
			t.Fatalf("not a kernel record: %q", rec)
		}
		if ev, ok := parseKernelEvent(text); ok {
			events = append(events, ev)
		}
	}
	if len(events) != 2 {
		t.Fatalf("events = %+v, want the oom-kill summary and Killed process", events)
	}
	summary, killed := events[0], events[1]
	if summary.Kind != EventOOMKill || summary.PID != 9046 || summary.Comm != "python" || summary.Global ||
		!strings.HasSuffix(summary.OOMMemcg, "/diagprobe-manual") {
		t.Errorf("summary = %+v", summary)
	}
	if killed.Kind != EventOOMKilled || killed.PID != 9046 || killed.Comm != "python" || killed.Global ||
		killed.AnonRSS != 130688<<10 {
		t.Errorf("killed = %+v", killed)
	}
}

// Global OOM lines in the format of mm/oom_kill.c and memcontrol.c (a
// machine out of memory cannot be staged in a test).
func TestParseGlobalOOMAndXid(t *testing.T) {
	tests := []struct {
		text string
		want KernelEvent
	}{
		{"oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,global_oom,task_memcg=/user.slice/user-1000.slice,task=python3,pid=4242,uid=1000",
			KernelEvent{Kind: EventOOMKill, PID: 4242, Comm: "python3", Global: true}},
		{"Out of memory: Killed process 4242 (python3) total-vm:9000000kB, anon-rss:8000000kB, file-rss:0kB, shmem-rss:0kB, UID:1000 pgtables:16000kB oom_score_adj:0",
			KernelEvent{Kind: EventOOMKilled, PID: 4242, Comm: "python3", Global: true, AnonRSS: 8000000 << 10}},
		{"oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg=/kubepods/pod1,task_memcg=/kubepods/pod1/c,task=my, odd (task),pid=77,uid=0",
			KernelEvent{Kind: EventOOMKill, PID: 77, Comm: "my, odd (task)", OOMMemcg: "/kubepods/pod1"}},
		{"NVRM: Xid (PCI:0000:00:06): 31, pid=79749, name=python, Ch 0000000a, intr 00000000. MMU Fault: ENGINE GRAPHICS",
			KernelEvent{Kind: EventGPUXid, PID: 79749, Comm: "python", Xid: 31}},
		{"NVRM: Xid (PCI:0000:01:00): 79, pid=1122, GPU has fallen off the bus.",
			KernelEvent{Kind: EventGPUXid, PID: 1122, Xid: 79}},
	}
	for _, tt := range tests {
		got, ok := parseKernelEvent(tt.text)
		tt.want.Text = tt.text
		if !ok || got != tt.want {
			t.Errorf("parseKernelEvent(%q)\n = %+v\nwant %+v", tt.text, got, tt.want)
		}
	}
	for _, text := range []string{
		"NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.", // no pid: cannot be ours
		"python invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0",
	} {
		if ev, ok := parseKernelEvent(text); ok {
			t.Errorf("parseKernelEvent(%q) = %+v, want nothing", text, ev)
		}
	}
}

func TestUserSpaceRecordsAreNoEvidence(t *testing.T) {
	// Written to /dev/kmsg by a program: facility LOG_USER.
	if _, ok := parseKmsgRecord("12,900,1000,-;Memory cgroup out of memory: Killed process 1 (init)\n"); ok {
		t.Error("a user-space record was taken for the kernel's")
	}
	if text, ok := parseKmsgRecord("3,901,1000,-;text\n SUBSYSTEM=x\n"); !ok || text != "text" {
		t.Errorf("kernel record = %q, %v", text, ok)
	}
}

// The watcher sees only what arrives after it was opened.
func TestKmsgWatcherReadsOnlyNewRecords(t *testing.T) {
	kmsg, err := os.OpenFile("/dev/kmsg", os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("cannot write the kernel log: %v", err)
	}
	defer kmsg.Close()
	mark := func() string {
		m := "jupyter-guard diagnosis test marker " + uuid.NewString()
		if _, err := kmsg.WriteString(m + "\n"); err != nil {
			t.Fatal(err)
		}
		return m
	}
	old := mark()
	w, err := NewKmsgWatcher()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	fresh := mark()
	records, _, err := w.readNew()
	if err != nil {
		t.Fatal(err)
	}
	has := func(m string) bool {
		return slices.ContainsFunc(records, func(r string) bool { return strings.Contains(r, m) })
	}
	if has(old) || !has(fresh) {
		t.Errorf("saw the old marker: %v, the new one: %v (want false, true)", has(old), has(fresh))
	}
	if again, _, _ := w.readNew(); len(again) != 0 && slices.ContainsFunc(again, func(r string) bool { return strings.Contains(r, fresh) }) {
		t.Error("a record was read twice")
	}
}

func TestUnreadableKernelLogIsNoEvidence(t *testing.T) {
	w, err := openKmsgWatcher(filepath.Join(t.TempDir(), "no-kmsg"))
	if err == nil || w != nil {
		t.Fatalf("open of a missing log = %v, %v", w, err)
	}
	if log := w.Collect([]int{1}); log.Read || len(log.Events) != 0 {
		t.Errorf("nil watcher collected %+v", log)
	}
	if err := w.Close(); err != nil {
		t.Errorf("closing a nil watcher: %v", err)
	}
}
