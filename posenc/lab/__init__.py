"""The extrapolation lab: tiny causal transformers, one per positional scheme, trained at length L on
tasks whose best possible loss is known exactly (a Markov source, noisy induction), and measured at L, 2L, 4L and 8L.

numpy only (no torch, no autograd, no streamlit).  Modules, bottom up:

    task.py        MarkovSource and InductionSource: seeded sources with exact Bayes losses; TASKS, source_for
    positions.py   the one adapter to posenc's schemes: plain arrays per scheme and length
    model.py       the transformer: forward, hand-written backward, cross-entropy
    train.py       Adam on fresh batches, progress callback, cancel hook
    evaluate.py    loss per position against the exact next-token distribution; attention
    experiment.py  LabConfig, run_job (one task x scheme x seed) and run_experiment: the shipped file's format
    parallel.py    Runner: the jobs in this process, in N processes (--jobs) or on a Dask scheduler (--cluster)
    results.py     the shipped results (data/), bootstrap intervals, bands past L, the verdict against a uniform guess
    __main__.py    ``python -m posenc.lab``: a run to --out, --ship regenerates data/, --check against it

``import posenc`` does not import this package.
"""
