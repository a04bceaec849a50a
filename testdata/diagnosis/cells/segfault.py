import faulthandler, ctypes
faulthandler.enable()
ctypes.string_at(0)
