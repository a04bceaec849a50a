import ctypes
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
p = ctypes.c_void_p(libc.malloc(64))
libc.free(p)
libc.free(p)
