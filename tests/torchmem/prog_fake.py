# Drives the stand-in torch (fake_torch/) as a training loop would: CUDA
# initialised, torch.optim first used, 5 optimizer steps with 1 MiB more allocated each, then an OOM.
import os
import sys
import time

import torch

torch._state["alloc"] = 1 << 20
torch._state["init"] = True
time.sleep(0.2)             # the hook's thread attaches what it can, before torch.optim exists
torch.optim                 # the program's first use of torch.optim imports it (an optimizer)
deadline = time.time() + float(os.environ.get("GS_FAKE_WAIT_S", "10"))
while not torch._state["hooks"] and time.time() < deadline:
    time.sleep(0.01)        # the hook's thread notices CUDA and attaches
if not torch._state["hooks"]:
    print("hook did not attach")
    sys.exit(3)
for i in range(5):
    torch._state["alloc"] += 1 << 20
    torch._state["steps"] = i + 1
    for h in torch._state["hooks"]:
        h(None, (), {})
torch._state["oom"](0, 50 << 20, 80 << 20, 3 << 20)
print("history", torch._state["history"] is not None, torch._state["history_thread"])
print("done")
