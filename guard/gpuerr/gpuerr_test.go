package gpuerr

import (
	"encoding/json"
	"os"
	"testing"
)

// example is one error output as a kernel sends it, with what it is. The
// texts in testdata/errors.json are the frameworks' own, as users quoted
// them in the issue that Source names.
type example struct {
	Why       string `json:"why"`
	Source    string `json:"source"`
	Ename     string `json:"ename"`
	Evalue    string `json:"evalue"`
	Framework string `json:"framework"`
	Device    int    `json:"device"`
}

func examples(t *testing.T) []example {
	t.Helper()
	data, err := os.ReadFile("testdata/errors.json")
	if err != nil {
		t.Fatal(err)
	}
	var ex []example
	if err := json.Unmarshal(data, &ex); err != nil {
		t.Fatal(err)
	}
	return ex
}

func TestFind(t *testing.T) {
	for _, e := range examples(t) {
		// As an error output, and as the last line of a traceback printed
		// to stderr.
		for _, text := range []string{e.Ename + ": " + e.Evalue, "Traceback (most recent call last):\n  ...\n" + e.Ename + ": " + e.Evalue + "\n"} {
			got, ok := Find(text)
			if ok != (e.Framework != "") || got.Framework != e.Framework || ok && got.Device != e.Device {
				t.Errorf("%s: Find = %+v, %v; want %q on device %d", e.Why, got, ok, e.Framework, e.Device)
			}
		}
	}
}

func TestPreallocates(t *testing.T) {
	for name, want := range map[string]bool{"PyTorch": false, "TensorFlow": true, "JAX": true, "CuPy": false} {
		for _, e := range examples(t) {
			if got, ok := Find(e.Evalue); ok && got.Framework == name && got.Preallocates != want {
				t.Errorf("%s preallocates: %v, want %v", name, got.Preallocates, want)
			}
		}
	}
}

func TestFindSetup(t *testing.T) {
	data, err := os.ReadFile("testdata/setup.json")
	if err != nil {
		t.Fatal(err)
	}
	var ex []struct {
		Why, Source, Kind, Line string
		Lines                   []string
	}
	if err := json.Unmarshal(data, &ex); err != nil {
		t.Fatal(err)
	}
	for _, e := range ex {
		got, ok := FindSetup(e.Lines)
		if want := (Setup{Kind: e.Kind, Line: e.Line}); ok != (e.Kind != "") || got != want {
			t.Errorf("%s: FindSetup = %+v, %v; want %+v", e.Why, got, ok, want)
		}
	}
}

func TestEverySetupHasAFix(t *testing.T) {
	for _, kind := range []string{DriverMismatch, CuDNNInit, CUDAInit} {
		if (Setup{Kind: kind}).Fix() == "" {
			t.Errorf("no fix for a %s", kind)
		}
	}
}
