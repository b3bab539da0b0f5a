"""dataloader - the GPU waits while the CPU prepares each batch.

Each step trains an MLP classifier on a batch of 32 images that go
through an expensive CPU transform (random crop, flip, blur, normalisation) in
the Dataset's __getitem__, as torchvision-style pipelines do.

broken: DataLoader(num_workers=0): the training loop itself decodes and
        transforms every sample of the next batch, and the GPU idles until
        it is done; the batch is then copied from pageable memory.
fixed:  DataLoader(num_workers=8, pin_memory=True, persistent_workers=True):
        worker processes prepare the next batches while the GPU trains on the
        current one, batches arrive in pinned memory and are copied with
        non_blocking=True.  Same dataset, transform, model and batches.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

from zoo_common import StepTimer, parse_args, require_gpu

CASE = "dataloader"
BATCH = 32
RAW = 112    # side of a "decoded" image
CROP = 96    # side after the random crop
BLUR_PASSES = 2
HIDDEN = 8192  # sized so that the GPU part of a step takes a few ms


class SyntheticImages(Dataset):
    """Deterministic random uint8 images standing in for decoded JPEGs."""

    def __init__(self, n):
        self.n = n
        g = torch.arange(5, dtype=torch.float32) - 2
        k = torch.exp(-(g * g) / 2)
        k = torch.outer(k, k) / torch.outer(k, k).sum()
        self.blur = k.expand(3, 1, 5, 5).contiguous()
        self.mean = torch.tensor([0.485, 0.456, 0.406]).view(3, 1, 1)
        self.std = torch.tensor([0.229, 0.224, 0.225]).view(3, 1, 1)

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        img = torch.randint(0, 256, (3, RAW, RAW), dtype=torch.uint8, generator=g)
        return self.transform(img, g), i % 10

    def transform(self, img, g):
        # The expensive part: per-sample CPU work.
        x = img.float() / 255.0
        top, left = torch.randint(0, RAW - CROP + 1, (2,), generator=g).tolist()
        x = x[:, top:top + CROP, left:left + CROP]
        if torch.rand((), generator=g) < 0.5:
            x = x.flip(2)
        x = x.unsqueeze(0)
        for _ in range(BLUR_PASSES):
            x = F.conv2d(x, self.blur, padding=2, groups=3)
        x = x.squeeze(0)
        x = x * (0.8 + 0.4 * torch.rand((), generator=g))  # brightness jitter
        return ((x - self.mean) / self.std).contiguous()


def make_model():
    # An MLP rather than a CNN: cuDNN's first convolutions cost seconds of
    # start-up, and the point here is the input pipeline, not the model.
    layers = [nn.Flatten(), nn.Linear(3 * CROP * CROP, HIDDEN, device="cuda"), nn.ReLU()]
    for _ in range(4):
        layers += [nn.Linear(HIDDEN, HIDDEN, device="cuda"), nn.ReLU()]
    layers.append(nn.Linear(HIDDEN, 10, device="cuda"))
    return nn.Sequential(*layers)


def main():
    variant, warmup, steps = parse_args(CASE, default_steps=30, default_warmup=5)
    require_gpu(CASE)
    torch.manual_seed(0)
    dataset = SyntheticImages((warmup + steps) * BATCH)
    if variant == "broken":
        # BROKEN: the loop itself prepares each batch, in pageable memory.
        loader = DataLoader(dataset, batch_size=BATCH, shuffle=False, num_workers=0)
    else:
        # FIXED: 8 worker processes prepare batches ahead; pinned memory.
        loader = DataLoader(dataset, batch_size=BATCH, shuffle=False, num_workers=8,
                            pin_memory=True, persistent_workers=True, prefetch_factor=4)
    model = make_model()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

    timer = StepTimer(CASE, variant, warmup, steps)
    batches = iter(loader)
    for i in range(timer.total):
        timer.begin(i)
        images, labels = next(batches)
        images = images.cuda(non_blocking=True)
        labels = labels.cuda(non_blocking=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = F.cross_entropy(model(images), labels)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        timer.end(i)
    timer.finish()


if __name__ == "__main__":
    main()
