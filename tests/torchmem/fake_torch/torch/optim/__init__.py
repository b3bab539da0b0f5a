from torch.optim import optimizer  # noqa: F401 (as torch's)
