import ctypes
def check(state):
    ctypes.pythonapi.Py_FatalError(b"broken interpreter state in a test")
check(None)
