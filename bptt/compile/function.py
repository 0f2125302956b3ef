"""`function`: compile a graph into a callable.

Building (`Function.__init__`):

1. normalise `outputs` and `updates`; apply `givens` to both;
2. collect the shared variables the graph reads (they become hidden inputs
   after the explicit ones) and add their default updates, until no new
   shared variable appears;
3. check for unused inputs; build a `FunctionGraph` whose outputs are the
   function's outputs followed by the update values; rewrite it;
4. link it in the chosen mode (the numba linker compiles here, not at the
   first call), and prepare one converter per input. With
   ``compile_in_background`` (the default) and a core idle for it, a NUMBA
   graph the disk cache does not hold is linked in PY mode and compiled by a
   child process; the first call after the child is done switches to the
   compiled code (`background`).

Calling (`Function.__call__`): each argument goes through its input's
converter (an array of the right dtype and number of dimensions passes
unchanged; anything else is converted when that loses nothing, or rejected
with an error naming the input and what was expected and received), the
linked graph runs once and computes every output and every update value,
and only then are the updates written. A call that raises therefore leaves
every shared variable as it was. The executor guarantees that no returned
array shares memory with an argument, a shared value or another output.

Threads: a function with updates holds the locks of the shared variables it
updates (`bptt.tensor.sharedvar.Container`) from reading them to writing
their new values, so concurrent calls lose no update; a function without updates
takes no lock.
"""
from __future__ import annotations

import time
import warnings

import numpy as np

from ..config import config
from ..errors import UnusedInputError
from ..graph.basic import Constant, Variable
from ..graph.fg import FunctionGraph
from ..graph.replace import clone_replace
from ..graph.traversal import ancestors, graph_inputs
from ..tensor.assertion import check_shape
from ..tensor.type import TensorType, as_tensor_variable, constant
from . import background
from .io import split_inputs
from .mode import excluded_rewrites, link, memo_key, optimize, recall, resolve_mode
from .profiling import FunctionProfile
from ..tensor.sharedvar import SharedVariable


def _describe(v):
    return v.describe() if isinstance(v, Variable) else repr(v)


def _pairs(mapping, what):
    if mapping is None:
        return []
    pairs = list(mapping.items()) if hasattr(mapping, "items") else list(mapping)
    for pair in pairs:
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise TypeError(f"{what} must be a dict or a list of (variable, value) pairs, "
                            f"got the entry {pair!r}")
    return [tuple(p) for p in pairs]


# -- updates -------------------------------------------------------------------
def _update_pairs(updates):
    out, seen = [], set()
    for var, new in _pairs(updates, "updates"):
        if not isinstance(var, SharedVariable):
            raise TypeError(f"updates: {_describe(var)} is not a shared variable; only "
                            "bptt.shared variables can be updated")
        if var in seen:
            raise ValueError(f"updates: {var.describe()} is updated twice")
        seen.add(var)
        out.append((var, _as_value_of(var, new, f"the update of {var.describe()}")))
    return out


def _as_value_of(var, new, what):
    """`new` as a variable that can stand for `var` (same dtype and ndim, compatible shape).

    Non-symbolic values become constants of `var`'s dtype when the conversion
    loses nothing; a symbolic value of another dtype is an error that says
    how to cast it.
    """
    if not isinstance(new, Variable):
        new = as_tensor_variable(new)
    if new.type == var.type:
        return new
    if not (isinstance(var.type, TensorType) and isinstance(new.type, TensorType)):
        raise TypeError(f"{what} has type {new.type}, expected {var.type}")
    if new.dtype != var.dtype:
        if isinstance(new, Constant):
            # Python floats are weak (NEP 50): they may round to a float32 variable.
            weak = getattr(new, "weak", False) and var.dtype.startswith("float")
            new = constant(var.type.filter(new.data, allow_downcast=weak, what=what))
        else:
            raise TypeError(f"{what} has dtype {new.dtype}; it must have {var.dtype}. "
                            f"Cast it with .astype('{var.dtype}')")
    if new.ndim != var.ndim:
        raise TypeError(f"{what} has {new.ndim} dimension(s) ({new.type}); "
                        f"{var.describe()} has {var.ndim}")
    for i, (a, b) in enumerate(zip(var.type.shape, new.type.shape)):
        if a is not None and b is not None and a != b:
            raise ValueError(f"{what} has static shape {new.type.shape}, incompatible with "
                             f"{var.describe()} in dimension {i}")
    # Compiled code relies on the static sizes of `var`'s type: a value whose type does
    # not prove them is checked when the function runs, before any update is written.
    return check_shape(new, var.type.shape, what)


# -- givens --------------------------------------------------------------------
def _given_pairs(givens, inputs):
    pairs = []
    for old, new in _pairs(givens, "givens"):
        if not isinstance(old, Variable) or isinstance(old, Constant):
            raise TypeError(f"givens: a key must be a symbolic variable, got {_describe(old)}")
        if old in inputs:
            raise ValueError(f"givens: {old.describe()} is an input of the function; replacing "
                             "an input would have no effect. Remove it from the inputs list")
        pairs.append((old, _as_value_of(old, new, f"givens: the value for {old.describe()}")))
    return pairs


def _replace(targets, givens):
    return clone_replace(targets, givens) if givens and targets else list(targets)


# -- inputs --------------------------------------------------------------------
def _input_converter(var, what, allow_downcast):
    """A function turning one argument into a valid value of `var`'s type, or raising."""
    t = var.type
    if not isinstance(t, TensorType):
        return lambda value: t.filter(value, strict=False, allow_downcast=allow_downcast)
    floatx_scalar = allow_downcast is None and t.dtype == config.floatX

    def convert(value):
        if floatx_scalar and isinstance(value, float):
            value = np.asarray(value, dtype=t.dtype)  # Theano: Python floats may round to floatX
        try:
            return t.filter(value, strict=False, allow_downcast=allow_downcast, what=what)
        except (TypeError, ValueError) as exc:
            msg = f"{what}: expected {_expected(t)}, got {_received(value)}"
            if _fits_shape(value, t):  # then the dtype conversion failed: say why
                msg += "; " + str(exc).removeprefix(f"{what}: ")
            raise type(exc)(msg) from exc
    return convert


def _fits_shape(value, t):
    try:
        shape = np.shape(value)
    except Exception:  # noqa: BLE001  (ragged nested lists)
        return True
    return len(shape) == t.ndim and all(s is None or s == n for s, n in zip(t.shape, shape))


def _fast_check(k, t):
    """Source of a test that argument ``x<k>`` already is a valid value of `t` (or None)."""
    if not isinstance(t, TensorType):
        return None
    conds = [f"type(x{k}) is ndarray", f"x{k}.dtype is dt{k}", f"x{k}.ndim == {t.ndim}"]
    conds += [f"x{k}.shape[{i}] == {s}" for i, s in enumerate(t.shape) if s is not None]
    return " and ".join(conds)


def _call_glue(in_types, n_shared, n_outputs, n_updates, result):
    """Source of ``run(args)``: convert arguments, run the executor, write updates.

    For one vector input, one shared variable with an update and one output::

        def run(args):
            x0, = args
            if not (type(x0) is ndarray and x0.dtype is dt0 and x0.ndim == 1):
                x0 = convert0(x0)
            with locks:
                r = execute(x0, s0[0])
                u0[0] = r[1]
            return r[0]

    Updates are written only after ``execute`` returned, so a call that
    raises changes no shared variable. ``locks`` holds the locks of the
    updated variables (`_Locks`, taken in creation order): calls from several threads read,
    compute and write them one at a time, so no update is lost. A function
    without updates takes no lock, and its calls run in parallel.
    """
    xs = [f"x{k}" for k in range(len(in_types))]
    lines = ["def run(args):"]
    if xs:
        lines.append(f"    {', '.join(xs)}, = args")
    for k, t in enumerate(in_types):
        check = _fast_check(k, t)
        if check is None:
            lines.append(f"    x{k} = convert{k}(x{k})")
        else:
            lines += [f"    if not ({check}):", f"        x{k} = convert{k}(x{k})"]
    ind = "    "
    if n_updates:
        lines.append("    with locks:")
        ind = "        "
    lines.append(f"{ind}r = execute({', '.join(xs + [f's{k}[0]' for k in range(n_shared)])})")
    lines += [f"{ind}u{k}[0] = r[{n_outputs + k}]" for k in range(n_updates)]
    lines.append({"single": "    return r[0]", "none": "    return None",
                  "list": f"    return r[:{n_outputs}]"}[result])
    return "\n".join(lines) + "\n"


class _Locks:
    """Several locks as one context manager, taken in order and released in reverse.

    One ``with`` statement of many locks would nest a block per lock, and Python
    refuses more than 20 nested blocks: a training step with Adam updates 3 shared
    variables per parameter, and more than 20 locks are common.
    """

    def __init__(self, locks):
        self.locks = tuple(locks)

    def __enter__(self):
        taken = []
        try:
            for lock in self.locks:
                lock.acquire()
                taken.append(lock)
        except BaseException:
            for lock in reversed(taken):
                lock.release()
            raise

    def __exit__(self, *exc):
        for lock in reversed(self.locks):
            lock.release()


def _expected(t):
    dims = ", ".join("?" if s is None else str(s) for s in t.shape)
    return f"dtype {t.dtype} with {t.ndim} dimension(s) and shape ({dims}{',' if t.ndim == 1 else ''})"


def _received(value):
    if isinstance(value, np.ndarray):
        return f"a {value.dtype} array of shape {value.shape}"
    what = f"a value of type {type(value).__name__}"
    try:
        arr = np.asarray(value)
    except Exception:  # noqa: BLE001  (only for the message)
        return what
    if arr.dtype == object:
        return what
    return f"{what} (as an array: {arr.dtype}, shape {arr.shape})"


class Function:
    """A compiled function. Call it with one value per input (positionally or
    by input name); it returns one output, a list, or None for no outputs.

    Attributes
    ----------
    inputs : list of Variable
    fgraph : FunctionGraph
        The rewritten graph: explicit inputs, then shared variables; outputs,
        then update values.
    profile : FunctionProfile or None
    running_mode : str
        "NUMBA" or "PY": how calls run now ("PY" for a NUMBA function while its
        background compile is under way).
    """

    def __init__(self, inputs, outputs, updates, givens, mode, allow_input_downcast,
                 on_unused_input, name, profile, no_default_updates=False, input_names=None,
                 defaults=None, compile_in_background=None):
        self.name = name
        self.mode = resolve_mode(mode)
        self._background = (config.compile_in_background if compile_in_background is None
                            else bool(compile_in_background))
        self.allow_input_downcast = allow_input_downcast
        self.inputs = self._check_inputs(inputs)
        self.single = outputs is not None and not isinstance(outputs, (list, tuple))
        self.no_outputs = outputs is None
        outs = [] if outputs is None else ([outputs] if self.single else list(outputs))
        outs = [o if isinstance(o, Variable) else as_tensor_variable(o) for o in outs]
        given = _given_pairs(givens, self.inputs)
        pairs = _update_pairs(updates)
        targets = _replace(outs + [v for _, v in pairs], given)
        outs, pairs = targets[:len(outs)], [(k, v) for (k, _), v in zip(pairs, targets[len(outs):])]
        self._graph = (outs, pairs)   # as given, for pickling (see "Pickling" below)
        pairs, shared_vars = self._add_default_updates(outs, pairs, given, no_default_updates)
        self._check_unused(outs + [v for _, v in pairs], on_unused_input)
        self.shared = shared_vars
        self.update_vars = [k for k, _ in pairs]
        self.n_outputs = len(outs)
        self.profile = FunctionProfile(name) if profile else None
        self._defaults = dict(defaults or {})
        self._build(outs, pairs)
        self._index.update({n: i for i, n in (input_names or {}).items()})
        if self.running_mode != self.mode:
            self._submit_background()

    def _check_inputs(self, inputs):
        inputs = list(inputs)
        for i, v in enumerate(inputs):
            if not isinstance(v, Variable):
                raise TypeError(f"function input {i} is a {type(v).__name__}, not a symbolic "
                                "variable")
            if isinstance(v, SharedVariable):
                raise TypeError(f"function input {i}, {v.describe()}, is a shared variable; "
                                "shared variables are implicit inputs, remove it from the list")
            if isinstance(v, Constant):
                raise TypeError(f"function input {i} is a constant; inputs must be variables")
        if len(set(inputs)) != len(inputs):
            dup = next(v for v in inputs if inputs.count(v) > 1)
            raise ValueError(f"function: {dup.describe()} appears twice in the inputs list")
        return inputs

    def _add_default_updates(self, outs, pairs, given, no_default_updates=False):
        """Add default updates of the shared variables read, until none is new.

        ``no_default_updates`` True adds none; a list adds none for its variables.
        """
        explicit = {k for k, _ in pairs}
        skip = set(no_default_updates) if isinstance(no_default_updates, (list, tuple)) else set()
        while True:
            shared = _shared_inputs(outs + [v for _, v in pairs], [k for k, _ in pairs])
            if no_default_updates is True:
                return pairs, shared
            extra = [(sv, sv.default_update) for sv in shared
                     if sv.default_update is not None and sv not in explicit and sv not in skip]
            if not extra:
                return pairs, shared
            extra = _update_pairs(extra)
            values = _replace([v for _, v in extra], given)
            pairs = pairs + [(k, v) for (k, _), v in zip(extra, values)]
            explicit.update(k for k, _ in extra)

    def _check_unused(self, outputs, on_unused_input):
        if on_unused_input not in ("raise", "warn", "ignore", None):
            raise ValueError(f"on_unused_input must be 'raise', 'warn' or 'ignore', "
                             f"got {on_unused_input!r}")
        used = set(ancestors(outputs))
        for i, v in enumerate(self.inputs):
            if v not in used:
                msg = (f"function input {i}, {v.describe()}, is not used to compute any output; "
                       "remove it, or pass on_unused_input='ignore'")
                if on_unused_input in ("raise", None):
                    raise UnusedInputError(msg)
                if on_unused_input == "warn":
                    warnings.warn(msg, stacklevel=4)

    def _build(self, outs, pairs):
        self._graph_io = (self.inputs + self.shared, outs + [v for _, v in pairs])
        fgraph = FunctionGraph(*self._graph_io)
        t0 = time.perf_counter()
        key = memo_key(fgraph, self.mode)
        t1 = time.perf_counter()
        self._fgraph, self._fn = fgraph, recall(fgraph, key)   # compiled before: no rewrites
        self._rewritten, self._exclude = self._fn is None, excluded_rewrites()
        self._key, self._pending, self.running_mode = key, None, self.mode
        t2 = t3 = time.perf_counter()
        if self._fn is None and self._background and background.usable(key):
            self._fn = self._start_background(fgraph)
            self._rewritten = False
            t3 = time.perf_counter()
        elif self._fn is None:
            optimize(fgraph, self.mode)
            t3 = time.perf_counter()
            self._fn = link(fgraph, self.mode, key)
        t4 = time.perf_counter()
        if self.profile is not None:
            self.profile.rewrite_time = (t1 - t0) + (t3 - t2)   # the memo key counts here
            self.profile.link_time = (t2 - t1) + (t4 - t3)
        self._index = {v.name: i for i, v in enumerate(self.inputs) if v.name}
        self._run = self._runner(self._fn)

    def _runner(self, fn):
        """The call glue around the linked callable `fn`."""
        in_types = [v.type for v in self.inputs]
        result = "single" if self.single else ("none" if self.no_outputs else "list")
        self.glue = _call_glue(in_types, len(self.shared), self.n_outputs,
                               len(self.update_vars), result)
        ns = {"ndarray": np.ndarray, "execute": getattr(fn, "call", fn)}
        for k, v in enumerate(self.inputs):
            ns[f"convert{k}"] = _input_converter(
                v, f"{self._label()} input {k} ({v.name or 'unnamed'})", self.allow_input_downcast)
            if isinstance(v.type, TensorType):
                ns[f"dt{k}"] = v.type.numpy_dtype
        ns.update({f"s{k}": sv.container for k, sv in enumerate(self.shared)})
        ns.update({f"u{k}": sv.container for k, sv in enumerate(self.update_vars)})
        locks = sorted((sv.container for sv in self.update_vars), key=lambda c: c.order)
        ns["locks"] = _Locks([c.lock for c in locks])
        exec(compile(self.glue, f"<bptt function {self.name or ''}>", "exec"), ns)  # noqa: S102
        return ns["run"]

    # -- compiling in the background -------------------------------------------
    def _start_background(self, fgraph):
        """Rewrite and link the keyed `fgraph` in PY mode (`__init__` then queues the NUMBA
        compile); the PY callable. The un-rewritten graph is built again when it is
        needed (`_unrewritten`): one copy of the graph before the first call, not two."""
        self._fgraph = None
        optimize(fgraph, "PY")
        self.running_mode = "PY"
        return link(fgraph, "PY")

    def _unrewritten(self):
        """The function's graph as the key named it (before any NUMBA rewrite, if
        `_rewritten` is False)."""
        if self._fgraph is None:
            self._fgraph = FunctionGraph(*self._graph_io)
        return self._fgraph

    def _submit_background(self):
        """Queue the NUMBA compile; the queue pickles the function once its first call has
        returned (`background`), so neither competes with that call."""
        self._pending = background.submit(self._label(), self._key, self._pickle_state())

    def _compile_here(self, why):
        """Compile in this thread, as `bptt.function` does without the background path."""
        warnings.warn(f"{self._label()}: compiling here, not in the background: {why}",
                      RuntimeWarning, stacklevel=5)
        fgraph = self._unrewritten()
        optimize(fgraph, self.mode, self._exclude)
        self._fn, self._rewritten = link(fgraph, self.mode, self._key), True
        self._run, self.running_mode = self._runner(self._fn), self.mode

    def _adopt_compiled(self):
        """Switch to the code the finished background compile left in the disk cache."""
        with background.adoption_lock:    # two threads calling at once adopt it once
            job, self._pending = self._pending, None
            if job is None:
                return
            self._adopt(job)

    def _adopt(self, job):
        if job.unpicklable:    # an op holding a lambda, say: no child could get the graph
            self._compile_here(f"its graph does not pickle ({job.unpicklable})")
            return
        fn = recall(self._unrewritten(), self._key) if job.ok else None
        if fn is None:
            if job.ok:
                job.error = "it left no record in the disk cache"
            background.say_failed(self._label(), job)
            return
        self._fn, self._run, self.running_mode = fn, self._runner(fn), self.mode

    def wait_for_compile(self, timeout=None):
        """Block until a background compile is done and switch to its code; whether this
        function now runs compiled code (True at once for one compiled in `function`)."""
        if self._pending is not None:
            self._pending.due.set()
        if self._pending is not None and self._pending.wait(timeout):
            self._adopt_compiled()
        return self.running_mode == self.mode

    # -- calling -------------------------------------------------------------
    def _bind(self, args, kwargs):
        """Positional and keyword arguments as one list in input order."""
        n = len(self.inputs)
        if len(args) > n:
            raise TypeError(f"{self._label()} takes {n} input(s), got {len(args)}")
        values = list(args) + [None] * (n - len(args))
        filled = [True] * len(args) + [False] * (n - len(args))
        for key, val in kwargs.items():
            if key not in self._index:
                raise TypeError(f"{self._label()} has no input named {key!r}")
            i = self._index[key]
            if filled[i]:
                raise TypeError(f"{self._label()}: input {key!r} given twice")
            values[i], filled[i] = val, True
        for i, ok in enumerate(filled):
            if not ok and i in self._defaults:
                values[i] = self._defaults[i]
            elif not ok:
                raise TypeError(f"{self._label()}: missing a value for input {i} "
                                f"({self.inputs[i].describe()})")
        return values

    def _label(self):
        return f"function {self.name!r}" if self.name else "function"

    def __call__(self, *args, **kwargs):
        if kwargs or len(args) != len(self.inputs):
            args = self._bind(args, kwargs)
        job = self._pending
        if job is not None:
            if job.done.is_set():
                self._adopt_compiled()
            job.calling = True
        t0 = time.perf_counter() if self.profile is not None else 0.0
        try:
            out = self._run(args)
        except Exception as exc:
            exc.add_note(f"while calling {self._label()}")
            raise
        finally:
            if job is not None:
                job.due.set()    # the queue may hand the function to its child now
        if self.profile is not None:
            self.profile.record(time.perf_counter() - t0)
        return out

    @property
    def fgraph(self):
        """The rewritten graph (rewritten now if the graph memo skipped the rewrites)."""
        fgraph = self._unrewritten()
        if not self._rewritten:
            optimize(fgraph, self.mode, self._exclude)  # as the key saw the config
            self._rewritten = True
        return fgraph

    def debugprint(self, file=None):
        from ..printing import debugprint

        return debugprint(self, file=file)

    # -- Pickling ------------------------------------------------------------
    # A function pickles as the graph it was given (inputs, outputs and update
    # pairs after givens, default updates included), its mode and options; its
    # shared variables travel inside that graph with their values (a container
    # pickled once per pickle, so variables shared by several functions pickled
    # together stay one variable). Unpickling compiles again, which the graph
    # memo and numba's disk cache make a load when this machine compiled the
    # graph before. copy.deepcopy uses the same path: the copy computes from
    # copies of the shared variables.
    def __reduce__(self):
        return (_unpickle_function, (type(self), self._pickle_state()))

    def _pickle_state(self):
        outs, pairs = self._graph
        outputs = None if self.no_outputs else (outs[0] if self.single else list(outs))
        pairs = [(k, v) for k, v in pairs] + [
            (sv, sv.default_update) for sv in self.update_vars if sv not in dict(pairs)]
        names = {i: n for n, i in self._index.items() if n != self.inputs[i].name}
        state = {"inputs": list(self.inputs), "outputs": outputs, "updates": pairs,
                 "mode": self.mode, "allow_input_downcast": self.allow_input_downcast,
                 "name": self.name, "profile": self.profile is not None,
                 "input_names": names, "defaults": self._defaults,
                 "compile_in_background": self._background}
        return state


def _unpickle_function(cls, state):
    f = cls.__new__(cls)
    Function.__init__(f, state["inputs"], state["outputs"], state["updates"], None,
                      state["mode"], state["allow_input_downcast"], "ignore", state["name"],
                      state["profile"], no_default_updates=True,
                      input_names=state["input_names"], defaults=state["defaults"],
                      compile_in_background=state.get("compile_in_background"))
    return f


def _shared_inputs(outputs, extra=()):
    found = [v for v in graph_inputs(outputs) if isinstance(v, SharedVariable)]
    for v in extra:
        if v not in found:
            found.append(v)
    return found


def function(inputs, outputs=None, updates=None, givens=None, mode=None,
             allow_input_downcast=None, on_unused_input="raise", name=None, profile=False,
             no_default_updates=False, compile_in_background=None):
    """Compile a graph into a callable.

    Parameters
    ----------
    inputs : list of Variable or In
        The call's arguments, in order (they may also be passed by name). An
        `In` gives an input a default value or another keyword name.
    outputs : Variable, list of Variable or None
        A single variable makes the function return one value; a list (or
        tuple) makes it return a list; None makes it return None.
    updates : dict or list of (SharedVariable, value)
        New values of shared variables. Every update is computed before any
        is written, and none is written if the call raises.
    givens : dict or list of (Variable, value)
        Substitutions applied to outputs and updates before compiling; a
        value must have its key's dtype and number of dimensions.
    mode : {'NUMBA', 'PY'} or None
        Execution mode (default ``bptt.config.mode``).
    allow_input_downcast : bool or None
        True: accept arguments whose conversion to the input dtype loses
        information. None (default): only Python floats may be rounded, to
        floatX inputs. False: no lossy conversion. Lossless conversions
        (lists, Python numbers, int64 values that fit in int32, int64 values
        that float64 holds exactly, ...) are always accepted; where the
        dtypes cannot decide (int64 to float64), the values do: 2**53 + 1
        is refused.
    on_unused_input : {'raise', 'warn', 'ignore'}
        What to do about an input no output or update depends on.
    name : str
        Used in error messages and the profile.
    profile : bool
        Record calls and time in ``f.profile``.
    no_default_updates : bool or list of SharedVariable
        True: apply no shared variable's ``default_update`` (random streams
        then repeat their draws); a list: none of those variables'.
    compile_in_background : bool or None
        NUMBA mode, graph not in the disk cache: run in PY mode at once while a
        child process compiles, and switch to the compiled code at the first
        call after it is done (`f.running_mode` tells which runs;
        `f.wait_for_compile()` waits). None: ``bptt.config.compile_in_background``
        (on by default). Compiles here instead without the disk cache or when no
        core is free for the child; a graph that does not pickle compiles in a
        call soon after its first.

    Returns
    -------
    Function
    """
    if not isinstance(inputs, (list, tuple)):
        raise TypeError("function: inputs must be a list of variables")
    inputs, names, defaults = split_inputs(inputs)
    return Function(inputs, outputs, updates, givens, mode, allow_input_downcast,
                    on_unused_input, name, profile, no_default_updates, names, defaults,
                    compile_in_background)
