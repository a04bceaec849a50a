package diagnosis

import (
	"regexp"
	"strconv"
	"strings"
)

// KernelEventKind names the kernel log lines the diagnosis uses.
type KernelEventKind string

const (
	// EventOOMKill is the OOM killer's summary, printed before it sends
	// SIGKILL: "oom-kill:constraint=…,oom_memcg=…,task_memcg=…,task=…,pid=…".
	EventOOMKill KernelEventKind = "oom-kill"
	// EventOOMKilled is "… out of memory: Killed process PID (comm) …",
	// printed just after the SIGKILL was sent.
	EventOOMKilled KernelEventKind = "oom-killed"
	// EventGPUXid is an NVIDIA driver error: "NVRM: Xid (PCI:…): N, pid=…".
	EventGPUXid KernelEventKind = "gpu-xid"
)

// KernelEvent is one kernel log line about a process of the kernel's tree.
type KernelEvent struct {
	Kind KernelEventKind `json:"kind"`
	PID  int             `json:"pid"`
	Comm string          `json:"comm,omitempty"`
	// Global is set for an OOM kill because the whole machine ran out of
	// memory, not a memory cgroup.
	Global   bool   `json:"global,omitempty"`
	OOMMemcg string `json:"oom_memcg,omitempty"`
	// AnonRSS is the victim's anonymous memory in bytes when it was killed.
	AnonRSS uint64 `json:"anon_rss,omitempty"`
	Xid     int    `json:"xid,omitempty"`
	// Text is the line as the kernel logged it.
	Text string `json:"text"`
}

// kernelFacility is syslog facility 0: records the kernel itself wrote.
// Anything else was written to /dev/kmsg from user space and proves nothing.
const kernelFacility = 0

// parseKmsgRecord reads one /dev/kmsg record, "prio,seq,usec,flags;text"
// followed by optional " KEY=value" lines, and returns its text if the
// kernel wrote it.
func parseKmsgRecord(rec string) (string, bool) {
	header, text, ok := strings.Cut(rec, ";")
	if !ok {
		return "", false
	}
	prioField, _, _ := strings.Cut(header, ",")
	prio, err := strconv.Atoi(prioField)
	if err != nil || prio>>3 != kernelFacility {
		return "", false
	}
	text, _, _ = strings.Cut(text, "\n")
	return text, true
}

var (
	// Kernels before 4.19 printed no "…out of memory: " prefix.
	oomKilledRe = regexp.MustCompile(`^(?:(.*): )?Killed process (\d+) \((.*)\) total-vm:\d+kB, anon-rss:(\d+)kB, file-rss:\d+kB, shmem-rss:\d+kB`)
	// oom_memcg is only printed when a memory cgroup, not the machine, ran out.
	oomKillRe = regexp.MustCompile(`^oom-kill:constraint=([^,]+),.*?(?:,oom_memcg=(.*))?,task_memcg=.*,task=(.*),pid=(\d+),uid=\d+`)
	xidRe     = regexp.MustCompile(`NVRM: Xid \(PCI:[^)]*\): (\d+), pid=(\d+)(?:, name=([^,]*))?`)
)

// parseKernelEvent recognises the lines of the OOM killer and the NVIDIA
// driver in a kernel log text.
func parseKernelEvent(text string) (KernelEvent, bool) {
	if m := oomKilledRe.FindStringSubmatch(text); m != nil {
		kib, _ := strconv.ParseUint(m[4], 10, 64)
		return KernelEvent{
			Kind:    EventOOMKilled,
			PID:     atoi(m[2]),
			Comm:    m[3],
			Global:  strings.HasPrefix(m[1], "Out of memory"),
			AnonRSS: kib << 10,
			Text:    text,
		}, true
	}
	if m := oomKillRe.FindStringSubmatch(text); m != nil {
		return KernelEvent{
			Kind:     EventOOMKill,
			PID:      atoi(m[4]),
			Comm:     m[3],
			Global:   m[1] != "CONSTRAINT_MEMCG",
			OOMMemcg: m[2],
			Text:     text,
		}, true
	}
	if m := xidRe.FindStringSubmatch(text); m != nil {
		return KernelEvent{Kind: EventGPUXid, Xid: atoi(m[1]), PID: atoi(m[2]), Comm: m[3], Text: text}, true
	}
	return KernelEvent{}, false
}

// atoi is for digits a regexp has already matched.
func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
