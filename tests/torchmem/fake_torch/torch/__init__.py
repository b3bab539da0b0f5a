# A stand-in for torch with CUDA, for the hook's tests on machines without a
# GPU (tests/torchmem/hook_fake.sh): the attributes the hook reads, with the
# shapes torch 2.x gives them, driven by the test program through _state.
import types

version = types.SimpleNamespace(cuda="12.4")
_state = {"alloc": 0, "steps": 0, "init": False, "hooks": [], "oom": None, "history": None,
          "history_thread": None}

MiB = 1 << 20


def _stats(dev):
    a = _state["alloc"]
    return {
        "allocated_bytes": {"all": {"current": a, "peak": a + MiB}},
        "reserved_bytes": {"all": {"current": 2 * a, "peak": 2 * a + MiB}},
        "active_bytes": {"all": {"current": a + 4096}},
        "inactive_split_bytes": {"all": {"current": a // 4}},
        "allocation": {"all": {"allocated": 100 + _state["steps"] * 3, "freed": 50 + _state["steps"]}},
        "num_alloc_retries": 2,
        "num_ooms": 0,
        "segment": {"all": {"current": 3 + _state["steps"]}},
    }


def _attach(fn):
    _state["oom"] = fn


_C = types.SimpleNamespace(_cuda_memoryStats=_stats, _cuda_attach_out_of_memory_observer=_attach)


def _snapshot():
    return [{"device": 0, "total_size": 64 * MiB, "blocks": [
        {"size": 40 * MiB, "state": "active_allocated",
         "frames": [{"filename": "/app/train.py", "line": 12, "name": "forward"}]},
        {"size": 8 * MiB, "state": "inactive"},
        {"size": 16 * MiB, "state": "active_allocated", "frames": []},
    ]}]


def _record(**kw):
    # as torch 2.x's lazy imports inside its calls: a module first imported here
    from torch import _lazy_hist
    _state["history"] = kw
    _state["history_thread"] = _lazy_hist.imported_by


cuda = types.SimpleNamespace(
    is_initialized=lambda: _state["init"],
    device_count=lambda: 1,
    mem_get_info=lambda dev: (3 * MiB, 80 * MiB),
    memory_snapshot=_snapshot,
    memory=types.SimpleNamespace(_record_memory_history=_record),
)


def __getattr__(name):
    # torch.optim imported at first use (PEP 562), as torch 2.x imports some
    # of its submodules: the hook's thread must not be the one that imports it
    if name == "optim":
        import importlib
        return importlib.import_module("torch.optim")
    raise AttributeError(name)
