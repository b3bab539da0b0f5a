# Importing torch 2.x's torch/optim/optimizer.py takes a while (it imports
# more modules, reading files): meanwhile the module is in sys.modules,
# half initialised, and the hook's thread may look at it.  The sleep holds
# that window open for 100 ms, longer than the hook's period in the test
# (GPUSCOPE_TORCH_MEM_MS=20), so that the hook meets it every run.
import time

from torch import _state

time.sleep(0.1)


def register_optimizer_step_post_hook(hook):
    _state["hooks"].append(hook)
