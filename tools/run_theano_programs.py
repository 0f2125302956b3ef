"""Run third-party Theano programs on bptt.compat.theano (not part of CI).

    python tools/run_theano_programs.py --tutorials PATH/DeepLearningTutorials \\
        --theano PATH/Theano --lasagne PATH/Lasagne \\
        [--only rnnslu,lstm,rnnrbm,lenet,test_scan,lasagne] [--quick]

For the tutorials (``code/rnnslu.py``, ``code/lstm.py``, ``code/rnnrbm.py``,
unchanged), it copies them to a work directory, writes synthetic data of the
format each one reads (the originals download ATIS, IMDB and Nottingham),
calls `bptt.compat.theano.install()` and imports them with their own
``import theano``, trains briefly and reports whether they learn: the
rnnslu training NLL falls (and a deep copy of the model, as rnnslu makes of
its best model, classifies as the model does), the lstm test error is well
below chance, the rnnrbm pseudo-log-likelihood rises. LeNet
(``code/convolutional_mlp.py`` with its ``logistic_sgd.py`` and ``mlp.py``)
trains on sklearn's 8x8 digits scaled into MNIST's 28x28 pickle, minibatches
of 50, and its training cost halves. Each program runs in a process of its
own.

For Theano's ``theano/scan_module/tests/test_scan.py`` it runs pytest with
the plugin in ``tools/theano_programs/`` (no edit to the test file) and
prints the table of outcomes by category (`theano_programs.triage`).

For Lasagne (a checkout of Lasagne/Lasagne) it runs its test files, but
``layers/test_conv.py`` (NumPy 2 cannot collect it), the same way with
``lasagne_tests_plugin`` on a copy of the ``lasagne`` package, and prints
their table.

``BPTT_MODE=PY`` runs everything in bptt's PY mode (the Theano suite runs in
the mode bptt.config reads, PY by default here: most of its tests compile a
graph once and call it once, where NUMBA's compile time dominates).
"""
from __future__ import annotations

import argparse
import gzip
import importlib.util
import json
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import time
import types

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


# -- synthetic data ----------------------------------------------------------------
def atis_like(path, rng, n_words=60, n_sentences=(120, 20, 20)):
    """ATIS's pickle: (train, valid, test, dicts); each set is (words, named
    entities, labels), lists of int32 arrays; dicts maps words and labels to
    indices. A word below n_words / 2 is labelled by its class (1 + word % 4),
    the others 'O'."""
    labels = ["O", "B-city", "I-city", "B-time", "I-time"]

    def sentence():
        n = rng.integers(4, 12)
        w = rng.integers(0, n_words, n).astype("int32")
        y = np.where(w < n_words // 2, 1 + w % 4, 0).astype("int32")
        return w, np.zeros(n, "int32"), y

    sets = []
    for count in n_sentences:
        rows = [sentence() for _ in range(count)]
        sets.append(tuple([r[k] for r in rows] for k in range(3)))
    dicts = {"words2idx": {f"w{i}": i for i in range(n_words)},
             "labels2idx": {name: i for i, name in enumerate(labels)},
             "tables2idx": {}}
    with gzip.open(path, "wb") as f:
        pickle.dump((*sets, dicts), f)


def imdb_like(path, rng, n_train=800, n_test=200, n_words=200):
    """IMDB's pickle: two (sequences, labels) pairs, pickled one after the other.
    A review is positive when it holds more 'good' words (2..11) than 'bad'
    ones (12..21)."""
    def reviews(n):
        xs, ys = [], []
        for _ in range(n):
            y = int(rng.integers(0, 2))
            length = int(rng.integers(6, 16))
            words = rng.integers(22, n_words, length)
            k = int(rng.integers(3, 6))
            pos = rng.choice(length, k, replace=False)
            words[pos] = rng.integers(2, 12, k) if y else rng.integers(12, 22, k)
            xs.append([int(w) for w in words])
            ys.append(y)
        return xs, ys

    with open(path, "wb") as f:
        pickle.dump(reviews(n_train), f)
        pickle.dump(reviews(n_test), f)


def piano_rolls(rng, n_files=6, length=60, notes=88):
    """Nottingham-like piano rolls (time x 88 notes): a repeated chord
    progression of three-note chords, each held two steps, with a melody note."""
    chords = [(39, 43, 46), (44, 48, 51), (46, 50, 53), (39, 43, 46)]
    rolls = []
    for _ in range(n_files):
        roll = np.zeros((length, notes))
        shift = int(rng.integers(0, 5))
        for t in range(length):
            chord = chords[(t // 2) % len(chords)]
            roll[t, [c + shift for c in chord]] = 1
            roll[t, chord[0] + 12 + shift + 2 * (t % 3)] = 1
        rolls.append(roll)
    return rolls


def midi_module(rolls):
    """A ``midi.utils`` module whose `midiread` returns the synthetic rolls
    (the tutorial's MIDI reader is a separate download)."""
    class MidiRead:
        def __init__(self, filename, r=(21, 109), dt=0.2):
            self.piano_roll = rolls[int(os.path.basename(filename).split(".")[0])]

    def midiwrite(filename, piano_roll, r=(21, 109), dt=0.2, patch=0):
        np.save(filename + ".npy", piano_roll)

    utils = types.ModuleType("midi.utils")
    utils.midiread, utils.midiwrite = MidiRead, midiwrite
    midi = types.ModuleType("midi")
    midi.utils = utils
    return {"midi": midi, "midi.utils": utils}


# -- the tutorials -------------------------------------------------------------------
def _import(name, directory):
    spec = importlib.util.spec_from_file_location(name, os.path.join(directory, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _install():
    sys.path.insert(0, os.path.join(HERE, "theano_programs"))
    import theano_tests_plugin  # noqa: F401  (six, the helpers; calls install())


def run_rnnslu(work, quick):
    import copy

    _install()
    rng = np.random.default_rng(0)
    atis_like(os.path.join(work, "atis.fold3.pkl.gz"), rng)
    os.environ["ATISDATA"] = work
    rnnslu = _import("rnnslu", work)
    train, valid, test, dic = rnnslu.atisfold(3)
    np.random.seed(345)
    t0 = time.perf_counter()
    rnn = rnnslu.RNNSLU(nh=24, nc=len(dic["labels2idx"]), ne=len(dic["words2idx"]), de=10, cs=3)
    compile_s = time.perf_counter() - t0
    nlls = []
    train_fn = rnn.sentence_train

    def recording(*args):
        out = train_fn(*args)
        nlls.append(float(out))
        return out

    rnn.sentence_train = recording
    epochs = 3 if quick else 8
    per_epoch = []
    for e in range(epochs):
        rnnslu.shuffle(list(train), 345)
        start = len(nlls)
        for x, y in zip(train[0], train[2]):
            rnn.train(x, y, 3, 1.0)
        per_epoch.append(float(np.mean(nlls[start:])))
    rnn.sentence_train = train_fn
    best = copy.deepcopy(rnn)
    same = all(np.array_equal(
        rnn.classify(np.asarray(rnnslu.contextwin(x, 3)).astype("int32")),
        best.classify(np.asarray(rnnslu.contextwin(x, 3)).astype("int32"))) for x in test[0])
    correct = total = 0
    for x, y in zip(test[0], test[2]):
        pred = best.classify(np.asarray(rnnslu.contextwin(x, 3)).astype("int32"))
        correct += int((pred == y).sum())
        total += len(y)
    return {"program": "rnnslu", "compile_s": round(compile_s, 1),
            "train_nll_by_epoch": [round(v, 3) for v in per_epoch],
            "learns": per_epoch[-1] < 0.7 * per_epoch[0],
            "deepcopy_classifies_the_same": same,
            "test_accuracy": round(correct / total, 3)}


def run_lstm(work, quick):
    _install()
    rng = np.random.default_rng(0)
    imdb_like(os.path.join(work, "imdb.pkl"), rng)
    sys.path.insert(0, work)
    lstm = _import("lstm", work)
    t0 = time.perf_counter()
    # No validation during training: lstm.py's minibatch iterators are Python 3 zip
    # objects, used up by their first pass, so only the final errors are measured.
    train_err, valid_err, test_err = lstm.train_lstm(
        dim_proj=16, n_words=200, max_epochs=8 if quick else 16, patience=100, dispFreq=1000,
        validFreq=10 ** 9, saveFreq=10 ** 9, saveto=os.path.join(work, "lstm_model.npz"), maxlen=100,
        batch_size=16, valid_batch_size=64, optimizer=lstm.adadelta, use_dropout=True)
    return {"program": "lstm", "seconds": round(time.perf_counter() - t0, 1),
            "train_err": round(float(train_err), 3), "valid_err": round(float(valid_err), 3),
            "test_err": round(float(test_err), 3), "learns": float(test_err) < 0.25}


def run_rnnrbm(work, quick):
    _install()
    rng = np.random.default_rng(0)
    rolls = piano_rolls(rng)
    sys.modules.update(midi_module(rolls))
    import matplotlib

    matplotlib.use("Agg")
    rnnrbm = _import("rnnrbm", work)
    np.random.seed(0)
    t0 = time.perf_counter()
    model = rnnrbm.RnnRbm(n_hidden=40, n_hidden_recurrent=20, lr=0.01)
    compile_s = time.perf_counter() - t0
    monitor = []
    train_fn = model.train_function

    def recording(seq):
        out = train_fn(seq)
        monitor.append(float(out))
        return out

    model.train_function = recording
    files = [os.path.join(work, f"{k}.mid") for k in range(len(rolls))]
    epochs = 15 if quick else 40
    model.train(files, batch_size=30, num_epochs=epochs)
    per_file = len(files) * 2
    by_epoch = [float(np.mean(monitor[i:i + per_file])) for i in range(0, len(monitor), per_file)]
    sample = model.generate_function()
    return {"program": "rnnrbm", "compile_s": round(compile_s, 1),
            "pseudo_log_likelihood_first_last": [round(by_epoch[0], 3), round(by_epoch[-1], 3)],
            "learns": by_epoch[-1] > by_epoch[0] + 0.5 * abs(by_epoch[0]) * 0.1,
            "generated_shape": list(sample.shape)}


def digits_like_mnist(path, rng):
    """MNIST's pickle (train, valid, test sets of (n x 784 floats in [0, 1], labels)) made
    of sklearn's 8x8 digits, each pixel repeated 3 x 3 and the 24 x 24 image padded to
    28 x 28; without sklearn, a noisy fixed pattern per class."""
    try:
        from sklearn.datasets import load_digits

        digits = load_digits()
        images, labels = digits.images / 16.0, digits.target
        images = np.pad(np.kron(images, np.ones((3, 3))), ((0, 0), (2, 2), (2, 2)))
    except ImportError:
        labels = rng.integers(0, 10, 1800)
        patterns = rng.random((10, 28, 28)) < 0.3
        images = np.clip(patterns[labels] + 0.3 * rng.standard_normal((1800, 28, 28)), 0, 1)
    order = rng.permutation(len(labels))
    x = images.reshape(len(labels), 784)[order].astype("float32")
    y = labels[order].astype("int64")
    cuts = [(0, 1200), (1200, 1500), (1500, 1800)]
    with gzip.open(path, "wb") as f:
        pickle.dump(tuple((x[a:b], y[a:b]) for a, b in cuts), f)


class _RecordingTheano:
    """A tutorial module's ``theano`` whose `function` records what a function with
    updates (its training step) returns, the cost of each minibatch, and the seconds
    spent compiling."""

    def __init__(self, theano, record):
        self._theano, self._record = theano, record
        self.compile_s = 0.0

    def __getattr__(self, name):
        return getattr(self._theano, name)

    def function(self, *args, **kwargs):
        t0 = time.perf_counter()
        fn = self._theano.function(*args, **kwargs)
        self.compile_s += time.perf_counter() - t0
        if not kwargs.get("updates"):
            return fn

        def recording(*call_args):
            out = fn(*call_args)
            self._record.append(float(out))
            return out

        return recording


def run_lenet(work, quick):
    import contextlib
    import io
    import re

    _install()
    digits_like_mnist(os.path.join(work, "mnist.pkl.gz"), np.random.default_rng(0))
    sys.path.insert(0, work)
    lenet = _import("convolutional_mlp", work)
    costs = []
    lenet.theano = recording = _RecordingTheano(lenet.theano, costs)
    epochs, batch = (3 if quick else 8), 50
    printed = io.StringIO()
    t0 = time.perf_counter()
    with contextlib.redirect_stdout(printed):
        lenet.evaluate_lenet5(learning_rate=0.1, n_epochs=epochs, batch_size=batch,
                              dataset=os.path.join(work, "mnist.pkl.gz"))
    per_epoch = len(costs) // epochs
    by_epoch = [float(np.mean(costs[e * per_epoch:(e + 1) * per_epoch])) for e in range(epochs)]
    tests = re.findall(r"test error of best model ([0-9.]+) %", printed.getvalue())
    return {"program": "lenet", "seconds": round(time.perf_counter() - t0, 1),
            "compile_s": round(recording.compile_s, 1),
            "train_cost_by_epoch": [round(c, 3) for c in by_epoch],
            "learns": by_epoch[-1] < 0.5 * by_epoch[0],
            "test_error_percent": float(tests[-1]) if tests else None}


PROGRAMS = {"rnnslu": run_rnnslu, "lstm": run_lstm, "rnnrbm": run_rnnrbm, "lenet": run_lenet}
#: the files of the tutorials' code directory each program needs, besides data
FILES = {"lenet": ["convolutional_mlp.py", "logistic_sgd.py", "mlp.py"]}


def run_one(name, tutorials, quick):
    work = tempfile.mkdtemp(prefix=f"bptt-{name}-")
    code = os.path.join(tutorials, "code")
    for f in FILES.get(name, [f"{name}.py"]) + ["imdb.py", "conlleval.pl"]:
        if os.path.exists(os.path.join(code, f)):
            shutil.copy(os.path.join(code, f), work)
    cwd = os.getcwd()
    os.chdir(work)
    try:
        return PROGRAMS[name](work, quick)
    finally:
        os.chdir(cwd)


def run_tutorial_process(name, tutorials, quick):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]))
    cmd = [sys.executable, os.path.abspath(__file__), "--tutorials", tutorials, "--one", name]
    cmd += ["--quick"] if quick else []
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    if proc.returncode or not lines:
        return {"program": name, "learns": False, "error": proc.stderr[-3000:]}
    result = json.loads(lines[-1][len("RESULT "):])
    result["wall_s"] = round(time.perf_counter() - t0, 1)
    return result


# -- Theano's test suite --------------------------------------------------------------
def run_theano_suite(theano_checkout, report, extra=()):
    test_file = os.path.join(theano_checkout, "theano", "scan_module", "tests", "test_scan.py")
    work = tempfile.mkdtemp(prefix="bptt-test_scan-")
    shutil.copy(test_file, work)   # byte for byte: the copy only keeps Theano's package away
    env = dict(os.environ, BPTT_MODE=os.environ.get("BPTT_MODE", "PY"),
               PYTHONPATH=os.pathsep.join([ROOT, os.path.join(HERE, "theano_programs")]))
    cmd = [sys.executable, "-m", "pytest", "-p", "theano_tests_plugin", "--noconftest",
           "-p", "no:cacheprovider", "-q", "--theano-timeout", "300", "--theano-report", report,
           *extra, "test_scan.py"]
    subprocess.run(cmd, cwd=work, env=env)
    with open(report) as f:
        return json.load(f)


#: Lasagne's test files run (all but layers/test_conv.py, which NumPy 2 cannot collect).
LASAGNE_TESTS = [f"lasagne/tests/{f}.py" for f in (
    "layers/test_recurrent", "layers/test_dense", "layers/test_embedding", "layers/test_merge",
    "layers/test_pool",
    "layers/test_noise", "layers/test_normalization", "layers/test_base", "layers/test_helper",
    "layers/test_input", "layers/test_shape", "layers/test_special", "layers/test_local",
    "test_updates", "test_objectives", "test_init", "test_regularization", "test_utils",
    "test_nonlinearities", "test_theano_extensions")]


def run_lasagne_suite(lasagne_checkout, report):
    work = tempfile.mkdtemp(prefix="bptt-lasagne-")
    shutil.copytree(os.path.join(lasagne_checkout, "lasagne"), os.path.join(work, "lasagne"))
    env = dict(os.environ, BPTT_MODE=os.environ.get("BPTT_MODE", "PY"),
               PYTHONPATH=os.pathsep.join([ROOT, os.path.join(HERE, "theano_programs")]))
    cmd = [sys.executable, "-m", "pytest", "-p", "theano_tests_plugin", "-p",
           "lasagne_tests_plugin", "--noconftest", "-o", "addopts=", "-p", "no:cacheprovider",
           "-q", "--theano-timeout", "300", "--theano-report", report, *LASAGNE_TESTS]
    subprocess.run(cmd, cwd=work, env=env)
    with open(report) as f:
        return json.load(f)


def print_table(outcomes, **kwargs):
    sys.path.insert(0, os.path.join(HERE, "theano_programs"))
    from triage import tabulate

    print(tabulate(outcomes, **kwargs))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tutorials", help="a checkout of lisa-lab/DeepLearningTutorials")
    parser.add_argument("--theano", help="a checkout of Theano/Theano")
    parser.add_argument("--lasagne", help="a checkout of Lasagne/Lasagne")
    parser.add_argument("--only", default="rnnslu,lstm,rnnrbm,lenet,test_scan,lasagne")
    parser.add_argument("--quick", action="store_true", help="fewer epochs")
    parser.add_argument("--report", default=os.path.join(tempfile.gettempdir(),
                                                         "bptt-test_scan.json"))
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        print("RESULT " + json.dumps(run_one(args.one, args.tutorials, args.quick)))
        return 0
    wanted = args.only.split(",")
    ok = True
    for name in [n for n in PROGRAMS if n in wanted]:
        if not args.tutorials:
            parser.error("--tutorials PATH is needed for the tutorials")
        result = run_tutorial_process(name, args.tutorials, args.quick)
        ok &= bool(result.get("learns"))
        print(json.dumps(result))
    if "test_scan" in wanted:
        if not args.theano:
            parser.error("--theano PATH is needed for test_scan")
        print_table(run_theano_suite(args.theano, args.report))
    if "lasagne" in wanted and not args.lasagne and args.only != parser.get_default("only"):
        parser.error("--lasagne PATH is needed for lasagne")
    if "lasagne" in wanted and args.lasagne:
        sys.path.insert(0, os.path.join(HERE, "theano_programs"))
        from triage import LASAGNE_SKIPPED, LASAGNE_TRIAGE

        outcomes = run_lasagne_suite(args.lasagne, args.report.replace(".json", "-lasagne.json"))
        print_table(outcomes, triage=LASAGNE_TRIAGE, skipped=LASAGNE_SKIPPED,
                    title="Lasagne's tests")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
