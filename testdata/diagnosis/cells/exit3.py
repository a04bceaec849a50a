import os
print("saving results...", flush=True)
os._exit(3)
