"""A collective's arguments checked before anything runs, with the message PyTorch 2.13 gives
for each mistake (its gloo backend's, the CPU one, where the backend makes the check), so a
wrong call fails the same way in both rather than deep inside a program's reshape.

Where PyTorch has only an internal assertion (gloo's "Check failed: ..." or "enforce fail"),
the message here says what is wrong in words instead."""

from __future__ import annotations

from .._tensor import Tensor

_GLOO = "ProcessGroupGloo::"
_C10_NAMES = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
              "bool": "Bool"}


def _type_name(value) -> str:
    return "<class 'torch.Tensor'>" if isinstance(value, Tensor) else str(type(value))


def tensor(value, name: str = "tensor") -> None:
    if not isinstance(value, Tensor):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type "
                        f"torch.Tensor\n             but got {_type_name(value)} instead.")


def tensor_list(value, name: str) -> None:
    if not isinstance(value, list) or not all(isinstance(t, Tensor) for t in value):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type "
                        f"List[torch.Tensor]\n             but got {_type_name(value)} instead.")


def _shape(shape) -> str:
    return "(" + ", ".join(str(int(n)) for n in shape) + ")"


def same_dtypes(tensors) -> None:
    """PyTorch's check that a collective's tensors share one dtype."""
    dtypes = [t.dtype for t in tensors]
    for d in dtypes[1:]:
        if d is not dtypes[0]:
            raise ValueError(f"Invalid usage of tensors with different dtypesFound {dtypes[0]} "
                             f"and  {d}")


def reduction(tensor_: Tensor, op, backend: str) -> None:
    """What a reduction cannot apply to: bitwise ops to floats; on gloo, AVG to integers
    (gloo averages by dividing the sum in place)."""
    if op.name in ("BAND", "BOR", "BXOR") and (tensor_.is_floating_point()
                                                or tensor_.is_complex()):
        raise RuntimeError(f"Cannot use ReduceOp.{op.name} with non-integral dtype")
    if op.name == "AVG" and backend == "gloo" and tensor_.dtype.name in _C10_NAMES:
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{_C10_NAMES[tensor_.dtype.name]}")


def root(kind: str, rank: int, g, world) -> None:
    """A collective's src / dst: a rank of the group."""
    if rank in g.ranks:
        return
    if g is world:
        raise RuntimeError(f"{_GLOO}{kind}: invalid root rank: {rank}")
    raise ValueError(f"Global rank {rank} is not part of group {g}")


def gathered(outputs: list, input_: Tensor, size: int) -> None:
    """all_gather's tensor_list: one tensor of the input's dtype and shape per rank."""
    if len(outputs) != size:
        raise RuntimeError(f"{_GLOO}allgather: invalid output tensor list at index 0 (expected "
                           f"length {size}, got {len(outputs)})")
    same_dtypes(outputs + [input_])
    for t in outputs:
        if tuple(t.shape) != tuple(input_.shape):
            raise RuntimeError(f"{_GLOO}allgather: invalid tensor size at index 0 (expected "
                               f"{_shape(input_.shape)}, got {_shape(t.shape)})")


def gathered_into(output: Tensor, input_: Tensor, size: int) -> None:
    """all_gather_into_tensor's output: the inputs concatenated on dim 0 (or stacked, as
    NCCL's allows)."""
    if output.dtype is not input_.dtype:
        raise RuntimeError(f"{_GLOO}allgather: invalid tensor type at index 0 (expected "
                           f"{input_.dtype}, got {output.dtype})")
    shape = tuple(input_.shape)
    concatenated = ((size * shape[0],) + shape[1:]) if shape else (size,)
    if tuple(output.shape) not in (concatenated, (size,) + shape):
        raise RuntimeError(f"{_GLOO}allgather: invalid tensor size at index 0 (expected "
                           f"{_shape(concatenated)}, got {_shape(output.shape)})")


def scattered_from(output: Tensor, input_: Tensor, size: int) -> None:
    """reduce_scatter_tensor: the input is the outputs of the group's ranks on dim 0."""
    out, inp = tuple(output.shape), tuple(input_.shape)
    if not out or not inp or out[0] * size != inp[0] or out[1:] != inp[1:]:
        raise RuntimeError(f"reduce_scatter_tensor: input_tensor's shape must be output_tensor's "
                           f"with dim 0 times the group's size {size} (output {_shape(out)}, "
                           f"input {_shape(inp)})")
    same_dtypes([output, input_])


def exchanged(output: Tensor, input_: Tensor, size: int) -> None:
    """all_to_all_single without split sizes: equal chunks of dim 0, one per rank."""
    if output.numel() != input_.numel():
        raise RuntimeError(f"all_to_all_single: output and input must have as many elements "
                           f"({output.numel()} vs. {input_.numel()})")
    if not input_.shape or input_.shape[0] % size:
        raise RuntimeError(f"all_to_all_single: dim 0 of the input {_shape(input_.shape)} must "
                           f"split into the group's {size} ranks equally")
    same_dtypes([output, input_])


def rooted_list(values, kind: str, is_root: bool, size: int) -> None:
    """gather's gather_list (kind "gather") and scatter's scatter_list ("scatter"): given on
    the root rank alone, one tensor per rank."""
    name, where = (("gather_list", "destination") if kind == "gather"
                   else ("scatter_list", "source"))
    if not is_root:
        if values:
            raise ValueError(f"Argument ``{name}`` must NOT be specified on non-{where} ranks.")
        return
    if not values:
        raise ValueError(f"Argument ``{name}`` must be specified on {where} rank.")
    tensor_list(values, name)
    if len(values) != size:
        side = "output" if kind == "gather" else "input"
        raise RuntimeError(f"{_GLOO}{kind}: Incorrect {side} list size {len(values)}. "
                           f"{side.capitalize()} list size should be {size}, same as size of "
                           f"the process group.")


def all_to_all_lists(outputs: list, inputs: list, size: int) -> None:
    for side, values in (("output", outputs), ("input", inputs)):
        if len(values) != size:
            raise RuntimeError(f"{_GLOO}alltoall: {side} tensor list size {len(values)} does not "
                               f"match world size {size}")


def reduce_scatter_list(inputs: list, size: int) -> None:
    if len(inputs) != size:
        raise RuntimeError("invalid input tensor list size, must be world size")


def group_ranks(ranks, world: int) -> None:
    """new_group's ranks: at most the world's, each a rank of it."""
    if len(ranks) > world:
        raise ValueError("the new group's world size should be less or equal to the world size "
                         "set by init_process_group")
    for r in ranks:
        if not 0 <= r < world:
            raise ValueError(f"Rank {r} is out of range. Valid ranks are 0 to {world - 1} "
                             f"(world_size={world})")
