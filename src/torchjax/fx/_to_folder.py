"""GraphModule.to_folder: a folder holding a module.py that rebuilds the GraphModule.

module.py defines a class with the generated forward; its __init__ loads each submodule
(saved whole, with torch.save) and the module's own parameters and buffers (state_dict.pt).
"""

from __future__ import annotations

import os

from ._codegen import _base_globals


def to_folder(gm, folder, module_name: str = "FxModule") -> None:
    import torchjax
    extra = [k for k in gm._globals if k not in _base_globals()]
    if extra:
        raise NotImplementedError(
            f"GraphModule.to_folder: the generated code calls {', '.join(extra)}, which "
            f"module.py could not import; torchjax.fx writes folders for code that calls "
            f"torch only")
    os.makedirs(folder, exist_ok=True)
    folder = os.path.abspath(folder)
    init = []
    for name, sub in gm._modules.items():
        torchjax.save(sub, os.path.join(folder, f"{name}.pt"))
        init.append(f"self.{name} = torch.load(r'{folder}/{name}.pt', weights_only=False)"
                    f"  # {sub._get_name()}")
    own = {}
    for name, p in gm._parameters.items():
        init.append(f"self.{name} = torch.nn.Parameter(torch.empty({list(p.shape)}, "
                    f"dtype={p.dtype}))")
        own[name] = p
    for name, b in gm._buffers.items():
        init.append(f"self.register_buffer('{name}', torch.empty({list(b.shape)}, "
                    f"dtype={b.dtype}))")
        own[name] = b
    torchjax.save({k: v.detach() for k, v in own.items()},
                  os.path.join(folder, "state_dict.pt"))
    init.append(f"self.load_state_dict(torch.load(r'{folder}/state_dict.pt'), strict=False)")
    lines = gm._code.strip("\n").rstrip().split("\n")
    body = "\n".join("    " + ln for ln in lines)
    init_src = "\n".join("        " + ln for ln in init)
    src = (f"import torch\nfrom math import inf, nan\n\n\nclass {module_name}(torch.nn.Module):\n"
           f"    def __init__(self):\n        super().__init__()\n{init_src}\n\n{body}\n")
    with open(os.path.join(folder, "module.py"), "w") as f:
        f.write(src)
    with open(os.path.join(folder, "__init__.py"), "w") as f:
        f.write(f"from .module import {module_name}\n")
