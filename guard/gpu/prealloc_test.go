package gpu

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

func TestPreallocator(t *testing.T) {
	const tf = "7f3a1c000000-7f3a1e000000 r-xp 00000000 08:01 1234 /venv/lib/python3.11/site-packages/tensorflow/libtensorflow_framework.so.2\n"
	const jax = "7f3a1c000000-7f3a1e000000 r-xp 00000000 08:01 1234 /venv/lib/python3.11/site-packages/jaxlib/xla_extension.so\n"
	const torch = "7f3a1c000000-7f3a1e000000 r-xp 00000000 08:01 1234 /venv/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so\n"
	tests := []struct {
		maps, environ, want string
	}{
		{tf, "HOME=/root\x00", "TensorFlow"},
		{tf, "HOME=/root\x00TF_FORCE_GPU_ALLOW_GROWTH=true\x00", ""},
		{tf, "TF_FORCE_GPU_ALLOW_GROWTH=false\x00", "TensorFlow"},
		{jax, "PATH=/bin\x00", "JAX"},
		{jax, "XLA_PYTHON_CLIENT_PREALLOCATE=false\x00", ""},
		{torch, "", ""},
	}
	root := t.TempDir()
	for i, tt := range tests {
		dir := filepath.Join(root, strconv.Itoa(100+i))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, "maps"), []byte("00400000-00452000 r-xp 00000000 08:01 1 /usr/bin/python3\n"+tt.maps), 0o644)
		os.WriteFile(filepath.Join(dir, "environ"), []byte(tt.environ), 0o644)
		got, err := Preallocator(root, 100+i)
		if err != nil || got != tt.want {
			t.Errorf("Preallocator with %q and %q = %q, %v; want %q", tt.maps, tt.environ, got, err, tt.want)
		}
	}
	if _, err := Preallocator(root, 999); err == nil {
		t.Error("Preallocator of a missing process: no error")
	}
}

func TestOver(t *testing.T) {
	ninety := func(total uint64) uint64 { return total * 9 / 10 }
	u := Usage{GPUs: []GPU{
		{Index: 0, Used: 0, MemTotal: 0}, // read without figures: never over
		{Index: 1, Used: 70 * gib, MemTotal: 80 * gib},
		{Index: 2, Used: 36 * gib, MemTotal: 40 * gib},
		{Index: 3, Used: 40 * gib, MemTotal: 40 * gib},
	}}
	if g, ok := Over(u, ninety); !ok || g.Index != 2 {
		t.Errorf("Over = GPU %d, %v; want GPU 2", g.Index, ok)
	}
	if _, ok := Over(Usage{GPUs: u.GPUs[:2]}, ninety); ok {
		t.Error("Over with no GPU past the line")
	}
}
