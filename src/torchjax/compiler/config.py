"""Settings of torchjax.compile (PyTorch's torch._dynamo.config names where they exist)."""

# Programs one compiled function may hold before new call signatures run eagerly (PyTorch's
# recompile_limit, formerly cache_size_limit).
recompile_limit = 8

# torchjax.compiler.disable() / torchjax._dynamo.config.disable: every compiled function
# runs its Python eagerly while set (a list, so the flag is shared by reference).
disabled = [False]


def __getattr__(name):
    if name == "cache_size_limit":
        return recompile_limit
    raise AttributeError(name)
