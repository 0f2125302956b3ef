"""`FunctionGraph`: a graph with fixed inputs and outputs that rewrites can edit.

It owns its nodes: every variable between the inputs and outputs is known,
with its *clients* (the ``(node, i)`` pairs that read it; the pseudo-node
``"output"`` marks a graph output). `replace` redirects all clients of one
variable to another, which is how every rewrite changes a graph.
"""
from __future__ import annotations

from .basic import Constant
from .replace import clone_get_equiv
from .traversal import toposort


class MissingInputError(ValueError):
    """A graph needs a variable that was not given as an input."""


class FunctionGraph:
    """Outputs computed from inputs, with client bookkeeping for rewrites.

    Parameters
    ----------
    inputs, outputs : list of Variable
    clone : bool
        Work on a copy (default) so rewrites leave the caller's graph intact.

    ``excluded_passes`` names the rewrite passes the pipeline skips on this
    graph (set by the pipeline); a rewrite whose result depends on a later
    pass running reads it.
    """

    excluded_passes = ()

    def __init__(self, inputs, outputs, clone=True):
        inputs, outputs = list(inputs), list(outputs)
        if clone:
            equiv = clone_get_equiv(inputs, outputs)
            inputs = [equiv[v] for v in inputs]
            outputs = [equiv[v] for v in outputs]
            self.equiv = equiv
        else:
            self.equiv = None
        self.inputs = inputs
        self.outputs = outputs
        self.clients = {}
        self.apply_nodes = set()
        self.variables = set()
        for v in inputs:
            self._add_variable(v)
        for i, out in enumerate(outputs):
            self._import_var(out)
            self.clients[out].append(("output", i))
        self._check_inputs()

    # -- bookkeeping -------------------------------------------------------
    def _add_variable(self, v):
        if v not in self.variables:
            self.variables.add(v)
            self.clients.setdefault(v, [])

    def _import_var(self, var):
        # The walk stops at variables the graph has (their nodes and everything upstream
        # are in it), so an edit pays for what it adds, not for the whole graph above it.
        for node in toposort([var], blockers=self.variables):
            self._import_node(node)
        self._add_variable(var)

    def _import_node(self, node):
        if node in self.apply_nodes:
            return
        self.apply_nodes.add(node)
        for i, v in enumerate(node.inputs):
            self._add_variable(v)
            self.clients[v].append((node, i))
        for out in node.outputs:
            self._add_variable(out)

    def _prune(self, var):
        """Drop `var`'s node if nothing reads it any more (dead code)."""
        node = var.owner
        if node is None or node not in self.apply_nodes:
            return
        if any(self.clients.get(o) for o in node.outputs):
            return
        self.apply_nodes.discard(node)
        for out in node.outputs:
            self.variables.discard(out)
            self.clients.pop(out, None)
        for i, inp in enumerate(node.inputs):
            cl = self.clients.get(inp)
            if cl is not None and (node, i) in cl:
                cl.remove((node, i))
                if not cl and inp not in self.inputs:
                    self._prune(inp)
                    if inp.owner is None:
                        self.variables.discard(inp)
                        self.clients.pop(inp, None)

    def _check_inputs(self):
        given = set(self.inputs)
        for v in self.variables:
            if v.owner is None and v not in given and not isinstance(v, Constant):
                user = next((n for n, _ in self.clients[v] if n != "output"), None)
                where = f" used by {user.op}" if user is not None else ""
                raise MissingInputError(
                    f"the graph needs {v.describe()}{where}, which is not among the "
                    f"inputs; pass it in the inputs list, or give it a value with givens")

    # -- editing -----------------------------------------------------------
    def change_input(self, node, i, new_var):
        """Make input `i` of `node` (or graph output `i` when node == 'output') read `new_var`."""
        if node == "output":
            old = self.outputs[i]
            self.outputs[i] = new_var
        else:
            old = node.inputs[i]
            node.inputs[i] = new_var
        if old is new_var:
            return
        self._import_var(new_var)
        self.clients[new_var].append((node, i))
        self.clients[old].remove((node, i))
        if not self.clients[old]:
            self._prune(old)

    def replace(self, var, new_var, reason=None):
        """Redirect every client of `var` to `new_var` (which must have an equal type)."""
        if var is new_var:
            return
        if var.type != new_var.type:
            raise TypeError(
                f"replace ({reason or 'no reason given'}): {var.describe()} and "
                f"{new_var.describe()} have different types")
        if var not in self.variables:
            return
        for node, i in list(self.clients[var]):
            self.change_input(node, i, new_var)

    def replace_all(self, pairs, reason=None):
        for var, new_var in pairs:
            self.replace(var, new_var, reason)

    # -- queries -----------------------------------------------------------
    def toposort(self):
        return toposort(self.outputs, blockers=self.inputs)

    def get_clients(self, var):
        return self.clients.get(var, [])

    def __repr__(self):
        return f"FunctionGraph({self.inputs} -> {self.outputs})"
