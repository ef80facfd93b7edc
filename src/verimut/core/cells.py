"""A manifest's cells held packed: compressed blocks of their JSON, each cell decoded when it is read.

A swap census of 1,000 tasks has a million cells; decoded at once they are about 1.5 GB (each a struct, its ids,
its detail dict, its note and start sentences), which every command that reads the manifest held for its whole
run. Packed, they are a few tens of MB: blocks of `BLOCK` cells, zlib-compressed, decoded one block at a time
as a pass reaches them (a pass over a million cells decodes for a few seconds). `expand` turns a cell as
manifest.json holds it into the cell the stages see (the swap census puts back its run and sentences:
`pairs.expanded`), also when it is read. A `Packed` is a read-only `Sequence[Cell]`: iteration is in manifest
order, and each read gives a new, equal Cell.
"""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, overload

import msgspec

from verimut.core.records import Cell, Manifest, content_hash

BLOCK = 1024  # cells a block: a pass decodes one block at a time
_decode = msgspec.json.Decoder(list[Cell]).decode
_sorted = msgspec.json.Encoder(order="sorted")  # as `content_hash` encodes: the blocks hash as they are


def _same(cell: Cell) -> Cell:
    return cell


class Packed(Sequence[Cell]):
    """Cells as compressed blocks of their JSON (`pack`), decoded (and `expand`ed) when read."""

    def __init__(self, blocks: list[bytes], count: int, expand: Callable[[Cell], Cell] = _same) -> None:
        self._blocks, self._count, self._expand = blocks, count, expand
        self._last: tuple[int, list[Cell]] | None = None  # the block read last, for reads by index

    @classmethod
    def pack(cls, encoded: Iterable[bytes]) -> Packed:
        """From each cell's JSON (`msgspec.json.encode(cell)`), in order."""
        blocks: list[bytes] = []
        count, block = 0, list[bytes]()
        for data in encoded:
            block.append(data)
            count += 1
            if len(block) == BLOCK:
                blocks.append(_compress(block))
                block = []
        if block:
            blocks.append(_compress(block))
        return cls(blocks, count)

    @classmethod
    def of(cls, cells: Iterable[Cell]) -> Packed:
        """From cells, each held as its sorted JSON (as the manifest's hash encodes it)."""
        return cls.pack(_sorted.encode(c) for c in cells)

    def stored(self) -> Packed:
        """The cells as packed, not expanded."""
        return Packed(self._blocks, self._count)

    def json_blocks(self) -> Iterator[bytes]:
        """Each block as its JSON array of the cells as packed."""
        for block in self._blocks:
            yield zlib.decompress(block)

    def expanded(self, expand: Callable[[Cell], Cell]) -> Packed:
        """The same cells, each read through `expand` (a function of the stored cell alone: picklable)."""
        return Packed(self._blocks, self._count, expand)

    def _block(self, k: int) -> list[Cell]:
        if self._last is not None and self._last[0] == k:
            return self._last[1]
        cells = [self._expand(c) for c in _decode(zlib.decompress(self._blocks[k]))]
        self._last = (k, cells)
        return cells

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> Cell: ...

    @overload
    def __getitem__(self, index: slice) -> list[Cell]: ...

    def __getitem__(self, index: int | slice) -> Cell | list[Cell]:
        if isinstance(index, slice):
            return [self[k] for k in range(*index.indices(self._count))]
        k = index + self._count if index < 0 else index
        if not 0 <= k < self._count:
            raise IndexError("cell index out of range")
        return self._block(k // BLOCK)[k % BLOCK]

    def __iter__(self) -> Iterator[Cell]:
        for k in range(len(self._blocks)):
            # Not through `_block`'s one-block cache: a pass lets each block go once read.
            yield from (self._expand(c) for c in _decode(zlib.decompress(self._blocks[k])))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]  # mutable-looking: like a list, not hashable

    def __repr__(self) -> str:
        return f"Packed({self._count} cells in {len(self._blocks)} blocks)"

    def __getstate__(self) -> dict[str, Any]:
        return {"_blocks": self._blocks, "_count": self._count, "_expand": self._expand, "_last": None}


def manifest_hash(m: Manifest) -> str:
    """`content_hash`, taken a block of cells at a time when they are packed (packed as the hash encodes them),
    so the manifest of a million cells is never encoded whole."""
    if not isinstance(m.cells, Packed):
        return content_hash(m)
    head = msgspec.structs.replace(m, cells=[], content_hash="")
    before, after = _sorted.encode(head).split(b'"cells":[]', 1)  # the first: no string holds a bare quote
    digest = hashlib.sha256(before + b'"cells":[')
    for k, block in enumerate(m.cells.json_blocks()):
        digest.update((b"," if k else b"") + block[1:-1])
    digest.update(b"]" + after)
    return digest.hexdigest()


def _compress(block: Sequence[bytes]) -> bytes:
    return zlib.compress(b"[" + b",".join(block) + b"]", 1)
