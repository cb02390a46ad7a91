"""torchjax.save / torchjax.load in PyTorch's zip-based file format, and safetensors.

Files written by torchjax.save are the files torch.save writes (torch.load reads them with
weights_only=True), and torchjax.load reads files written by torch.save into torchjax tensors,
Parameters and containers. Loading is weights-only by default: see add_safe_globals.
weights_only=False unpickles arbitrary objects, which can run any code the file names: use
it only on files you trust.

safetensors: save_file / load_file here, and the bytes forms as
torchjax.serialization.safetensors.save / .load (torchjax.serialization.save and .load are
torch.save and torch.load, as in PyTorch).
"""

from __future__ import annotations

import io
import os
import pickle
import secrets
import sys
import warnings

import numpy as np

from ._serialization import _allowlist, safetensors
from ._serialization._pickler import TorchPickler
from ._serialization._unpickler import Loader, RestrictedUnpickler, full_unpickler
from ._serialization._zip import ALIGNMENT, ZipReader, ZipWriter, archive_name
from ._serialization.safetensors import load_file, save_file
from ._x64 import scoped

__all__ = ["save", "load", "add_safe_globals", "clear_safe_globals", "get_safe_globals",
           "safe_globals", "save_file", "load_file", "safetensors"]

DEFAULT_PROTOCOL = 2

_UNSAFE_MESSAGE = (
    "In PyTorch 2.6, we changed the default value of the `weights_only` argument in "
    "`torch.load` from `False` to `True`. Re-running `torch.load` with `weights_only` set to "
    "`False` will likely succeed, but it can result in arbitrary code execution. Do it only if "
    "you got the file from a trusted source.")
_DOCS_MESSAGE = (
    "\n\nCheck the documentation of torch.load to learn more about types accepted by default "
    "with weights_only https://pytorch.org/docs/stable/generated/torch.load.html.")


def _is_path(f) -> bool:
    return isinstance(f, (str, os.PathLike))


# -- saving ------------------------------------------------------------------------------


def save(obj, f, pickle_module=pickle, pickle_protocol=DEFAULT_PROTOCOL,
         _use_new_zipfile_serialization=True, _disable_byteorder_record=False) -> None:
    """Save obj to f (a path or a binary file-like object) in torch.save's zip format."""
    if not _is_path(f) and not hasattr(f, "write"):
        raise AttributeError("expected 'f' to be string, path, or a file-like object with a "
                             "'write' attribute")
    if not _use_new_zipfile_serialization:
        raise NotImplementedError("torchjax.save: _use_new_zipfile_serialization=False "
                                  "(PyTorch's legacy format) is not supported; torchjax writes "
                                  "the zip format only")
    if pickle_module is not pickle:
        raise NotImplementedError(f"torchjax.save: pickle_module="
                                  f"{getattr(pickle_module, '__name__', pickle_module)} is not "
                                  f"supported; only the standard pickle module")
    folder = archive_name(f)
    # pickle first: an object that cannot be pickled leaves no file behind
    storages: dict = {}
    stream = io.BytesIO()
    TorchPickler(stream, pickle_protocol, storages).dump(obj)
    records = [("data.pkl", stream.getvalue()), (".format_version", b"1"),
               (".storage_alignment", str(ALIGNMENT).encode())]
    if not _disable_byteorder_record:
        records.append(("byteorder", sys.byteorder.encode()))
    if _is_path(f):
        parent = os.path.dirname(os.fspath(f))
        if parent and not os.path.isdir(parent):
            raise RuntimeError(f"Parent directory {parent} does not exist.")
        with open(f, "wb") as out:
            _write_archive(out, folder, records, storages)
    else:
        if not callable(f.write):
            raise TypeError(f"Buffer of {str(type(f)).strip('<>')} has no callable attribute "
                            f"'write'")
        _write_archive(f, folder, records, storages)
        f.flush()


def _write_archive(out, folder: str, records: list, storages: dict) -> None:
    writer = ZipWriter(out, folder)
    for name, data in records:
        writer.write_record(name, data)
    for s in storages.values():  # in key order
        writer.write_record(f"data/{s.key}", s.payload())
    writer.write_record("version", b"3\n")
    serial = f"{secrets.randbits(64):020d}{secrets.randbits(64):020d}"
    writer.write_record(".data/serialization_id", serial.encode())
    writer.finish()


# -- loading -----------------------------------------------------------------------------


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None,
         **pickle_load_args):
    """Load an object saved with torch.save (or torchjax.save) from f, a path or a seekable
    binary file-like object. Weights-only unless weights_only=False (unsafe: see the module
    docstring). map_location (a device, str, dict or callable) places the tensors; mmap=True
    reads the storages through a memory map of the file instead of copying them out of it.
    A path ending in .safetensors is read with load_file. A broken file raises; a partly
    built object is never returned."""
    if weights_only is None:
        weights_only = pickle_module is None
    if weights_only:
        if pickle_module is not None:
            raise RuntimeError("Can not safely load weights when explicit pickle_module is "
                               "specified")
    elif pickle_module is None:
        pickle_module = pickle
    if pickle_load_args and weights_only:
        warnings.warn("pickle_load_args only works if `weights_only=False`.", stacklevel=2)
    pickle_load_args.setdefault("encoding", "utf-8")
    if _is_path(f) and os.fspath(f).endswith(".safetensors"):
        return load_file(f, device=_safetensors_device(map_location))
    if _is_path(f):
        with open(f, "rb") as stream:
            return _load_stream(stream, f, map_location, pickle_module, weights_only, mmap,
                                pickle_load_args)
    _check_seekable(f)
    return _load_stream(f, None, map_location, pickle_module, weights_only, mmap,
                        pickle_load_args)


def _safetensors_device(map_location):
    if map_location is None:
        return "cpu"
    if isinstance(map_location, dict):
        raise RuntimeError("Loading safetensors file with dict map_location is not supported. "
                           "Use a device string or torch.device instead.")
    if callable(map_location):
        raise RuntimeError("Loading safetensors file with callable map_location is not "
                           "supported. Use a device string or torch.device instead.")
    return str(map_location.decode() if isinstance(map_location, bytes) else map_location)


def _check_seekable(f) -> None:
    try:
        f.seek(f.tell())
    except (io.UnsupportedOperation, AttributeError) as e:
        raise type(e)(f"{e}. You can only torch.load from a file that is seekable. Please "
                      f"pre-load the data into a buffer like io.BytesIO and try to load from "
                      f"it instead.") from None


@scoped  # tensors are rebuilt with the file's dtypes, int64 and float64 included
def _load_stream(stream, path, map_location, pickle_module, weights_only, mmap, load_args):
    start = stream.tell()
    head = stream.read(512)
    stream.seek(start)
    if head[:4] != b"PK\x03\x04":
        if mmap:
            raise RuntimeError("mmap can only be used with files saved with `torch.save("
                               "_use_new_zipfile_serialization=True), please torch.save your "
                               "checkpoint with this option in order to use mmap.")
        _not_a_zip(head)
    archive = ZipReader(stream)
    if archive.has("constants.pkl"):
        raise NotImplementedError("torchjax.load: this is a TorchScript archive "
                                  "(torch.jit.save), which torchjax cannot load")
    if not (archive.has("version") or archive.has(".data/version")):
        raise RuntimeError("PytorchStreamReader failed reading zip archive: it has no version "
                           "record, so torch.save did not write it")
    byteorder = archive.read("byteorder") if archive.has("byteorder") else b"little"
    if byteorder not in (b"little", b"big"):
        raise ValueError("Unknown endianness type: " + byteorder.decode(errors="replace"))
    read = archive.read
    if mmap:
        if path is None:
            raise ValueError("f must be a file path in order to use the mmap argument")
        read = _mapped_reader(archive, path)
    loader = Loader(read, map_location, byteorder.decode() != sys.byteorder)
    data = io.BytesIO(archive.read("data.pkl"))
    if not weights_only:
        return full_unpickler(pickle_module, data, loader, **load_args).load()
    try:
        return RestrictedUnpickler(data, loader, **load_args).load()
    except pickle.UnpicklingError as e:
        raise pickle.UnpicklingError(_weights_only_message(str(e))) from None


def _mapped_reader(archive: ZipReader, path):
    """Records read from a memory map of the file (copy-on-write, as PyTorch maps it)."""
    mapped = np.memmap(path, dtype=np.uint8, mode="c")

    def read(name: str):
        span = archive.data_span(name, path) if archive.has(name) else None
        if span is None:
            return archive.read(name)
        return mapped[span[0]:span[0] + span[1]]
    return read


def _not_a_zip(head: bytes):
    if not head:
        raise EOFError("Ran out of input: the checkpoint file is empty")
    if head[:1] == b"\x80" or head[257:262] == b"ustar":
        raise NotImplementedError(
            "torchjax.load: this file is in PyTorch's legacy (non-zip) serialization format, "
            "written by torch.save(..., _use_new_zipfile_serialization=False) or by PyTorch "
            "before 1.6; torchjax reads the zip format only. Load it with PyTorch and save it "
            "again with torch.save(obj, f).")
    raise RuntimeError("Invalid magic number; corrupt file? The file is neither a zip archive "
                       "(torch.save's format) nor a legacy PyTorch checkpoint.")


def _weights_only_message(message: str) -> str:
    if "was not an allowed global by default" in message:
        return ("Weights only load failed. This file can still be loaded, to do so you have "
                "two options, do those steps only if you trust the source of the checkpoint. "
                f"\n\t(1) {_UNSAFE_MESSAGE}\n\t(2) Alternatively, to load with "
                "`weights_only=True` please check the recommended steps in the following error "
                f"message.\n\tWeightsUnpickler error: {message}{_DOCS_MESSAGE}")
    text = f"Weights only load failed. {_UNSAFE_MESSAGE}\n"
    if "is blocked" not in message:
        text += ("Please file an issue with the following so that we can make "
                 "`weights_only=True` compatible with your use case: WeightsUnpickler error: ")
    return f"{text}\n\n{message}{_DOCS_MESSAGE}"


# -- the weights-only allowlist ----------------------------------------------------------


def add_safe_globals(safe_globals: list) -> None:
    """Allow these globals (callables, or (callable, "module.name") pairs) in weights-only
    loads. Globals of sys, os, posix and nt stay refused."""
    _allowlist.user_safe_globals.update(safe_globals)


def clear_safe_globals() -> None:
    """Forget every global added with add_safe_globals."""
    _allowlist.user_safe_globals.clear()


def get_safe_globals() -> list:
    """The globals added with add_safe_globals."""
    return list(_allowlist.user_safe_globals)


class safe_globals:
    """Context manager: these globals are allowed in weights-only loads inside the block."""

    def __init__(self, safe_globals: list):
        self.safe_globals = safe_globals

    def __enter__(self):
        add_safe_globals(self.safe_globals)

    def __exit__(self, exc_type, exc, tb):
        _allowlist.user_safe_globals.difference_update(self.safe_globals)
