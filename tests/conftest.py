"""Test-session setup: compile fast. The suite compiles thousands of small XLA programs, and
XLA's backend optimisations cost more compile time than they save on inputs this small."""

import jax

jax.config.update("jax_disable_most_optimizations", True)
