"""The extrapolation lab: tiny causal transformers, one per positional scheme, trained at length L on
a Markov task whose best possible loss is known exactly, and measured at L, 2L, 4L and 8L.

numpy only (no torch, no autograd, no streamlit).  Modules, bottom up:

    task.py        MarkovSource: seeded k-th order source, exact conditional entropy, sampling
    positions.py   the one adapter to posenc's schemes: plain arrays per scheme and length
    model.py       the transformer: forward, hand-written backward, cross-entropy
    train.py       Adam on fresh batches, progress callback, cancel hook
    evaluate.py    loss per position against the exact next-token distribution; attention
    experiment.py  LabConfig and run_experiment: every scheme x seed, the shipped file's format
    results.py     the shipped results (data/), spreads, the "learned it" check, extrapolation ratios
    reevaluate.py  the extension rows of the shipped results evaluated again (dynamic NTK, position by position)
    __main__.py    ``python -m posenc.lab``: a run to --out, --ship regenerates data/, --check against it

``import posenc`` does not import this package.
"""
