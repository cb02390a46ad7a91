"""Module's traversal: parameters, buffers, children and modules with their qualified
names, as PyTorch walks them (each member once unless remove_duplicate=False): a mixin of
nn.Module, whose methods are named Module.<name> as in PyTorch."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: module.py imports this file
    from ..._tensor import Tensor
    from ..parameter import Parameter
    from .module import Module


class ModuleTraversal:
    """The traversal of nn.Module (see module.py)."""

    def _named_members(self, get_members_fn, prefix="", recurse=True,
                       remove_duplicate: bool = True):
        memo = set()
        modules = (self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
                   if recurse else [(prefix, self)])
        for module_prefix, module in modules:
            for k, v in get_members_fn(module):
                if v is None or v in memo:
                    continue
                if remove_duplicate:
                    memo.add(v)
                yield module_prefix + ("." if module_prefix else "") + k, v

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """An iterator over the module's parameters (those of submodules too, with `recurse=True`).

        See https://pytorch.org/docs/stable/generated/torch.nn.Module.parameters.html.
        """
        for _name, param in self.named_parameters(recurse=recurse):
            yield param

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        """An iterator over (name, parameter) pairs, named as in the state_dict.

        See https://pytorch.org/docs/stable/generated/torch.nn.Module.named_parameters.html.
        """
        yield from self._named_members(lambda module: module._parameters.items(), prefix=prefix,
                                       recurse=recurse, remove_duplicate=remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        """An iterator over the module's buffers.

        See https://pytorch.org/docs/stable/generated/torch.nn.Module.buffers.html.
        """
        for _name, buf in self.named_buffers(recurse=recurse):
            yield buf

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        """An iterator over (name, buffer) pairs.

        See https://pytorch.org/docs/stable/generated/torch.nn.Module.named_buffers.html.
        """
        yield from self._named_members(lambda module: module._buffers.items(), prefix=prefix,
                                       recurse=recurse, remove_duplicate=remove_duplicate)

    def children(self) -> Iterator[Module]:
        """An iterator over the direct submodules.

        See https://pytorch.org/docs/stable/generated/torch.nn.Module.children.html.
        """
        for _name, module in self.named_children():
            yield module

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """An iterator over (name, submodule) pairs of the direct submodules.

        See https://pytorch.org/docs/stable/generated/torch.nn.Module.named_children.html.
        """
        memo = set()
        for name, module in self._modules.items():
            if module is not None and module not in memo:
                memo.add(module)
                yield name, module

    def modules(self, remove_duplicate: bool = True) -> Iterator[Module]:
        """An iterator over this module and every submodule, depth first.

        See https://pytorch.org/docs/stable/generated/torch.nn.Module.modules.html.
        """
        for _name, module in self.named_modules(remove_duplicate=remove_duplicate):
            yield module

    def named_modules(self, memo: set | None = None, prefix: str = "",
                      remove_duplicate: bool = True):
        """An iterator over (name, module) pairs of this module and every submodule.

        See https://pytorch.org/docs/stable/generated/torch.nn.Module.named_modules.html.
        """
        if memo is None:
            memo = set()
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            submodule_prefix = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, submodule_prefix, remove_duplicate)
