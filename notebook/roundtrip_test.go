package notebook

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRoundTripMatchesNbformat reads varied notebooks (attachments, every
// output type, unicode and control characters, odd numbers, unknown
// fields, foreign formatting) and writes them back: the bytes must be
// exactly what nbformat.write(nbformat.read(...)) gives.
func TestRoundTripMatchesNbformat(t *testing.T) {
	py := testPython(t)
	for _, path := range roundTripFiles(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			nb, err := Read(path)
			if err != nil {
				t.Fatal(err)
			}
			got, err := nb.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			want := nbformatRewrite(t, py, path)
			if !bytes.Equal(got, want) {
				t.Fatalf("differs from nbformat at %s", firstDiff(got, want))
			}
		})
	}
}

// TestRewriteIsStable writes, reads and writes again: nothing may change.
func TestRewriteIsStable(t *testing.T) {
	for _, path := range roundTripFiles(t) {
		nb, err := Read(path)
		if err != nil {
			t.Fatal(err)
		}
		once, _ := nb.Marshal()
		again, err := Parse(once)
		if err != nil {
			t.Fatalf("%s: rereading: %v", path, err)
		}
		twice, _ := again.Marshal()
		if !bytes.Equal(once, twice) {
			t.Fatalf("%s: second write differs at %s", path, firstDiff(twice, once))
		}
	}
}

// TestWriteReplacesWhole writes to a path that exists and checks nothing of
// the old file survives and no temporary file is left.
func TestWriteReplacesWhole(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.ipynb")
	if err := os.WriteFile(out, bytes.Repeat([]byte("old "), 10000), 0o644); err != nil {
		t.Fatal(err)
	}
	nb, err := Read(roundTripFiles(t)[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := nb.Write(out); err != nil {
		t.Fatal(err)
	}
	want, _ := nb.Marshal()
	got, _ := os.ReadFile(out)
	if !bytes.Equal(got, want) {
		t.Fatal("written file is not the marshalled notebook")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("left behind: %v", entries)
	}
}

// TestMissingIDsAreFilled follows nbformat 4.5: cells without an id, or
// with one already taken, get fresh unique ids.
func TestMissingIDsAreFilled(t *testing.T) {
	nb, err := Parse([]byte(`{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
		{"cell_type": "markdown", "metadata": {}, "source": "a"},
		{"id": "same", "cell_type": "markdown", "metadata": {}, "source": "b"},
		{"id": "same", "cell_type": "markdown", "metadata": {}, "source": "c"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, c := range nb.Cells {
		if c.ID == "" || seen[c.ID] {
			t.Fatalf("ids %q, %q, %q", nb.Cells[0].ID, nb.Cells[1].ID, nb.Cells[2].ID)
		}
		seen[c.ID] = true
	}
	if nb.Cells[1].ID != "same" {
		t.Fatalf("the first holder of an id must keep it, got %q", nb.Cells[1].ID)
	}
	old, err := Parse([]byte(`{"nbformat": 4, "nbformat_minor": 4, "metadata": {}, "cells": [{"cell_type": "raw", "metadata": {}, "source": ""}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if out, _ := old.Marshal(); strings.Contains(string(out), `"id"`) {
		t.Fatalf("nbformat 4.4 has no cell ids, yet one was written:\n%s", out)
	}
}

// firstDiff shows where two outputs part.
func firstDiff(got, want []byte) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	line := bytes.Count(want[:i], []byte("\n")) + 1
	return fmt.Sprintf("line %d:\n got: %s\nwant: %s", line, excerpt(got, i), excerpt(want, i))
}

func excerpt(b []byte, i int) string {
	from, to := max(i-40, 0), min(i+40, len(b))
	return strings.ReplaceAll(string(b[from:to]), "\n", "⏎")
}
