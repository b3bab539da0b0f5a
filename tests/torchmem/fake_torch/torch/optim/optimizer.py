from torch import _state


def register_optimizer_step_post_hook(hook):
    _state["hooks"].append(hook)
