"""Why each Theano and Lasagne test that does not pass on bptt.compat.theano fails.

`TRIAGE` maps a test (its name, or ``Class::name`` where names repeat) to a
category and the feature, internal or bug behind it; `tabulate` turns a
`theano_tests_plugin` report into the table `run_theano_programs.py` prints.
A failure that is not triaged is reported as "not triaged" with its error,
a value mismatch as "wrong value": both need a look.

Categories:

- ``internal``: the test reads a Theano internal bptt has no counterpart for
  (its virtual machine's storage, op flags, optimizer objects); not worth a
  view because it describes Theano's implementation, not the computation;
- ``rewrite``: the test counts nodes after a Theano rewrite that bptt does
  not make (the result is right, the graph has another shape);
- ``design``: bptt differs from Theano on purpose (docs/theano.md): random
  numbers, accepting graphs Theano refused, NumPy 2;
- ``bptt bug``: a bptt behaviour to fix, with a reproducer in the report;
- ``missing``: a Theano function bptt does not provide yet (docs/theano.md);
- ``environment``: the test needs an older Python or NumPy than the venv's;
- ``gpu``: needs Theano's GPU backend.

`LASAGNE_TRIAGE` does the same for Lasagne's test suite.
"""
from __future__ import annotations

import collections

TRIAGE = {
    # -- Theano internals -------------------------------------------------------
    "test_inner_storage_leak": ("internal", "Scan.fn.input_storage (the VM's storage)"),
    "test_inplace1": ("internal", "Scan.destroy_map and In(mutable=True) (in-place VM ops)"),
    "test_inplace2": ("internal", "Scan.destroy_map (in-place VM ops)"),
    "test_inplace3": ("internal", "Scan.destroy_map (in-place VM ops)"),
    "test_memory_aliasing_updates": ("internal", "f.input_storage (the VM's storage)"),
    "test_grad_multiple_outs_some_truncate": (
        "internal", "f.maker.expanded_inputs and RandomState containers"),
    "test_grad_multiple_outs_some_uncomputable": (
        "internal", "f.maker.expanded_inputs and RandomState containers"),
    "test_remove_constants_and_unused_inputs_scan_non_seqs": (
        "internal", "Scan.inner_non_seqs (Theano's position helpers)"),
    "test_remove_constants_and_unused_inputs_scan_seqs": (
        "internal", "Scan.inner_seqs (Theano's position helpers)"),
    "test_subtensor_multiple_slices": ("internal", "Scan._scan_savemem_visited (optimizer flag)"),
    "test_scan_merge_nodes": ("internal", "scan_opt.ScanMerge (an optimizer object)"),
    "test_connection_pattern2": (
        "internal", "the node layout of Theano's gradient graph (owner.inputs[1]...)"),
    "test_foldl_memory_consumption": ("internal", "compile.pfunc and save-mem buffer sizes"),
    "test_foldr_memory_consumption": ("internal", "compile.pfunc and save-mem buffer sizes"),
    "test_reduce_memory_consumption": ("internal", "compile.pfunc and save-mem buffer sizes"),
    "test_grad_multiple_outs_taps": ("internal", "debugprint's text for Theano's op names"),
    "test_monitor_mode": ("internal", "MonitorMode's per-node hooks (Theano's VM)"),
    # -- differences by design ----------------------------------------------------
    "test_alloc_inputs3": (
        "design", "zeros_like of a specify_shape'd input is a constant (bptt folds static "
                  "shapes as it builds), so function() finds the input unused; the test then "
                  "reads Scan.inputs (the step's input list)"),
    "test_gibbs_chain": (
        "design", "compares draws with numpy.random.RandomState(seed)'s stream; bptt's random "
                  "streams are NumPy Generators (a RandomState copy would be a second PRNG)"),
    "test_simple_shared_random": (
        "design", "compares draws with numpy.random.RandomState(seed)'s stream; bptt's random "
                  "streams are NumPy Generators (a RandomState copy would be a second PRNG)"),
    "test_crash_nonseq_grad": (
        "design", "an integer sample carries no gradient in bptt (a float one's is undefined, "
                  "NullTypeGradError); Theano raised for the integer sample too"),
    "TestInconsistentBroadcast::test_raise_error": (
        "design", "expects TypeError from grad for an initial state broadcastable where the "
                  "step's output is not; bptt computes that gradient (tests/compat)"),
    "TestMissingInputError::test_raise_error": (
        "design", "expects MissingInputError for a variable read only by a scan update; bptt "
                  "passes it into the loop and updates right (tests/compat)"),
    "test_mintap_onestep": (
        "design", "'%f' % one-element array: the test needs NumPy < 2 (the value, [2], is right)"),
}

#: Theano's own skips and the tests that need its C linker.
SKIPPED = {
    "test_alloc_inputs2": "skipped by Theano (an optimization it never implemented)",
    "test_infershape_seq_shorter_nsteps": "skipped by Theano",
    "test_outputs_info_not_typed": "skipped by Theano",
    "test_speed": "needs Theano's C linker (config.cxx): a timing printout, no value "
                  "checked, of Mode(linker='cvm') and f.fn() (the VM's no-argument call)",
    "test_speed_rnn": "needs Theano's C linker (config.cxx): a timing printout, no value "
                  "checked, of Mode(linker='cvm') and f.fn() (the VM's no-argument call)",
    "test_speed_batchrnn": "needs Theano's C linker (config.cxx): a timing printout, no value "
                  "checked, of Mode(linker='cvm') and f.fn() (the VM's no-argument call)",
}


#: Why each of Lasagne's tests that does not pass on bptt.compat.theano fails (its
#: test_conv.py is not run: its NumPy reference indexes with a list of slices, which
#: NumPy 2 refuses, so the file cannot be collected).
LASAGNE_TRIAGE = {
    "test_conv_nones": ("missing", "conv2d with filter sizes unknown when the graph is built"),
    "test_get_output_for_p_float16": ("design", "float16: bptt has no float16 dtype"),
    "test_squared_error_preserve_dtype": ("design", "float16: bptt has no float16 dtype"),
    "test_multiclass_hinge_loss_invalid": (
        "design", "vector.shape[1], an index known out of bounds, raises IndexError when the "
                  "graph is built, before Lasagne's own TypeError"),
    "TestGetOutput_MergeLayer": (
        "environment", "Python 3.11's unittest.mock (the mock package is absent) reads every "
                       "attribute of the spec, running MergeLayer.output_shape, which raises"),
    "TestGetOutputShape_MergeLayer": (
        "environment", "Python 3.11's unittest.mock (the mock package is absent) reads every "
                       "attribute of the spec, running MergeLayer.output_shape, which raises"),
    "TestTPSTransformLayer": ("environment", "NumPy 2 refuses np.linspace(num=<a float>)"),
}

#: Skips of Lasagne's tests that are not a GPU's, by their reason.
LASAGNE_SKIPPED = {
    "Skipped: Old theano version": "Lasagne's probe for pool_2d with symbolic window sizes "
                                   "(ws=T.ivector()) finds bptt's takes numbers",
}


def classify(test_id, outcome, triage=None, skipped=None):
    """(category, detail) for one test of a report (`TRIAGE` and `SKIPPED` by default;
    a key may be the test's name, without parameters, or its class)."""
    triage = TRIAGE if triage is None else triage
    skipped = SKIPPED if skipped is None else skipped
    parts = test_id.split("::")
    name = parts[-1].split("[")[0]
    qualified = "::".join(parts[-2:])
    error = outcome.get("error", "")
    if outcome["outcome"] == "passed":
        return "passed", ""
    if outcome["outcome"] == "skipped":
        if any(word in error for word in ("pygpu", "cuDNN", "cuda_convnet", "GPU")):
            return "gpu", "Theano's GPU backend"
        return "skipped", skipped.get(name, skipped.get(error, error[:80]))
    for key in (qualified, name, parts[-2] if len(parts) > 2 else None):
        if key in triage:
            return triage[key]
    if "GpuArray" in test_id or "gpu" in name:
        return "gpu", "Theano's GPU backend"
    if "WrongValue" in error:
        return "wrong value", error[:120]
    return "not triaged", error[:120]


def tabulate(outcomes, triage=None, skipped=None, title="Theano test_scan.py"):
    """A Markdown table: counts by category, then one row per feature/internal/bug."""
    rows = collections.defaultdict(list)
    for test_id, outcome in sorted(outcomes.items()):
        category, detail = classify(test_id, outcome, triage, skipped)
        rows[(category, detail)].append(test_id.split("::")[-1])
    counts = collections.Counter(cat for (cat, _), tests in rows.items() for _ in tests)
    non_gpu = sum(counts.values()) - counts["gpu"]
    lines = [f"{title} on bptt.compat.theano: {counts['passed']} of {non_gpu} "
             f"non-GPU tests pass ({counts['gpu']} GPU tests skipped)", "",
             "| category | tests |", "| --- | --- |"]
    order = ["passed", "internal", "rewrite", "design", "missing", "environment", "bptt bug",
             "wrong value", "not triaged", "skipped", "gpu"]
    lines += [f"| {c} | {counts[c]} |" for c in order if counts[c]]
    lines += ["", "| category | what | tests |", "| --- | --- | --- |"]
    for (cat, detail), tests in sorted(rows.items(), key=lambda kv: order.index(kv[0][0])):
        if cat != "passed":
            lines.append(f"| {cat} | {detail} | {', '.join(tests)} |")
    return "\n".join(lines)
