# What PyTorch prints when a CUDA error escapes into C++, written to fd 2 as
# native code would, then the abort that follows.
import faulthandler, os
faulthandler.enable()
os.write(2, b"terminate called after throwing an instance of 'c10::Error'\n"
            b"  what():  CUDA error: an illegal memory access was encountered\n"
            b"CUDA kernel errors might be asynchronously reported at some other API call, "
            b"so the stacktrace below might be incorrect.\n"
            b"For debugging consider passing CUDA_LAUNCH_BLOCKING=1\n")
os.abort()
