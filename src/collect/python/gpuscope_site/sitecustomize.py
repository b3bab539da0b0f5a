# gpuscope's Python start-up hook (docs/memory.md).
#
# `gpuscope profile` puts this file's directory first on PYTHONPATH, so that
# Python's site module imports it as `sitecustomize` at start-up.  It then:
#  1. runs the `sitecustomize` it shadows, if any (the next one on sys.path),
#     so that the program's own start-up runs unchanged and in its order;
#  2. takes its own directory out of sys.path again;
#  3. installs a sys.meta_path finder that watches for `import torch` (it
#     never finds or loads anything itself); once torch is imported it stays
#     as a guard: it refuses every import made by the hook's own thread, so
#     that the hook never imports a module while the program imports (two
#     threads importing modules that import each other give one of them a
#     partially initialised module: on the H200, PyTorch 2.11's program
#     died so under --torch-memory-history, docs/memory.md).
#     What the hook's thread could not do for want of a module not yet
#     imported (or still being imported: _imported) is retried later, and
#     at the program's next optimizer step from the program's own thread.
# When torch has been imported, a daemon thread waits until the program has
# initialised CUDA (it never imports torch and never initialises CUDA), then
# samples torch.cuda's caching allocator per device every
# GPUSCOPE_TORCH_MEM_MS milliseconds (default 100; 0: only at step
# boundaries), at optimizer steps (a global post-step hook, where torch has
# them; at most as often as GPUSCOPE_TORCH_MEM_STEP_BUDGET allows, below),
# and once at exit; and attaches an out-of-memory observer.  The
# records go to the collector through ctypes (src/collect/torchmem.c).
#
# Nothing here may change what the program does: every failure of the hook
# is swallowed (only Exception, never KeyboardInterrupt or SystemExit), it
# prints nothing, and outside `gpuscope profile` (no collector preloaded,
# no GPUSCOPE_DIR) or with GPUSCOPE_TORCH_MEM=0 it does nothing but step 1.

import _thread
import os as _os
import sys as _sys

_HERE = _os.path.dirname(_os.path.abspath(__file__))


def _chain_sitecustomize():
    """Run the sitecustomize this one shadows, as Python would have."""
    import importlib.machinery
    import importlib.util

    rest = [p for p in _sys.path
            if _os.path.abspath(p or _os.curdir) != _HERE]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    mod = importlib.util.module_from_spec(spec)
    # the program's module takes the name: `import sitecustomize` finds it
    _sys.modules["sitecustomize"] = mod
    spec.loader.exec_module(mod)


def _drop_own_path():
    _sys.path[:] = [p for p in _sys.path
                    if _os.path.abspath(p or _os.curdir) != _HERE]


def _enabled():
    env = _os.environ
    if env.get("GPUSCOPE_TORCH_MEM", "1") in ("0", "off", "no", "false"):
        return False
    return bool(env.get("GPUSCOPE_DIR"))


# field order of gpuscope_torch_mem_sample() and gpuscope_torch_oom()
# (enum tm_field, enum oom_field in src/collect/torchmem.c; ABI 1)
_ABI = 1
_TM_PERIODIC, _TM_STEP, _TM_PEAK = 1, 2, 3
_HAS_ACTIVE, _HAS_COUNTS, _HAS_PEAKS, _HAS_RESERVED = 1, 2, 4, 8
_OOM_HAS_DEVICE_FREE, _OOM_HAS_STATS, _OOM_HAS_BLOCKS, _OOM_HAS_HISTORY = 1, 2, 4, 8
_OOM_PEAK = 16
# Peak snapshots (--torch-memory-history): at a new high of allocated memory
# at least _PEAK_STEP above the last snapshot's (so at most about 48 from
# 1 GiB to 100 GiB), once at least GPUSCOPE_TORCH_MEM_PEAK_MIN_MB (default
# 64) is allocated (smaller states are not worth naming), taken by the
# periodic thread, never inside a step.
_PEAK_STEP = 1.1
_OOM_BLOCKS = 8


class _Recorder(object):
    """Samples torch.cuda's allocator into the collector."""

    def __init__(self, lib, guard):
        import atexit
        import ctypes
        import threading
        import time
        self.atexit = atexit
        self.sleep = time.sleep
        self.guard = guard          # its ident is set to the hook's thread's (run)
        self.ct = ctypes
        self.lib = lib
        self.lock = threading.Lock()
        self.settled = threading.Event()    # the thread has its arena (_start_away)
        self.torch = None
        self.devices = ()
        self.steps = 0
        self.step_hook = False
        self.unused = set()
        self.history = _os.environ.get("GPUSCOPE_TORCH_MEMORY_HISTORY") == "1"
        self.pending = []           # what start() could not attach yet (_attach)
        self.peak_next = {}         # device -> allocated bytes that make the next peak snapshot
        try:
            self.peak_min = int(float(_os.environ.get("GPUSCOPE_TORCH_MEM_PEAK_MIN_MB", "64")) * (1 << 20))
        except ValueError:
            self.peak_min = 64 << 20
        try:
            ms = float(_os.environ.get("GPUSCOPE_TORCH_MEM_MS", "100"))
        except ValueError:
            ms = 100.0
        self.period = ms / 1000.0 if ms > 0 else 0.0
        # Step samples are rate-limited by their own cost: a step is sampled
        # when the time since the last step sample began is at least that
        # sample's cost over the budget (percent of the program's time;
        # default 0.25, half of the hook's 0.5% target, the rest for the
        # periodic samples).  One sample took 10.5-20.9 us on an H200, so
        # steps of 3.3 ms are sampled every 2nd to 3rd step and steps
        # longer than 8.4 ms every step.  0: every step.
        try:
            b = float(_os.environ.get("GPUSCOPE_TORCH_MEM_STEP_BUDGET", "0.25"))
        except ValueError:
            b = 0.25
        self.step_budget = b / 100.0 if b > 0 else 0.0
        self.step_last = None       # perf_counter() when the last step sample began
        # What the last two step samples took: the gate uses the smaller, so
        # that one slow sample (the first call into the allocator's stats, a
        # thread switch of the interpreter inside it) does not hold back the
        # next steps' samples for cost / budget seconds; a cost that stays
        # high stays in both.  None: not known yet (the next step is sampled).
        self.step_costs = (None, None)
        self.clock = time.perf_counter
        u64 = ctypes.c_uint64
        self.vals = (u64 * 11)()
        self.ovals = (u64 * 7)()
        self.blocks = (u64 * _OOM_BLOCKS)()
        self.pvals = (u64 * 7)()    # the periodic thread's own, for peak snapshots
        self.pblocks = (u64 * _OOM_BLOCKS)()
        lib.gpuscope_torch_mem_sample.argtypes = [
            ctypes.c_uint32, ctypes.c_uint32, ctypes.c_int64,
            ctypes.POINTER(u64), ctypes.c_uint32, ctypes.c_uint32]
        lib.gpuscope_torch_mem_sample.restype = ctypes.c_int
        lib.gpuscope_torch_oom.argtypes = [
            ctypes.c_uint32, ctypes.POINTER(u64), ctypes.c_uint32,
            ctypes.POINTER(u64), ctypes.c_uint32, ctypes.c_char_p,
            ctypes.c_uint32]
        lib.gpuscope_torch_oom.restype = ctypes.c_int

    # -- reading the allocator ------------------------------------------

    def _stats(self, dev):
        t = self.torch
        raw = getattr(t._C, "_cuda_memoryStats", None)
        if raw is not None:
            s = raw(dev)            # nested: s["allocated_bytes"]["all"]["current"]

            def get(key, sub="current"):
                v = s.get(key)
                if isinstance(v, dict):
                    v = v.get("all", {}).get(sub)
                return v
        else:
            s = t.cuda.memory_stats(dev)  # flat: "allocated_bytes.all.current"

            def get(key, sub="current"):
                v = s.get(key + ".all." + sub)
                return s.get(key) if v is None else v
        return get

    def sample(self, kind, devices=None):
        """One sample of each device in use; never raises.

        A device the program has not allocated on (nothing reserved, ever)
        is looked at again only by the periodic samples, so that a step
        boundary costs one read per device in use.
        """
        due = []
        try:
            with self.lock:
                for dev in (devices if devices is not None else self.devices):
                    if kind == _TM_STEP and dev in self.unused:
                        continue
                    p = self._sample_one(dev, kind)
                    if p:
                        due.append(p)
            # outside the lock: a step sample never waits for a snapshot
            for p in due:
                self._peak(*p)
        except Exception:
            pass

    def _sample_one(self, dev, kind):
        get = self._stats(dev)
        keys = (("allocated_bytes", "current"), ("reserved_bytes", "current"),
                ("active_bytes", "current"), ("inactive_split_bytes", "current"),
                ("allocated_bytes", "peak"), ("reserved_bytes", "peak"),
                ("allocation", "allocated"), ("allocation", "freed"),
                ("num_alloc_retries", "current"), ("num_ooms", "current"),
                ("segment", "current"))
        flags = _HAS_ACTIVE | _HAS_COUNTS | _HAS_PEAKS | _HAS_RESERVED
        v = self.vals
        for i, (k, sub) in enumerate(keys):
            x = get(k, sub)
            if x is None:
                x = 0
                if i in (2, 3):
                    flags &= ~_HAS_ACTIVE
                elif i in (4, 5):
                    flags &= ~_HAS_PEAKS
                elif i == 1:
                    flags &= ~_HAS_RESERVED
                else:
                    flags &= ~_HAS_COUNTS
            v[i] = max(int(x), 0)
        if not v[5] and not v[1]:
            self.unused.add(dev)    # a device the program never allocated on
            return
        self.unused.discard(dev)
        self.lib.gpuscope_torch_mem_sample(dev, kind, self.steps if self.step_hook else -1,
                                           v, 11, flags)
        if self.history and kind == _TM_PERIODIC and v[0] >= self.peak_next.get(dev, self.peak_min):
            self.peak_next[dev] = int(v[0] * _PEAK_STEP)
            return (dev, v[0], v[1], v[3])  # a peak snapshot is due (allocated, reserved, split)
        return None

    # -- out of memory --------------------------------------------------

    def on_oom(self, device, alloc, device_total, device_free):
        """The allocator's OOM observer: runs before the exception is raised."""
        try:
            self._oom(int(device), int(alloc), int(device_total), int(device_free))
        except Exception:
            pass

    def _oom(self, dev, alloc, total, free):
        t = self.torch
        flags = _OOM_HAS_DEVICE_FREE
        try:
            free, total = t.cuda.mem_get_info(dev)
        except Exception:
            pass                    # the observer's own figures stand
        ov = self.ovals
        ov[0], ov[1], ov[2] = alloc, max(free, 0), max(total, 0)
        try:
            get = self._stats(dev)
            ov[3] = int(get("allocated_bytes") or 0)
            ov[4] = int(get("reserved_bytes") or 0)
            ov[5] = int(get("inactive_split_bytes") or 0)
            flags |= _OOM_HAS_STATS
        except Exception:
            pass
        self._snapshot(dev, ov, self.blocks, flags)
        self.sample(_TM_PEAK, [dev])

    def _snapshot(self, dev, ov, blocks, flags):
        """Complete @ov and @blocks from memory_snapshot() and record them
        (an OOM, or a peak with _OOM_PEAK in @flags)."""
        sizes, text, largest_free, fl = self._largest(dev)
        ov[6] = largest_free
        n = min(len(sizes), _OOM_BLOCKS)
        for i in range(n):
            blocks[i] = sizes[i]
        self.lib.gpuscope_torch_oom(dev, ov, 7, blocks, n, text, flags | fl)

    def _largest(self, dev):
        """The largest segments and allocated blocks of @dev from
        memory_snapshot(): (block sizes largest first, the detail text or
        None, the largest free block, flags); stacks with the history."""
        sizes, lines, largest_free, flags = [], [], 0, 0
        try:
            snap = self.torch.cuda.memory_snapshot()
            flags |= _OOM_HAS_BLOCKS
            for seg in snap:
                if seg.get("device", dev) != dev:
                    continue
                lines.append((int(seg.get("total_size", 0)), "segment", ""))
                for b in seg.get("blocks", ()):
                    size = int(b.get("size", 0))
                    state = b.get("state", "")
                    if state == "inactive":
                        largest_free = max(largest_free, size)
                    elif state == "active_allocated":
                        sizes.append(size)
                        lines.append((size, "allocated", _frames(b)))
        except Exception:
            pass
        sizes.sort(reverse=True)
        lines.sort(key=lambda x: -x[0])
        text = "\n".join(("%d %s %s" % ln).rstrip() for ln in lines[:16])
        if self.history and any(ln[2] for ln in lines[:16]):
            flags |= _OOM_HAS_HISTORY
        return sizes, text.encode("utf-8", "replace") or None, largest_free, flags

    def _peak(self, dev, allocated, reserved, split):
        """A snapshot at a new high of allocated memory (--torch-memory-history):
        the peak's largest live allocations with their stacks, recorded as an
        OOM record flagged peak (requested 0)."""
        flags = _OOM_HAS_STATS | _OOM_PEAK
        ov = self.pvals
        ov[0], ov[1], ov[2] = 0, 0, 0
        try:
            free, total = self.torch.cuda.mem_get_info(dev)
            ov[1], ov[2] = max(int(free), 0), max(int(total), 0)
            flags |= _OOM_HAS_DEVICE_FREE
        except Exception:
            pass
        ov[3], ov[4], ov[5] = allocated, reserved, split
        self._snapshot(dev, ov, self.pblocks, flags)

    # -- start-up, steps, exit ------------------------------------------

    def start(self, torch):
        """CUDA is initialised: attach to the allocator."""
        self.torch = torch
        try:
            self.devices = tuple(range(torch.cuda.device_count()))
        except Exception:
            self.devices = (0,)
        try:
            torch._C._cuda_attach_out_of_memory_observer(self.on_oom)
        except Exception:
            pass
        self.pending = ([self._start_history] if self.history else []) + [self._start_steps]
        self._attach()
        self.atexit.register(self.sample, _TM_PEAK)
        self.sample(_TM_PERIODIC)

    def _attach(self):
        """Run what is pending: each is done when it returns or fails, and
        stays pending when it raised ImportError.

        In the hook's thread an import is refused (the guard): what needs a
        module the program has not imported yet (torch 2.x imports
        torch.optim and others at first use) is tried again at the next
        period, and at the program's optimizer steps (its own thread, where
        torch may import what it needs).
        """
        left = []
        for fn in self.pending:
            try:
                fn()
            except ImportError:
                left.append(fn)     # a module not imported yet: later
            except Exception:
                pass                # not there: given up (no history, no step samples)
        self.pending = left

    def _start_history(self):
        """--torch-memory-history: the allocator's history, with stacks."""
        rec = self.torch.cuda.memory._record_memory_history
        try:
            rec(enabled="all")
        except TypeError:           # torch 2.0's signature
            rec(True)

    def _start_steps(self):
        """The global optimizer post-step hook, where torch has one (torch
        2.0 on; else periodic samples only).

        The module is taken from sys.modules, not as torch.optim.optimizer:
        torch 2.x deletes its submodules' names from torch.optim (del
        optimizer in torch/optim/__init__.py), and the attribute then
        fails with AttributeError, which gave the hook up for good.  Not
        imported yet, or still being imported: ImportError, tried again
        later (_attach).
        """
        mod = _imported("torch.optim.optimizer")
        if mod is None:
            raise ImportError("torch.optim.optimizer is not imported yet")
        mod.register_optimizer_step_post_hook(self.on_step)
        self.step_hook = True

    def on_step(self, *args, **kwargs):
        self.steps += 1
        try:
            if self.pending:
                self._attach()
            now = self.clock()
            # step_costs shifts left: its first is known only once both are
            if self.step_budget and self.step_costs[0] is not None and \
                    now - self.step_last < min(self.step_costs) / self.step_budget:
                return              # too soon after the last one: within budget only
            self.sample(_TM_STEP)
            self.step_last = now
            self.step_costs = (self.step_costs[1], self.clock() - now)
        except Exception:
            pass

    def run(self):
        """The daemon thread: wait for torch and CUDA, then sample."""
        self.guard.ident = _thread.get_ident()
        self.lib.gpuscope_layout_thread_arena()
        self.settled.set()
        torch = None
        while True:
            try:
                if torch is None:
                    mod = _imported("torch")
                    if mod is not None and hasattr(mod, "cuda"):
                        torch = mod
                if torch is not None and self.torch is None:
                    if getattr(torch.version, "cuda", None) is None:
                        return      # a build without CUDA: nothing to record
                    if torch.cuda.is_initialized():
                        self.start(torch)
                elif self.torch is not None:
                    if self.pending:
                        self._attach()
                    if self.period:
                        self.sample(_TM_PERIODIC)
                if self.torch is not None and not self.period and not self.pending:
                    return          # step samples only, all attached
            except Exception:
                return
            self.sleep(self.period or 0.1)


def _imported(name):
    """The module @name once the program has imported it whole, else None.

    A module is in sys.modules from the moment its import begins: while the
    program's thread runs its body (torch's modules import more modules,
    reading files, and the interpreter lets other threads run meanwhile)
    the names it defines further down are not there yet.  importlib marks
    such a module's spec _initializing, and clears it at the end; a module
    without the mark is taken as not imported yet.
    """
    mod = _sys.modules.get(name)
    if mod is None or getattr(getattr(mod, "__spec__", None), "_initializing", True):
        return None
    return mod


def _frames(block):
    """A block's allocation stack (with --torch-memory-history), innermost last."""
    frames = block.get("frames")
    if frames is None:
        hist = block.get("history") or ()
        frames = hist[-1].get("frames", ()) if hist else ()
    out = []
    for f in frames:
        name = f.get("filename", "")
        if name.endswith((".py",)) and "/torch/" not in name:
            out.append("%s:%s:%s" % (_os.path.basename(name), f.get("line", 0),
                                     f.get("name", "")))
    return "<".join(out[:6])


def _collector():
    """The preloaded collector's entry points, or None (outside `profile`)."""
    import ctypes
    try:
        lib = ctypes.CDLL(None)
        if lib.gpuscope_torch_mem_abi() != _ABI:
            return None
    except (OSError, AttributeError):
        return None
    return lib


def _start_away(lib, t, rec):
    """Start the hook's thread @t with its stack and malloc arena away from
    where torch's libraries are about to be mapped (the collector's
    layout.c): under the collector's hold, until the thread has its arena."""
    lib.gpuscope_layout_hold()
    try:
        t.start()
        rec.settled.wait(1.0)
    finally:
        lib.gpuscope_layout_release()


class _TorchWatcher(object):
    """A meta_path finder that finds nothing: it notices `import torch`, then
    guards the hook's thread (ident) against importing."""

    def __init__(self):
        self.seen = False
        self.ident = None

    def find_spec(self, name, path=None, target=None):
        if self.ident is not None and _thread.get_ident() == self.ident:
            raise ImportError("gpuscope's allocator hook does not import (%s)" % name, name=name)
        if name == "torch" and not self.seen:
            self.seen = True
            try:
                lib = _collector()      # ctypes is imported only for torch programs
                if lib is None:
                    _sys.meta_path.remove(self)
                    return None
                import threading
                rec = _Recorder(lib, self)
                t = threading.Thread(target=rec.run, name="gpuscope-torchmem")
                t.daemon = True
                _start_away(lib, t, rec)
            except Exception:
                try:
                    _sys.meta_path.remove(self)
                except ValueError:
                    pass
        return None

    def find_module(self, name, path=None):     # Python < 3.4 finders' protocol
        return None


def _install():
    # only under `gpuscope profile`: the collector preloaded, a report directory set
    if not _enabled() or "libgpuscope-collect" not in _os.environ.get("LD_PRELOAD", ""):
        return
    w = _TorchWatcher()
    _sys.meta_path.insert(0, w)
    if "torch" in _sys.modules:
        w.find_spec("torch")


try:
    _install()
except Exception:
    pass
_drop_own_path()
# last, so that an error in the program's own sitecustomize is reported by
# site.py exactly as it would be without gpuscope
_chain_sitecustomize()
