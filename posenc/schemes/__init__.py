"""The schemes, one module per family; each exports the behaviour objects its registry entries hold.

- ``kinds``       what an additive, rotary or bias scheme must answer (one signature per kind)
- ``naive``       raw index, index / length, a single sine, one sin+cos pair
- ``sinusoidal``  Vaswani et al.'s sinusoid (interleaved or concatenated)
- ``learned``     learned absolute tables (the bundled MiniLM table, an untrained random one)
- ``relative``    T5 buckets, ALiBi, NoPE
- ``scaling``     RoPE frequencies: the default and every context extension, one function per rope_type
- ``rotary``      the RoPE rotation and the RoPE schemes
- ``xpos``        xPos (RoPE with a per-pair exponential scale)

``posenc.registry`` maps each key to its metadata and behaviour; nothing here imports it.
"""
