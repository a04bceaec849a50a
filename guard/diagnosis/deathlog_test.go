package diagnosis

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestDeathLogAppendAndRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "runtime", "jupyter-guard-deaths.jsonl")
	log := NewDeathLog(path)
	if records, err := log.Read(); records != nil || err != nil {
		t.Fatalf("a log not created yet: %v, %v", records, err)
	}
	cases := goldenCases(t)
	at := time.Date(2026, 11, 22, 10, 4, 5, 0, time.UTC)
	oom := Diagnose(cases["oom-cgroup"])
	segv := Diagnose(cases["segfault-numpy"])
	for i, d := range []Diagnosis{oom, segv} {
		if err := log.Append(d.Record(at.Add(time.Duration(i) * time.Minute))); err != nil {
			t.Fatal(err)
		}
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if perm := info.Mode().Perm(); perm != 0o600 {
		t.Errorf("mode = %v, want 0600: the log quotes the user's code", perm)
	}

	records, err := log.Read()
	if err != nil || len(records) != 2 {
		t.Fatalf("Read = %d records, %v", len(records), err)
	}
	r := records[0]
	if r.Cause != CauseOOMCgroup || r.Signal != "SIGKILL" || r.ExitCode != -1 || !r.Time.Equal(at) ||
		r.Summary != oom.Evalue || r.Evidence.OOMKills.After != 4 || len(r.Evidence.KernelLog.Events) != 1 {
		t.Errorf("record 0 = %+v", r)
	}
	if r.Cell == nil || r.Cell.Code != "x = np.ones((40000, 40000))" || r.Cell.Growth != oom.Evidence.Cell.Growth {
		t.Errorf("cell = %+v, want its first line and memory", r.Cell)
	}
	if r.Memory.Limit != 12*gib || len(r.Memory.TopCells) != 2 || strings.Contains(r.Memory.TopCells[1].Code, "\n") {
		t.Errorf("memory = %+v", r.Memory)
	}
	if s := records[1]; s.Cause != CauseSegfault || !s.CoreDumped || s.Evidence.Stack == nil ||
		s.Evidence.Stack.Frames[0].Func != "_sum" {
		t.Errorf("record 1 = %+v", s)
	}
}

func TestDeathLogSkipsACutLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "deaths.jsonl")
	log := NewDeathLog(path)
	if err := log.Append(Diagnose(goldenCases(t)["exit-3"]).Record(time.Now())); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"time":"2026-11-22T10:00:00Z","cau` + "\n")
	f.Close()
	if err := log.Append(Diagnose(goldenCases(t)["signal-sigterm-idle"]).Record(time.Now())); err != nil {
		t.Fatal(err)
	}
	records, err := log.Read()
	if len(records) != 2 || records[0].Cause != CauseExit || records[1].Cause != CauseSignal {
		t.Errorf("records = %+v", records)
	}
	if err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("err = %v, want the bad line reported", err)
	}
}

// A record cut short without its newline (a full disk) must not glue the
// next one to it.
func TestDeathLogStartsEachRecordOnANewLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "deaths.jsonl")
	if err := os.WriteFile(path, []byte(`{"time":"2026-11-22T10:00:00Z","cau`), 0o600); err != nil {
		t.Fatal(err)
	}
	log := NewDeathLog(path)
	if err := log.Append(Diagnose(goldenCases(t)["exit-3"]).Record(time.Now())); err != nil {
		t.Fatal(err)
	}
	records, err := log.Read()
	if len(records) != 1 || records[0].Cause != CauseExit {
		t.Errorf("records = %+v, want the one appended after the cut line", records)
	}
	if err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("err = %v, want the cut line reported", err)
	}
}

// In a runtime dir others can write, a symlink or someone else's file at
// the log's path gets nothing.
func TestDeathLogRefusesAPlantedFile(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "theirs")
	if err := os.WriteFile(target, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "deaths.jsonl")
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
	err := NewDeathLog(path).Append(Diagnose(goldenCases(t)["exit-3"]).Record(time.Now()))
	if err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Errorf("Append through a symlink: %v", err)
	}
	if data, _ := os.ReadFile(target); len(data) != 0 {
		t.Errorf("the symlink's target got %q", data)
	}
	if os.Geteuid() == 0 { // root can hand a file to another user
		other := filepath.Join(dir, "other.jsonl")
		if err := os.WriteFile(other, nil, 0o666); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(other, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		err := NewDeathLog(other).Append(Diagnose(goldenCases(t)["exit-3"]).Record(time.Now()))
		if err == nil || !strings.Contains(err.Error(), "not a file of this user's") {
			t.Errorf("Append to another user's file: %v", err)
		}
	}
}
