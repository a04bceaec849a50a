# What TensorFlow 2.21 printed, then did, when the allocator jupyter-guard
# held to 1.2 GiB refused a tensor in a oneDNN op on an AVX-512 Xeon
# (bench/cnn_story.py, 2026-11-28): a segfault.
import ctypes, sys
print("W0000 00:00:1795835418.720387   13174 op_kernel.cc:1858] OP_REQUIRES failed at mkl_util.h:848 : "
      "RESOURCE_EXHAUSTED: OOM when allocating tensor with shape[768,32,32,16] and type float on "
      "/job:localhost/replica:0/task:0/device:CPU:0 by allocator bfc_cpu_allocator_for_gpu", file=sys.stderr, flush=True)
ctypes.string_at(0)
