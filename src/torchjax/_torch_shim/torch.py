"""`import torch` in a process started from a torchjax-as-torch program: become torchjax.

This file is found only through the directory torchjax.install_as_torch() puts on sys.path.
The import system returns whatever sys.modules["torch"] holds once this module has run, so
after install_as_torch() the importer gets the torchjax package itself.
"""

import torchjax

torchjax.install_as_torch()
