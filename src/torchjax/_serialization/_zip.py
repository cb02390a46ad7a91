"""PyTorch's checkpoint container: a zip archive of uncompressed records under one folder.

The writer lays records out as PyTorch's writer (miniz) does, so files match torch.save's
byte for byte apart from the random serialization id: every record's data starts on a
64-byte boundary (padding goes in an "FB" extra field of the local header), sizes and CRC
follow the data in a descriptor, and a zip64 end record is always written. The reader
accepts any valid zip archive and turns every zip-level failure into one clear error.
"""

from __future__ import annotations

import os
import struct
import zipfile
import zlib

ALIGNMENT = 64
ZIP64_LIMIT = 0xFFFFFFFF  # a size or offset at or above it moves to the zip64 extra field
_MARK = 0xFFFFFFFF  # stands in a 32-bit field whose value is in the zip64 extra field
_FLAG_DESCRIPTOR = 0x0008  # CRC and sizes follow the data
_FLAG_UTF8 = 0x0800
_ZIP64_VERSION = 45
_MADE_BY = 0x031E  # what PyTorch's writer records in the zip64 end record

_CORRUPT = ("The checkpoint file is corrupted or truncated: it was not saved completely, "
            "was transferred incorrectly, or was modified after saving.")


def archive_name(f) -> str:
    """The folder of the records: the file's name without directory and extension, or
    "archive" for streams and for paths PyTorch's writer cannot take (not ASCII)."""
    if not isinstance(f, (str, os.PathLike)):
        return "archive"
    path = os.fspath(f)
    try:
        path.encode("ascii")
    except UnicodeEncodeError:
        return "archive"
    base = path.replace("\\", "/").rsplit("/", 1)[-1]
    stem = base.rsplit(".", 1)[0] if "." in base else base
    if not stem:
        raise RuntimeError(f"invalid file name: {path}")
    return stem


def _zip64_extra(fields: bytes) -> bytes:
    return struct.pack("<HH", 1, len(fields)) + fields if fields else b""


class ZipWriter:
    """Writes records one after another to a binary stream; it never seeks."""

    def __init__(self, stream, folder: str):
        self._out = stream
        self._prefix = folder + "/"
        self._pos = 0
        self._entries: list = []

    def _emit(self, *chunks) -> None:
        for c in chunks:
            self._out.write(c)
            self._pos += len(c) if isinstance(c, bytes) else c.nbytes

    def write_record(self, name: str, data) -> None:
        """data: bytes or a 1-D uint8 numpy array."""
        name_b = (self._prefix + name).encode("utf-8")
        size = len(data) if isinstance(data, bytes) else data.nbytes
        offset = self._pos
        big = size >= ZIP64_LIMIT or offset >= ZIP64_LIMIT
        fields = b""
        if size >= ZIP64_LIMIT:
            fields += struct.pack("<QQ", size, size)
        if offset >= ZIP64_LIMIT:
            fields += struct.pack("<Q", offset)
        z64 = _zip64_extra(fields) if big else b""
        # the data must start on an ALIGNMENT boundary: pad inside an "FB" extra field
        start = offset + 30 + len(name_b) + len(z64) + 4
        pad = -start % ALIGNMENT
        extra = z64 + b"FB" + struct.pack("<H", pad) + b"Z" * pad
        flags = _FLAG_UTF8 | (_FLAG_DESCRIPTOR if size else 0)
        local_size = _MARK if size >= ZIP64_LIMIT else 0
        header = struct.pack("<IHHHHHIIIHH", 0x04034B50, _ZIP64_VERSION if big else 0, flags, 0,
                             0, 0, 0, local_size, local_size, len(name_b), len(extra))
        crc = zlib.crc32(data) if size else 0
        self._emit(header, name_b, extra, data)
        if size:
            fmt = "<IIQQ" if big else "<IIII"
            self._emit(struct.pack(fmt, 0x08074B50, crc, size, size))
        self._entries.append((name_b, crc, size, offset, flags))

    def finish(self) -> None:
        """Write the central directory and the end records."""
        cd_start = self._pos
        for name_b, crc, size, offset, flags in self._entries:
            fields = b""
            csize, coffset = size, offset
            if size >= ZIP64_LIMIT:
                fields += struct.pack("<QQ", size, size)
                csize = _MARK
            if offset >= ZIP64_LIMIT:
                fields += struct.pack("<Q", offset)
                coffset = _MARK
            extra = _zip64_extra(fields)
            self._emit(struct.pack(
                "<IHHHHHHIIIHHHHHII", 0x02014B50, 0, _ZIP64_VERSION if fields else 0, flags, 0, 0,
                0, crc, csize, csize, len(name_b), len(extra), 0, 0, 0, 0, coffset), name_b, extra)
        cd_size = self._pos - cd_start
        n = len(self._entries)
        end64 = self._pos
        self._emit(struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, _MADE_BY, _ZIP64_VERSION, 0, 0, n,
                               n, cd_size, cd_start))
        self._emit(struct.pack("<IIQI", 0x07064B50, 0, end64, 1))
        small = cd_size < ZIP64_LIMIT and cd_start < ZIP64_LIMIT
        self._emit(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, min(n, 0xFFFF), min(n, 0xFFFF),
                               cd_size if small else _MARK, cd_start if small else _MARK, 0))


_ZIP_ERRORS = (zipfile.BadZipFile, zlib.error, EOFError, struct.error, ValueError,
               NotImplementedError)


class ZipReader:
    """The records of a checkpoint archive, by name relative to its folder."""

    def __init__(self, source):
        try:
            self._zip = zipfile.ZipFile(source)
            names = self._zip.namelist()
        except _ZIP_ERRORS as e:
            raise RuntimeError(f"PytorchStreamReader failed reading zip archive: {e}. "
                               f"{_CORRUPT}") from None
        if not names:
            raise RuntimeError(f"PytorchStreamReader failed reading zip archive: the archive "
                               f"has no records. {_CORRUPT}")
        # PyTorch names the folder after the first record; files renamed later keep it
        folder = names[0].split("/", 1)[0] + "/" if "/" in names[0] else ""
        self._full = {n[len(folder):]: n for n in names if n.startswith(folder)}

    def has(self, name: str) -> bool:
        return name in self._full

    def read(self, name: str) -> bytes:
        if name not in self._full:
            raise RuntimeError(f"PytorchStreamReader failed locating file {name}: file not "
                               f"found. {_CORRUPT}")
        try:
            return self._zip.read(self._full[name])  # checks the CRC
        except _ZIP_ERRORS as e:
            raise RuntimeError(f"PytorchStreamReader failed reading file {name}: {e}. "
                               f"{_CORRUPT}") from None

    def data_span(self, name: str, path) -> tuple[int, int] | None:
        """(offset in the file, size) of an uncompressed record's data, for memory mapping."""
        info = self._zip.getinfo(self._full[name])
        if info.compress_type != zipfile.ZIP_STORED:
            return None
        with open(path, "rb") as fh:
            fh.seek(info.header_offset)
            head = fh.read(30)
        if len(head) < 30 or head[:4] != b"PK\x03\x04":
            raise RuntimeError(f"PytorchStreamReader failed reading file {name}: bad local "
                               f"header. {_CORRUPT}")
        name_len, extra_len = struct.unpack("<HH", head[26:30])
        return info.header_offset + 30 + name_len + extra_len, info.file_size
