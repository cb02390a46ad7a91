"""What torchjax reports about its own work: `TORCHJAX_LOGS=recompiles,compiles` (comma
separated topics, as PyTorch's TORCH_LOGS), or the `logging` module.

Each topic is a logger named `torchjax.<topic>`. Setting the environment variable makes those
loggers print to stderr at INFO level; without it they follow the user's logging
configuration (e.g. `logging.getLogger("torchjax.recompiles").setLevel(logging.INFO)`).
`enabled(topic)` is the cheap test hot paths make before they format a message.
"""

from __future__ import annotations

import logging
import os

TOPICS = ("recompiles", "graph_breaks", "compiles")

_env = {t.strip() for t in os.environ.get("TORCHJAX_LOGS", "").split(",") if t.strip()}
_unknown = _env - set(TOPICS) - {"all"}
if _unknown:
    raise ValueError(f"TORCHJAX_LOGS: unknown topic(s) {sorted(_unknown)}; the topics are "
                     f"{', '.join(TOPICS)} (or 'all')")
if "all" in _env:
    _env = set(TOPICS)


def logger(topic: str) -> logging.Logger:
    """The logger of one topic (`torchjax.<topic>`)."""
    return logging.getLogger(f"torchjax.{topic}")


def _configure():
    for topic in _env:
        log = logger(topic)
        log.setLevel(logging.INFO)
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter(f"[torchjax.{topic}] %(message)s"))
        log.addHandler(handler)
        log.propagate = False


_configure()


def enabled(topic: str) -> bool:
    """Whether a message of this topic would be shown (checked before formatting one)."""
    return logger(topic).isEnabledFor(logging.INFO)


def log(topic: str, msg: str, *args) -> None:
    logger(topic).info(msg, *args)
