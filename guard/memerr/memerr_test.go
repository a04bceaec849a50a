package memerr

import "testing"

func TestFind(t *testing.T) {
	const gib = 1 << 30
	for _, tt := range []struct {
		name          string
		ename, evalue string
		traceback     []string
		want          Error
		found         bool
	}{
		{"numpy", "MemoryError", "Unable to allocate 2.00 GiB for an array with shape (2147483648,) and data type uint8", nil,
			Error{Asked: 2 * gib, Work: Array}, true},
		{"xeus-python", "<class 'MemoryError'>", "", nil, Error{}, true},
		{"NumPy's own class", "_ArrayMemoryError", "Unable to allocate 64.0 MiB for an array with shape (67108864,) and data type uint8", nil,
			Error{Asked: 64 << 20, Work: Array}, true},
		{"a Pool's worker", "MemoryError", "Unable to allocate 64.0 MiB for an array with shape (67108864,) and data type uint8",
			[]string{"RemoteTraceback: ", "File /usr/lib/python3.11/multiprocessing/pool.py:774, in ApplyResult.get"},
			Error{Asked: 64 << 20, Work: Array, Worker: true}, true},
		{"a dict", "MemoryError", "", []string{"Cell In[2], line 3", "d[i] = (i, str(i))"}, Error{}, true},
		{"the guard's hook", "MemoryError", NearText + ", where no allocation succeeds (see the note below)", nil, Error{Near: true}, true},
		{"keras in TensorFlow's defaults", "MemoryError", "std::bad_alloc",
			[]string{"File .../keras/src/backend/tensorflow/trainer.py:377, in TensorFlowTrainer.fit"}, Error{Work: Fit}, true},
		{"pytorch on the CPU", "RuntimeError", "[enforce fail at alloc_cpu.cpp:114] data. DefaultCPUAllocator: not enough memory: you tried to allocate 1073741824 bytes.",
			[]string{"torch/nn/modules/module.py"}, Error{Asked: gib, Work: Fit}, true},
		{"pandas", "MemoryError", "Unable to allocate 1.50 GiB for an array with shape (3, 67108864) and data type float64",
			[]string{"pandas/core/frame.py"}, Error{Asked: 3 * gib / 2, Work: Frame}, true},
		{"IRkernel", "ERROR", "Error: cannot allocate vector of size 7.5 Gb", nil, Error{Asked: 15 * gib / 2, Work: Vector}, true},
		{"a GPU is another note", "OutOfMemoryError", "CUDA out of memory. Tried to allocate 2.00 GiB", nil, Error{}, false},
		{"TensorFlow on a GPU", "ResourceExhaustedError", "OOM when allocating tensor with shape[768,64,64,64] on /job:localhost/replica:0/task:0/device:GPU:0", nil, Error{}, false},
		{"TensorFlow on the CPU", "ResourceExhaustedError", "OOM when allocating tensor with shape[768,64,64,64] and type float on /job:localhost/replica:0/task:0/device:CPU:0 by allocator cpu", nil,
			Error{Asked: 768 * 64 * 64 * 64 * 4, Work: Fit}, true},
		{"TensorFlow's allocator held to a limit", "ResourceExhaustedError", "Graph execution error:\n\nDetected at node sequential_1/conv2d_9_1/convolution\n" +
			"OOM when allocating tensor with shape[768,32,32,16] and type float on /job:localhost/replica:0/task:0/device:CPU:0 by allocator bfc_cpu_allocator_for_gpu", nil,
			Error{Asked: 768 * 32 * 32 * 16 * 4, Work: Fit, Pool: true}, true},
		{"another error", "ValueError", "MemoryError is not this", nil, Error{}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, found := Find(tt.ename, tt.evalue, tt.traceback)
			if got != tt.want || found != tt.found {
				t.Errorf("Find = %+v, %v; want %+v, %v", got, found, tt.want, tt.found)
			}
		})
	}
}

func TestFindStream(t *testing.T) {
	for _, tt := range []struct {
		text  string
		want  Error
		found bool
	}{
		{"bash: xrealloc: cannot allocate 979673088 bytes\nRestarting Bash", Error{Asked: 979673088, Work: Shell}, true},
		{"Traceback (most recent call last):\n  File \"<string>\", line 1, in <module>\nMemoryError\n", Error{}, false},
		{"print('MemoryError is a word')\n", Error{}, false},
		{"all is well\n", Error{}, false},
	} {
		if got, found := FindStream(tt.text); got != tt.want || found != tt.found {
			t.Errorf("FindStream(%q) = %+v, %v; want %+v, %v", tt.text, got, found, tt.want, tt.found)
		}
	}
}
