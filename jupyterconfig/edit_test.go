package jupyterconfig

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const (
	section = "KernelProvisionerFactory"
	key     = "default_provisioner_name"
	ours    = "jupyter-guard"
)

// Files as admins and Jupyter's own tools write them: Set then Unset must
// give each back byte for byte.
var originals = map[string]string{
	"python json.dumps indent=2": "{\n  \"ServerApp\": {\n    \"jpserver_extensions\": {\n      \"nbclassic\": true\n    }\n  }\n}",
	"four spaces, newline":       "{\n    \"NotebookApp\": {\"nbserver_extensions\": {}},\n    \"MappingKernelManager\": {\"cull_idle_timeout\": 3600}\n}\n",
	"one line":                   `{"ServerApp":{"ip":"0.0.0.0"},"LabApp":{"dev_mode":false}}`,
	"tabs and CRLF":              "{\r\n\t\"ServerApp\": {\r\n\t\t\"port\": 8888\r\n\t}\r\n}\r\n",
	"the section, another key":   "{\n  \"KernelProvisionerFactory\": {\n    \"log_level\": \"DEBUG\"\n  },\n  \"ServerApp\": {\"port\": 9999}\n}\n",
	"escapes and unicode":        "{\"a\\\"}\": {\"b\": \"caf\\u00e9 }] \\\\\"}, \"Z\": [1, {\"x\": [\"}\"]}], \"n\": -1.5e3, \"t\": true}",
	"the section first, alone":   "{\"KernelProvisionerFactory\": {\"x\": 1}}",
}

func TestSetThenUnsetGivesTheFileBack(t *testing.T) {
	for name, original := range originals {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "jupyter_config.json")
			if err := os.WriteFile(path, []byte(original), 0o600); err != nil {
				t.Fatal(err)
			}
			changed, err := Set(path, section, key, ours)
			if err != nil || !changed {
				t.Fatalf("Set: %v, %v", changed, err)
			}
			set, _ := os.ReadFile(path)
			checkSetting(t, set, original)
			if again, err := Set(path, section, key, ours); err != nil || again {
				t.Fatalf("a second Set changed it: %v, %v", again, err)
			}
			if info, _ := os.Stat(path); info.Mode().Perm() != 0o600 {
				t.Errorf("mode %v, want the file's 0600", info.Mode().Perm())
			}
			removed, err := Unset(path, section, key, ours)
			if err != nil || !removed {
				t.Fatalf("Unset: %v, %v", removed, err)
			}
			if back, _ := os.ReadFile(path); string(back) != original {
				t.Errorf("not given back:\n%q\nwas\n%q", back, original)
			}
		})
	}
}

// checkSetting parses the edited file as Jupyter would and finds the
// setting there, and everything the original had.
func checkSetting(t *testing.T, edited []byte, original string) {
	t.Helper()
	var got, want map[string]any
	if err := json.Unmarshal(edited, &got); err != nil {
		t.Fatalf("edited file is not JSON: %v\n%s", err, edited)
	}
	if err := json.Unmarshal([]byte(original), &want); err != nil {
		t.Fatal(err)
	}
	sec, _ := got[section].(map[string]any)
	if sec[key] != ours {
		t.Errorf("%s.%s = %v in\n%s", section, key, sec[key], edited)
	}
	delete(sec, key)
	if len(sec) == 0 {
		delete(got, section)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("other settings changed:\n%s\nwas\n%s", edited, original)
	}
}

func TestNoFileBeforeNoFileAfter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "etc", "jupyter", "jupyter_config.json")
	if changed, err := Set(path, section, key, ours); err != nil || !changed {
		t.Fatalf("Set: %v, %v", changed, err)
	}
	if v, ok, err := Get(path, section, key); err != nil || !ok || v != `"jupyter-guard"` {
		t.Fatalf("Get: %q %v %v", v, ok, err)
	}
	if removed, err := Unset(path, section, key, ours); err != nil || !removed {
		t.Fatalf("Unset: %v, %v", removed, err)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the file Set made is still there: %v", err)
	}
	if removed, err := Unset(path, section, key, ours); err != nil || removed {
		t.Errorf("Unset of nothing: %v, %v", removed, err)
	}
}

func TestAnotherValueIsLeftAlone(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jupyter_config.json")
	original := `{"KernelProvisionerFactory": {"default_provisioner_name": "k8s-provisioner"}}`
	if err := os.WriteFile(path, []byte(original), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Set(path, section, key, ours); err == nil || !strings.Contains(err.Error(), `"k8s-provisioner" already`) {
		t.Errorf("Set over another provisioner: %v", err)
	}
	if _, err := Unset(path, section, key, ours); err == nil || !strings.Contains(err.Error(), "not \"jupyter-guard\"") {
		t.Errorf("Unset of another provisioner: %v", err)
	}
	if back, _ := os.ReadFile(path); string(back) != original {
		t.Errorf("changed: %s", back)
	}
}

func TestWhatJupyterCannotLoadIsLeftAlone(t *testing.T) {
	for _, bad := range []string{"", "null", "[1]", `{"a": `, `{"KernelProvisionerFactory": 3}`} {
		path := filepath.Join(t.TempDir(), "jupyter_config.json")
		if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Set(path, section, key, ours); err == nil {
			t.Errorf("Set accepted %q", bad)
		}
		if back, _ := os.ReadFile(path); string(back) != bad {
			t.Errorf("%q became %q", bad, back)
		}
	}
}

func TestEmptyObjects(t *testing.T) {
	for original, want := range map[string]string{
		"{}":                               "{\n  \"KernelProvisionerFactory\": {\"default_provisioner_name\": \"jupyter-guard\"}\n}",
		`{"KernelProvisionerFactory": {}}`: "{\"KernelProvisionerFactory\": {\n  \"default_provisioner_name\": \"jupyter-guard\"\n}}",
	} {
		path := filepath.Join(t.TempDir(), "jupyter_config.json")
		if err := os.WriteFile(path, []byte(original), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Set(path, section, key, ours); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(path); string(got) != want {
			t.Errorf("%s: got\n%s\nwant\n%s", original, got, want)
		}
		// Nothing else was in it: it goes, as an empty file would be.
		if _, err := Unset(path, section, key, ours); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: still there after Unset", original)
		}
	}
}
