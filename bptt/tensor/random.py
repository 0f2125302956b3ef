"""Random numbers: generator variables, draw ops and `RandomStreams`.

State lives in NumPy ``Generator`` objects held by shared variables. A draw
op takes a generator and returns ``(advanced generator, sample)``. It never
changes its input generator: it draws from a copy and returns that copy, so
a graph stays a function of its inputs and the advanced state reaches the
shared variable through an update. `RandomStreams` gives each draw its own
shared generator whose ``default_update`` is the draw's advanced generator,
so a compiled function that draws advances the stream without being told
(Theano's behaviour). Inside `scan` the updates returned by `scan` must be
passed to `function`, or the draws repeat.

Each distribution is written in terms of a few ``Generator`` primitives that
numba reproduces bit for bit (``random``, ``standard_normal``, ``binomial``,
``integers``, ``permutation``), so PY and NUMBA modes draw the same numbers:

* uniform: ``low + (high - low) * random()``, in float64, then cast;
* normal: ``avg + std * standard_normal()``, in float64, then cast;
* binomial: ``binomial(n, p)`` element by element, C order;
* integers: ``integers(low, high)`` (high exclusive);
* permutation: a Fisher-Yates shuffle of ``range(n)`` (swap entry i with
  entry ``integers(0, i + 1)``, i from n - 1 down to 1), per row;
* choice: with replacement, ``integers(0, len(a))``, or with `p` the
  inverse CDF ``searchsorted(cumsum(p) / sum(p), random(), 'right')``;
  without replacement, the first entries of a permutation.

Draw ops are marked ``stateful = True``: rewrites must neither constant-fold
nor merge them (two equal draws are two different samples).

The sample's shape is `size` when it is non-empty, else the broadcast shape
of the parameters; parameters must broadcast to `size`.
"""
from __future__ import annotations

import numpy as np

# The one upward import of this module: generator state is a shared
# variable, and `SharedVariable` belongs to the compile layer.
from ..config import config
from ..graph.basic import Apply, Variable
from ..graph.op import Op
from ..graph.type import Type
from .shape import _as_shape_vector, _static_entries
from .sharedvar import SharedVariable, shared
from .type import TensorType, _check_dtype, _is_weak, as_tensor_variable, upgrade_to_float

NO_GRADIENT = ("sampling is not differentiable with respect to its parameters in bptt "
               "(no reparameterization): pass the sample in consider_constant, or write a "
               "normal draw as avg + std * normal() to differentiate through it")


class RandomGeneratorType(Type):
    """Values are ``numpy.random.Generator`` objects."""

    def filter(self, value, strict=False, allow_downcast=None, what=None):
        if isinstance(value, np.random.Generator):
            return value
        raise TypeError(f"{what or 'value'}: expected a numpy.random.Generator, "
                        f"got {type(value).__name__}")

    def __eq__(self, other):
        return type(other) is RandomGeneratorType

    def __hash__(self):
        return hash(RandomGeneratorType)

    def __repr__(self):
        return "RandomGenerator"

    def values_eq(self, a, b):
        return a.bit_generator.state == b.bit_generator.state


class RandomGeneratorVariable(Variable):
    """A symbolic random generator."""


RandomGeneratorType.variable_class = RandomGeneratorVariable


class RandomGeneratorSharedVariable(SharedVariable, RandomGeneratorVariable):
    """A shared variable holding a ``numpy.random.Generator``."""

    __hash__ = Variable.__hash__

    def __init__(self, type, value, name=None, borrow=False):
        RandomGeneratorVariable.__init__(self, type, None, None, name)
        self._init_shared(value, False, False, borrow)


def copy_generator(rng):
    """A new Generator in the same state as `rng` (its bit generator copied)."""
    bit_gen = type(rng.bit_generator)(0)
    bit_gen.state = rng.bit_generator.state
    return np.random.Generator(bit_gen)


def shuffled_range(rng, m):
    """``range(m)`` shuffled by Fisher-Yates with scalar ``integers`` draws."""
    out = np.arange(m)
    for i in range(m - 1, 0, -1):
        j = rng.integers(0, i + 1)
        out[i], out[j] = out[j], out[i]
    return out


# -- draw ops -----------------------------------------------------------------

def _size_vector(size):
    if size is None or (isinstance(size, (tuple, list)) and len(size) == 0):
        return as_tensor_variable(np.zeros(0, dtype="int64"))
    vec = _as_shape_vector(size, "size")
    if vec.type.shape[0] is None:
        raise TypeError("size: the length of the size vector must be known when the graph "
                        f"is built, got {vec.type}; pass a tuple or x.shape")
    return vec


def _broadcast_static(shapes):
    ndim = max((len(s) for s in shapes), default=0)
    padded = [(1,) * (ndim - len(s)) + tuple(s) for s in shapes]
    out = []
    for sizes in zip(*padded):
        known = [s for s in sizes if s not in (None, 1)]
        out.append(known[0] if known else (1 if all(s == 1 for s in sizes) else None))
    return tuple(out)


class RandomVariable(Op):
    """Base of draw ops: ``(rng, size, *params) -> (new rng, sample)``.

    Subclasses name their parameters in `params` (with ``"int"`` or
    ``"float"`` kinds in `kinds`) and implement `draw`, the NumPy reference
    the numba lowering mirrors.
    """

    abstract = True  # each distribution is a subclass (tests/test_op_coverage.py)

    __props__ = ("dtype",)
    stateful = True
    no_gradient = NO_GRADIENT
    default_output = 1
    params: tuple = ()
    kinds: tuple = ()

    def __init__(self, dtype):
        self.dtype = _check_dtype(dtype)

    def make_node(self, rng, size, *params):
        if not isinstance(getattr(rng, "type", None), RandomGeneratorType):
            raise TypeError(f"{self}: the first input must be a random generator variable, "
                            f"got {getattr(rng, 'type', type(rng).__name__)}")
        size = _size_vector(size)
        params = [self._check_param(name, kind, as_tensor_variable(p))
                  for name, kind, p in zip(self.params, self.kinds, params, strict=True)]
        n = size.type.shape[0]
        shape = _static_entries(size, n) if n else _broadcast_static([p.type.shape for p in params])
        shape = shape + self.extra_shape(params)
        outs = [RandomGeneratorType()(), TensorType(self.dtype, shape)()]
        return Apply(self, [rng, size, *params], outs)

    def _check_param(self, name, kind, p):
        if kind == "int" and p.dtype[0] not in "iu":
            raise TypeError(f"{self}: {name} must be an integer tensor, got {p.type}")
        if kind == "float" and p.dtype == "bool":
            raise TypeError(f"{self}: {name} must be a number, got {p.type}")
        return p

    def extra_shape(self, params):
        """Static sizes of the dimensions after the `size` ones (permutation has one)."""
        return ()

    def sample_shape(self, size, params):
        """The run-time shape of the `size` dimensions."""
        if len(size):
            return tuple(int(s) for s in size)
        return np.broadcast_shapes(*(np.shape(p) for p in params))

    def perform(self, node, inputs, output_storage):
        rng, size, *params = inputs
        rng = copy_generator(rng)
        shape = self.sample_shape(size, params)
        output_storage[0][0] = rng
        output_storage[1][0] = np.asarray(self.draw(rng, shape, *params), dtype=self.dtype)

    def draw(self, rng, shape, *params):
        """The sample, drawn from `rng` (which it advances) with shape `shape`."""
        raise NotImplementedError

    def infer_shape(self, fgraph, node, input_shapes):
        size = node.inputs[1]
        n = size.type.shape[0]
        if n:
            from .subtensor import getitem

            return [None, tuple(getitem(size, i) for i in range(n))]
        from .shape import broadcast_shapes

        return [None, broadcast_shapes(*input_shapes[2:])]


def _broadcast_param(p, shape, what):
    try:
        return np.broadcast_to(p, shape)
    except ValueError:
        raise ValueError(f"{what} of shape {np.shape(p)} does not broadcast to the "
                         f"requested size {shape}") from None


class UniformRV(RandomVariable):
    """``low + (high - low) * u`` with u uniform on [0, 1)."""

    params, kinds = ("low", "high"), ("float", "float")

    def draw(self, rng, shape, low, high):
        low, high = (_broadcast_param(np.asarray(x, "float64"), shape, "uniform: " + w)
                     for x, w in ((low, "low"), (high, "high")))
        return low + (high - low) * rng.random(shape)


class NormalRV(RandomVariable):
    """``avg + std * z`` with z standard normal."""

    params, kinds = ("avg", "std"), ("float", "float")

    def draw(self, rng, shape, avg, std):
        avg, std = (_broadcast_param(np.asarray(x, "float64"), shape, "normal: " + w)
                    for x, w in ((avg, "avg"), (std, "std")))
        return avg + std * rng.standard_normal(shape)


class BinomialRV(RandomVariable):
    """Successes in `n` trials of probability `p`, element by element."""

    params, kinds = ("n", "p"), ("int", "float")

    def draw(self, rng, shape, n, p):
        n = _broadcast_param(np.asarray(n, "int64"), shape, "binomial: n")
        p = _broadcast_param(np.asarray(p, "float64"), shape, "binomial: p")
        if not ((p >= 0) & (p <= 1)).all():
            raise ValueError("binomial: p must be in [0, 1]")
        if (n < 0).any():
            raise ValueError("binomial: n must be >= 0")
        return rng.binomial(n, p)


class IntegersRV(RandomVariable):
    """Integers uniform in [low, high) (scalar bounds)."""

    params, kinds = ("low", "high"), ("int", "int")

    def make_node(self, rng, size, low, high):
        node = super().make_node(rng, size, low, high)
        if any(p.ndim for p in node.inputs[2:]):
            raise TypeError(f"{self}: low and high must be scalars")
        return node

    def draw(self, rng, shape, low, high):
        if high <= low:
            raise ValueError(f"integers: the range [{low}, {high}) is empty")
        return rng.integers(int(low), int(high), shape)


class PermutationRV(RandomVariable):
    """Random permutations of ``range(n)``, one per element of `size`."""

    params, kinds = ("n",), ("int",)

    def make_node(self, rng, size, n):
        node = super().make_node(rng, size, n)
        if node.inputs[2].ndim:
            raise TypeError(f"{self}: n must be a scalar, got {node.inputs[2].type}")
        return node

    def extra_shape(self, params):
        return (None,)

    def draw(self, rng, shape, n):
        if n < 0:
            raise ValueError(f"permutation: n must be >= 0, got {n}")
        rows = [shuffled_range(rng, int(n)) for _ in range(int(np.prod(shape)))]
        return np.array(rows, dtype="int64").reshape(shape + (int(n),))

    def infer_shape(self, fgraph, node, input_shapes):
        from .subtensor import getitem

        size, n = node.inputs[1:]
        return [None, tuple(getitem(size, i) for i in range(size.type.shape[0])) + (n,)]


class MultinomialRV(RandomVariable):
    """Counts of `n` draws among the categories of `p`'s last axis, one count
    vector per element of `size` (or per row of `p` when `size` is empty).

    `p`'s rows are weights (non-negative, a positive sum; not necessarily
    normalised), one row for every sample or one for all. Each draw is the
    first category whose cumulative weight exceeds ``random() * sum``.
    """

    params, kinds = ("n", "p"), ("int", "float")

    def make_node(self, rng, size, n, p):
        if not isinstance(getattr(rng, "type", None), RandomGeneratorType):
            raise TypeError(f"{self}: the first input must be a random generator variable")
        n = self._check_param("n", "int", as_tensor_variable(n))
        p = self._check_param("p", "float", as_tensor_variable(p))
        if n.ndim != 0 or p.ndim == 0:
            raise TypeError(f"{self}: n must be a scalar and p have a last axis of categories, "
                            f"got {n.type} and {p.type}")
        size = _size_vector(size)
        m = size.type.shape[0]
        batch = _static_entries(size, m) if m else p.type.shape[:-1]
        sample = TensorType(self.dtype, tuple(batch) + (p.type.shape[-1],))()
        return Apply(self, [rng, size, n, p], [RandomGeneratorType()(), sample])

    def sample_shape(self, size, params):
        return tuple(int(s) for s in size) if len(size) else np.shape(params[1])[:-1]

    def draw(self, rng, shape, n, p):
        p = np.asarray(p, "float64")
        k, rows = p.shape[-1], int(np.prod(shape))
        flat = p.reshape(-1, k)
        if flat.shape[0] not in (1, rows):
            raise ValueError(f"multinomial: p has {flat.shape[0]} rows for {rows} samples; "
                             "give one row, or one per sample")
        if n < 0:
            raise ValueError(f"multinomial: n must be >= 0, got {n}")
        out = np.zeros((rows, k), dtype="int64")
        for r in range(rows):
            row = flat[r if flat.shape[0] > 1 else 0]
            cdf = np.cumsum(row)
            if k == 0 or (row < 0).any() or not cdf[-1] > 0:
                raise ValueError("multinomial: each row of p must be non-negative with a "
                                 "positive sum")
            for _ in range(int(n)):
                u, j = rng.random() * cdf[-1], 0
                while j < k - 1 and cdf[j] <= u:
                    j += 1
                out[r, j] += 1
        return out.reshape(tuple(shape) + (k,))

    def infer_shape(self, fgraph, node, input_shapes):
        from .subtensor import getitem

        size, p_shape = node.inputs[1], input_shapes[3]
        m = size.type.shape[0]
        batch = tuple(getitem(size, i) for i in range(m)) if m else tuple(p_shape[:-1])
        return [None, batch + (p_shape[-1],)]


class ChoiceRV(RandomVariable):
    """Entries of `a` (or of ``range(a)`` for a scalar `a`), optionally weighted by `p`."""

    __props__ = ("dtype", "replace", "weighted")
    params, kinds = ("a", "p"), ("any", "float")

    def __init__(self, dtype, replace=True, weighted=False):
        super().__init__(dtype)
        self.replace, self.weighted = bool(replace), bool(weighted)
        if self.weighted and not self.replace:
            raise NotImplementedError("choice: p with replace=False is not supported")

    def make_node(self, rng, size, a, p=None):
        a = as_tensor_variable(a)
        if a.ndim > 1 or (a.ndim == 0 and a.dtype[0] not in "iu"):
            raise TypeError(f"choice: a must be an integer scalar or a vector, got {a.type}")
        ins = [a] + ([as_tensor_variable(p)] if self.weighted else [])
        if self.weighted and ins[1].ndim != 1:
            raise TypeError(f"choice: p must be a vector, got {ins[1].type}")
        if not isinstance(getattr(rng, "type", None), RandomGeneratorType):
            raise TypeError("choice: the first input must be a random generator variable")
        size = _size_vector(size)
        shape = _static_entries(size, size.type.shape[0])
        return Apply(self, [rng, size, *ins], [RandomGeneratorType()(), TensorType(self.dtype, shape)()])

    def sample_shape(self, size, params):
        return tuple(int(s) for s in size)

    def draw(self, rng, shape, a, p=None):
        m = int(a) if np.ndim(a) == 0 else len(a)
        total = int(np.prod(shape))
        if self.weighted:
            if len(p) != m or (p < 0).any() or not p.sum() > 0:
                raise ValueError(f"choice: p must have {m} non-negative entries with a "
                                 "positive sum")
            cdf = np.cumsum(np.asarray(p, "float64"))
            cdf /= cdf[-1]
            idx = np.searchsorted(cdf, rng.random(total), side="right")
        elif self.replace:
            if m <= 0:
                raise ValueError("choice: cannot choose from an empty population")
            idx = rng.integers(0, m, total)
        else:
            if total > m:
                raise ValueError(f"choice: cannot take {total} samples without replacement "
                                 f"from {m} values")
            idx = shuffled_range(rng, m)[:total]
        return (idx if np.ndim(a) == 0 else a[idx]).reshape(shape)

    def infer_shape(self, fgraph, node, input_shapes):
        from .subtensor import getitem

        size = node.inputs[1]
        return [None, tuple(getitem(size, i) for i in range(size.type.shape[0]))]


# -- RandomStreams --------------------------------------------------------------

def _float_dtype(dtype, *params):
    """`dtype`, or floatX promoted with the non-weak parameters' float dtypes."""
    if dtype is not None:
        return _check_dtype(dtype)
    strong = [upgrade_to_float(p.dtype) for p in params if not _is_weak(p)]
    return np.result_type(config.floatX, *strong).name


class RandomStreams:
    """A source of random variables with Theano's ``RandomStreams`` interface.

    Each draw gets its own shared ``numpy.random.Generator``, seeded from a
    ``numpy.random.SeedSequence`` of `seed` in the order the draws were made,
    so the same seed and the same sequence of draws give the same numbers in
    every process and mode.

    Every drawing method takes `size` (a tuple of ints or scalar variables,
    or an int vector such as ``x.shape``; ``()`` means the broadcast shape of
    the parameters), the distribution's parameters (numbers or tensors that
    broadcast to `size`), `dtype`, and keyword-only `ndim` (checked against
    the sample's number of dimensions, as Theano allowed). Each returns the
    sample; its generator's ``default_update`` advances the stream whenever a
    compiled function draws. Sampling has no gradient.

    Parameters
    ----------
    seed : int or None
        None seeds from the operating system's entropy.

    Examples
    --------
    >>> import bptt, bptt.tensor as T
    >>> srng = bptt.RandomStreams(1234)
    >>> p = T.dvector("p")
    >>> h = srng.binomial(size=p.shape, n=1, p=p, dtype="float64")
    """

    def __init__(self, seed=None):
        self.default_instance_seed = seed
        self.state_updates = []
        self._seeds = np.random.SeedSequence(seed)

    def seed(self, seed=None):
        """Re-seed every generator made so far, as a new ``RandomStreams(seed)`` would."""
        self._seeds = np.random.SeedSequence(seed)
        for rng, _ in self.state_updates:
            rng.set_value(np.random.default_rng(self._seeds.spawn(1)[0]), borrow=True)

    def updates(self):
        """``(shared generator, advanced generator)`` pairs for every draw."""
        return list(self.state_updates)

    def gen(self, op, size, *params, ndim=None):
        """Apply draw `op` to a new shared generator; return the sample."""
        rng = shared(np.random.default_rng(self._seeds.spawn(1)[0]),
                     name=f"{type(op).__name__} generator", borrow=True)
        new_rng, sample = op.make_node(rng, size, *params).outputs
        if ndim is not None and sample.ndim != ndim:
            raise ValueError(f"{op}: ndim={ndim} but the sample has {sample.ndim} dimensions")
        rng.default_update = new_rng
        self.state_updates.append((rng, new_rng))
        return sample

    def uniform(self, size=(), low=0.0, high=1.0, dtype=None, *, ndim=None):
        """Uniform on [low, high)."""
        low, high = as_tensor_variable(low), as_tensor_variable(high)
        return self.gen(UniformRV(_float_dtype(dtype, low, high)), size, low, high, ndim=ndim)

    def normal(self, size=(), avg=0.0, std=1.0, dtype=None, *, ndim=None):
        """Normal with mean `avg` and standard deviation `std`."""
        avg, std = as_tensor_variable(avg), as_tensor_variable(std)
        return self.gen(NormalRV(_float_dtype(dtype, avg, std)), size, avg, std, ndim=ndim)

    def binomial(self, size=(), n=1, p=0.5, dtype="int64", *, ndim=None, prob=None):
        """Number of successes in `n` trials of probability `p` (`prob` is Theano's old name)."""
        p = p if prob is None else prob
        return self.gen(BinomialRV(dtype), size, n, p, ndim=ndim)

    def integers(self, size=(), low=0, high=2, dtype="int64", *, ndim=None):
        """Integers uniform in [low, high)."""
        return self.gen(IntegersRV(dtype), size, low, high, ndim=ndim)

    def random_integers(self, size=(), low=0, high=1, dtype="int64", *, ndim=None):
        """Integers uniform in [low, high], both ends included (Theano's function)."""
        return self.gen(IntegersRV(dtype), size, low, as_tensor_variable(high) + 1, ndim=ndim)

    def choice(self, size=(), a=2, replace=True, p=None, dtype="int64", *, ndim=None):
        """Samples from `a` (a vector, whose dtype the sample keeps) or from ``range(a)``
        (an integer), with probabilities `p` (a vector; only with replacement)."""
        a = as_tensor_variable(a)
        op = ChoiceRV(a.dtype if a.ndim else dtype, replace, p is not None)
        params = (a,) if p is None else (a, p)
        return self.gen(op, size, *params, ndim=ndim)

    def multinomial(self, size=(), n=1, pvals=(0.5, 0.5), dtype="int64", *, ndim=None):
        """Counts of `n` draws among the categories of `pvals`'s last axis: shape
        ``size + (k,)``, or ``pvals.shape`` when `size` is ``()`` (each row of a
        matrix `pvals` is then one distribution)."""
        size = () if size is None else size
        return self.gen(MultinomialRV(dtype), size, n, pvals, ndim=ndim)

    def permutation(self, size=(), n=1, dtype="int64", *, ndim=None):
        """Permutations of ``range(n)``: shape ``size + (n,)``."""
        return self.gen(PermutationRV(dtype), size, n, ndim=ndim)


__all__ = ["RandomStreams", "RandomGeneratorType", "RandomGeneratorSharedVariable",
           "RandomVariable", "UniformRV", "NormalRV", "BinomialRV", "IntegersRV",
           "ChoiceRV", "MultinomialRV", "PermutationRV", "copy_generator", "shuffled_range"]
