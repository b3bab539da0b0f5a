from torch.optim.optimizer import register_optimizer_step_post_hook  # noqa: F401
# as torch 2.x: the submodules' names are deleted from the package
# (torch/optim/__init__.py: del adadelta, ..., del optimizer), so
# torch.optim.optimizer is reachable through sys.modules only
del optimizer  # noqa: F821
