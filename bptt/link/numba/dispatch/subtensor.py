"""Indexing lowerings.

numba neither checks bounds nor supports most of NumPy's advanced indexing,
so integer indices are checked here, explicitly, and advanced indexing and
writes are written as loops.

`Subtensor` lowers to an inline view expression, for example
``x[check_index_0(i, x.shape[0]), 1:np.int64(n)]``, where ``check_index_<axis>``
(an intrinsic, link/numba/alloc_runtime.py) raises IndexError for an
out-of-bounds index and wraps a negative one. `IncSubtensor` (set or inc) writes
through the same view of its output (a copy of x unless inplace)::

    sw = c_copy(x)
    sw_r = sw[1:3]
    add_into_call(sw_r, region_values(sw_r, y))     (copy_into_call to set)

the loop being a runtime function compiled once per dtype and rank
(link/numba/region_runtime.py); a scalar y fills the view inline (`add_into`,
`broadcast_into`) and a single element is one scalar assignment. An advanced
op whose index is one integer array on axis 0, the other axes whole (``W[idx]``,
its gradient), calls region_runtime.py's row helpers on x as a matrix of rows::

    c_reshape(take_rows_call(c_reshape(c_contiguous(x), (x.shape[0], x.shape[1])),
                             c_reshape(c_contiguous(idx), (idx.size,))),
              idx.shape + x.shape[1:])
    rw = c_copy(x); write_rows_call(<rw as rows>, <idx as a vector>, <y as rows>, 1)

The other advanced ops, and IncSubtensor of a 0-d x, lower to one generated
kernel each (names as in the source)::

    prelude   i<d>        checked integer index of dimension d of x
              st<d>, sp<d>, l<d>   start, step and length of the slice of dimension d
              b<j>        size of broadcast dimension j of the index arrays
    gather    out = alloc_empty(region shape)
              for j0 in range(b0): ...                 (one loop per region dimension:
                  a<d> = checked array element          j<t> broadcast, q<d> sliced)
                  for q2 in range(l2):
                      out[j0, q2] = x[i0, a1, st2 + q2 * sp2]
    scatter   out = a copy of x; check y's shape against the region
              same loops:  out[i0, a1, st2 + q2 * sp2] (+)= y[j0 * g0, q2 * g1]
              (g<i> is 0 where y broadcasts along its dimension i)
"""
from __future__ import annotations

from ....tensor.subtensor import (ARRAY, AdvancedIncSubtensor, AdvancedSubtensor, FULL,
                                  IncSubtensor, SliceSpec, Subtensor, layout)
from ..registry import Kernel, np_dtype, numba_funcify

def _part(p, ref):
    """Source of a slice part: '' for None, a literal, or an index input."""
    if p is None:
        return ""
    if isinstance(p, int):
        return str(p)
    return f"np.int64({ref(p[1])})"


@numba_funcify.register(Subtensor)
def _subtensor(op, node, ctx):
    return _view(op.idx_list, node.inputs[0].ndim, "{0}", lambda k: "{%d}" % (k + 1))


def _view(idx_list, ndim, base, ref):
    """Source of the basic-indexing view ``base[idx_list]``; `ref(k)` names index input k."""
    lay = layout(idx_list, ndim)
    items = []
    for d, e in enumerate(lay.dims[:len(idx_list)]):
        if isinstance(e, SliceSpec):
            parts = [_part(p, ref) for p in e]
            items.append(":".join(parts if e.step is not None else parts[:2]))
        else:
            check = f"check_index_{d}"   # an intrinsic (alloc_runtime.py)
            src = str(e) if isinstance(e, int) else ref(e[1])
            items.append(f"{check}({src}, {base}.shape[{d}])")
    if not items:
        return base
    return base + "[" + ", ".join(items) + "]"


def _check_lines(var, d, ind):
    return [f"{ind}if {var} < -x.shape[{d}] or {var} >= x.shape[{d}]:",
            f"{ind}    raise IndexError('index out of bounds for axis {d}')",
            f"{ind}if {var} < 0:",
            f"{ind}    {var} += x.shape[{d}]"]


class _KernelWriter:
    """Builds the source of a gather (`mode` 'get') or scatter ('set', 'inc') kernel.

    Every element is moved by a scalar assignment inside explicit loops: numba
    compiles array-to-array ``setitem`` slowly (seconds the first time in a
    process), scalar loops quickly.
    """

    def __init__(self, op, node, mode):
        self.mode = mode
        self.inplace = getattr(op, "inplace", False)
        self.x = node.inputs[0]
        self.y = node.inputs[1] if mode != "get" else None
        index = node.inputs[1 + (mode != "get"):]
        self.index_ndim = [v.ndim for v in index]
        self.lay = layout(op.idx_list, self.x.ndim)
        self.arrays = [(d, e[1]) for d, e in enumerate(self.lay.dims)
                       if isinstance(e, tuple) and not isinstance(e, SliceSpec) and e[0] == "a"]
        self.nb = max((self.index_ndim[k] for _, k in self.arrays), default=0)
        self.lines = []

    def source(self):
        params = ["x"] + (["y"] if self.y is not None else [])
        params += [f"p{k}" for k in range(len(self.index_ndim))]
        self._emit(f"def {{name}}({', '.join(params)}):")
        if self.x.ndim == 0:
            self._scalar_x()
        else:
            self._prelude()
            self._body()
        return "\n".join(self.lines) + "\n"

    def _emit(self, *lines):
        self.lines.extend(lines)

    def _prelude(self):
        ind = "    "
        for d, e in enumerate(self.lay.dims):
            if isinstance(e, SliceSpec):
                if e != FULL:
                    parts = ["None" if p is None else _part(p, lambda k: f"p{k}") for p in e]
                    self._emit(f"{ind}st{d}, en{d}, sp{d} = slice({', '.join(parts)})"
                               f".indices(x.shape[{d}])",
                               f"{ind}l{d} = len(range(st{d}, en{d}, sp{d}))")
            elif isinstance(e, int) or e[0] == "s":
                src = str(e) if isinstance(e, int) else f"p{e[1]}"
                self._emit(f"{ind}i{d} = np.int64({src})", *_check_lines(f"i{d}", d, ind))
        for _, k in self.arrays:
            for t in range(self.index_ndim[k]):
                self._emit(f"{ind}f{k}_{t} = 1 if p{k}.shape[{t}] != 1 else 0")
        for j in range(self.nb):
            self._emit(f"{ind}b{j} = 1")
            for _, k in self.arrays:
                t = j - (self.nb - self.index_ndim[k])
                if t >= 0:
                    self._emit(
                        f"{ind}if p{k}.shape[{t}] != 1:",
                        f"{ind}    if b{j} != 1 and b{j} != p{k}.shape[{t}]:",
                        f"{ind}        raise IndexError('shape mismatch: indexing arrays could "
                        "not be broadcast together')",
                        f"{ind}    b{j} = p{k}.shape[{t}]")

    def _size(self, d):
        return f"x.shape[{d}]" if self.lay.dims[d] == FULL else f"l{d}"

    def _region(self):
        """(size, loop variable or '0') of every dimension of the region ``x[idx]``."""
        dims = []
        for o in self.lay.out:
            if o == "adv":
                dims.extend((f"b{j}", f"j{j}") for j in range(self.nb))
            elif o == "new":
                dims.append(("1", "0"))
            else:
                dims.append((self._size(o[1]), f"q{o[1]}"))
        return dims

    def _x_position(self):
        items = []
        for d, e in enumerate(self.lay.dims):
            if isinstance(e, SliceSpec):
                items.append(f"q{d}" if e == FULL else f"st{d} + q{d} * sp{d}")
            else:
                items.append(f"a{d}" if isinstance(e, tuple) and e[0] == "a" else f"i{d}")
        return ", ".join(items)

    def _loops(self, region):
        """Open one loop per region dimension and read the index arrays once the
        broadcast loops are open. Returns the indentation of the loop body."""
        ind = "    "
        last_j = f"j{self.nb - 1}"
        if not self.nb:
            self._read_arrays(ind)
        for size, var in region:
            if var == "0":
                continue
            self._emit(f"{ind}for {var} in range({size}):")
            ind += "    "
            if var == last_j:
                self._read_arrays(ind)
        return ind

    def _read_arrays(self, ind):
        for d, k in self.arrays:
            nk = self.index_ndim[k]
            pos = ", ".join(f"j{self.nb - nk + t} * f{k}_{t}" for t in range(nk))
            src = f"p{k}[{pos}]" if nk else f"p{k}"
            self._emit(f"{ind}a{d} = np.int64({src})", *_check_lines(f"a{d}", d, ind))

    def _body(self):
        region = self._region()
        target = self._x_position()
        if self.mode == "get":
            if not region:
                self._emit(f"    return x[{target}]")
                return
            shape = "".join(size + ", " for size, _ in region)
            self._emit(f"    out = alloc_empty(({shape}), x.dtype)")
            ind = self._loops(region)
            self._emit(f"{ind}out[{', '.join(v for _, v in region)}] = x[{target}]",
                       "    return out")
            return
        # an inplace op's x is a buffer nothing else reads (inplace_inc_subtensor)
        self._emit("    out = x" if self.inplace else "    out = c_copy(x)")
        self._check_y([size for size, _ in region])
        ind = self._loops(region)
        sign = "=" if self.mode == "set" else "+="
        self._emit(f"{ind}out[{target}] {sign} {self._y_at(region)}", "    return out")

    def _check_y(self, sizes):
        ny = self.y.ndim
        for i in range(ny):
            size = sizes[len(sizes) - ny + i]
            self._emit(f"    if y.shape[{i}] != 1 and y.shape[{i}] != {size}:",
                       "        raise ValueError('shape mismatch: the values cannot be "
                       "broadcast to the indexed region')",
                       f"    g{i} = 1 if y.shape[{i}] != 1 else 0")

    def _y_at(self, region):
        ny = self.y.ndim
        if ny == 0:
            return "y"
        items = []
        for i, (_, var) in enumerate(region[len(region) - ny:]):
            items.append("0" if var == "0" else f"{var} * g{i}")
        return f"y[{', '.join(items)}]"

    def _scalar_x(self):
        # A 0-d x can only gain new axes (x[None], x[..., None]): the region is all 1s.
        k = len(self.lay.out)
        if self.mode == "get":
            self._emit(f"    return alloc_full({(1,) * k!r}, x, {np_dtype(self.x.dtype)})")
            return
        self._check_y(["1"] * k)
        value = "y" if self.y.ndim == 0 else "y.ravel()[0]"
        dt = np_dtype(self.x.dtype)
        self._emit(f"    return {dt}({value})" if self.mode == "set"
                   else f"    return {dt}(x + {value})")


def _rows_index(op, node, n_values):
    """True for ``x[idx]`` with one integer array on axis 0 and every other axis whole
    (an embedding, bincount): a call of the row helpers of region_runtime.py."""
    lead = list(op.idx_list)
    while lead and lead[-1] == FULL:
        lead.pop()
    return lead == [ARRAY] and node.inputs[0].ndim >= 1 and node.inputs[1 + n_values].ndim >= 1


def _width(x, ndim):
    """Source of the size of a row of array `x` (of `ndim` dimensions) along axis 0."""
    return " * ".join(f"{x}.shape[{d}]" for d in range(1, ndim)) or "1"


def _rows_of(x, ndim):
    """Source of the C-contiguous matrix of rows of array `x`."""
    return f"c_reshape(c_contiguous({x}), ({x}.shape[0], {_width(x, ndim)}))"


def _vector(idx):
    return f"c_reshape(c_contiguous({idx}), ({idx}.size,))"


@numba_funcify.register(AdvancedSubtensor)
def _advanced_subtensor(op, node, ctx):
    if _rows_index(op, node, 0):
        rows = f"take_rows_call({_rows_of('{0}', node.inputs[0].ndim)}, {_vector('{1}')})"
        return f"c_reshape({rows}, {{1}}.shape + {{0}}.shape[1:])"
    return Kernel(_KernelWriter(op, node, "get").source(), "advanced_subtensor")


@numba_funcify.register(IncSubtensor)
def _inc_subtensor(op, node, ctx):
    x, y = node.inputs[:2]
    if x.ndim == 0:
        return _inc_kernel(op, node)
    out = ctx.fresh("sw")
    region = _view(op.idx_list, x.ndim, out, lambda k: "{%d}" % (k + 2))
    # an inplace op's x is a buffer nothing else reads (inplace_inc_subtensor)
    lines = [f"{out} = {{0}}" if op.inplace else f"{out} = c_copy({{0}})"]
    if sum(not isinstance(e, SliceSpec) for e in op.idx_list) == x.ndim:
        lines.append(f"{region} {'=' if op.set_instead_of_inc else '+='} {{1}}")   # one element
    elif y.ndim == 0:
        lines.append(f"{'broadcast_into' if op.set_instead_of_inc else 'add_into'}({region}, {{1}})")
    else:
        # the loop is a runtime function (region_runtime.py), one compile per dtype and rank
        call = "copy_into_call" if op.set_instead_of_inc else "add_into_call"
        lines += [f"{out}_r = {region}", f"{call}({out}_r, region_values({out}_r, {{1}}))"]
    return "\n".join(lines + [out])


@numba_funcify.register(AdvancedIncSubtensor)
def _inc_kernel(op, node, ctx=None):
    x, y = node.inputs[:2]
    if ctx is not None and _rows_index(op, node, 1) and y.ndim < node.inputs[2].ndim + x.ndim:
        return _rows_write(op, node, ctx)
    mode = "set" if op.set_instead_of_inc else "inc"
    name = type(op).__name__.replace("Inc", mode.capitalize()).lower()
    return Kernel(_KernelWriter(op, node, mode).source(), name)


def _rows_write(op, node, ctx):
    """``out[idx] (+)= y`` by the row helper, on the matrix of rows of the output; `y`
    as rows of the region (a copy where it broadcasts), a scalar as a ``(1, 1)`` array."""
    x, y, idx = node.inputs
    out = ctx.fresh("rw")
    # an inplace op's x is a buffer nothing else reads (inplace_inc_subtensor)
    lines = [f"{out} = c_contiguous({{0}})" if op.inplace else f"{out} = c_copy({{0}})"]
    rows = _rows_of(out, x.ndim)
    if y.ndim:
        values = (f"c_reshape(c_contiguous(rows_values({out}, {{2}}, {{1}})), "
                  f"({{2}}.size, {_width(out, x.ndim)}))")
    else:
        values = f"alloc_full((1, 1), {{1}}, {out}.dtype)"
    add = 0 if op.set_instead_of_inc else 1
    return "\n".join(lines + [f"write_rows_call({rows}, {_vector('{2}')}, {values}, {add})", out])
