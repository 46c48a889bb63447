"""The launch record of a kernel: what its WGSL and its driver must agree on, stated once.

A ``Launch`` names, for one kernel:

- ``args``: its storage bindings in binding order. A ``Binding`` is one buffer (WGSL
  name, element type, written or read-only, ``array<elem>`` or a single ``elem``); a
  ``Group`` is a run of consecutive bindings that a driver passes as one sequence (the
  buffers of a fused input, the inputs of a fused elementwise kernel);
- ``params``: the parameter block's layout, named ``Field``s at word offsets: single
  words (``u32``, ``i32``, ``f32``) and ``block``s (a nested run of words, such as a
  fused input's ``param_words``), each block at an even word so that its f64 scalars
  line up with ``PD`` (the same bytes read as ``array<f64>``); ``f64_params`` says
  whether the kernel reads ``PD``;
- ``workgroup``: its workgroup size (threads), for the driver's workgroup counts.

Both sides read it. The renderer writes the declarations with ``record.declarations()``
(storage bindings from 0, then ``P`` and, with ``f64_params``, ``PD``), never by hand.
The runtime makes the pipeline layout from it (``record.writes``, ``f64_params``), and a
dispatch passes its buffers by name, which ``record.buffers`` checks::

    key = ("scan", spec)                      # (family, structure-only spec)
    kernel = rt.compile(key, lambda: (sc.launch_record(spec), sc.render(spec)))
    rt.launch(kernel, {"in0": fi.buffers, "O": out, "X": offsets}, params, groups)

A missing, extra or misordered name, or a group of the wrong length, raises
``LaunchError`` naming the kernel and the binding.

Kernel keys have one shape for the whole project: ``(family, spec)``, a family name
and a hashable value of structure only (op names, dtypes, ranks, layout classes, tile
sizes, device capabilities that change the code), never sizes or scalar values, which
travel in the parameter block. ``rt.compile`` refuses another shape.

With ``WGARRAY_LOG_KERNELS=1`` in the environment (or ``wgarray.debug.log_kernels()``)
every kernel compiled is written to standard error: its key, then its WGSL.

Converting a family from the older ``rt.kernel(key, build)`` path, where ``build()``
returns ``(name, wgsl, writes, f64_params)`` and ``rt.dispatch`` takes a list:

1. in the renderer module, write ``launch_record(spec) -> Launch`` (the bindings in
   the order the WGSL declared them, the parameter fields it reads), and let the
   renderer emit ``record.declarations()`` in place of its ``@group/@binding`` lines;
   a fused input's bindings are ``elementwise.input_group(spec, prefix)``;
2. in the driver, key the kernel ``(family, spec)``, build with
   ``rt.compile(key, lambda: (record, wgsl))``, and dispatch with
   ``rt.launch(kernel, {name: buffer or [buffers]}, params, groups)``;
3. pack the parameters with ``record.pack(name=value, ...)`` (words by field name,
   blocks at their even words), or where a hot path packs by hand, with ``pad_even``,
   ``param_bases`` and ``pack_words`` (head words, then blocks at even words: what
   ``_indexing._pack`` and ``_wgsl.gather._param_bases`` do) from here, and count
   workgroups with ``workgroups``; no family keeps a padding helper of its own.
Every kernel family of the package is converted (``tests/unit/test_layering.py`` keeps it
so); ``rt.kernel`` / ``rt.dispatch`` stay for hand-written WGSL outside the package, such
as the benchmarks' roofline kernels.
"""
from __future__ import annotations

import os
import struct
import sys
from dataclasses import dataclass, field

from .errors import InternalError, LaunchError

__all__ = ["Binding", "Group", "Field", "Launch", "check_key", "pad_even", "even", "param_bases", "pack_words",
           "workgroups", "log_kernels"]


# --------------------------------------------------------------------- padding

def even(words: int) -> int:
    """``words`` rounded up to even: where the next parameter block may start."""
    return words + words % 2


def pad_even(block: bytes) -> bytes:
    """``block`` padded with zero bytes to a whole number of 8-byte (two-word) units."""
    return block + b"\0" * (-len(block) % 8)


def param_bases(first: int, sizes) -> list[int]:
    """Even word offsets for consecutive parameter blocks of ``sizes`` words, the first
    at ``first`` (rounded up to even)."""
    bases = []
    w = even(first)
    for n in sizes:
        bases.append(w)
        w += even(n)
    return bases


def pack_words(head, blocks=()) -> tuple[bytes, list[int]]:
    """A parameter block without a record's field names: the ``head`` words (ints, as
    u32 modulo 2**32), then each of ``blocks`` (bytes) at an even word. Returns the bytes
    and each block's word offset (for the renderer: ``param_bases``'s)."""
    bases = param_bases(len(head), [len(b) // 4 for b in blocks])
    out = bytearray(struct.pack(f"<{len(head)}I", *(w & 0xFFFFFFFF for w in head)))
    for block, base in zip(blocks, bases):
        out += b"\0" * (4 * base - len(out))
        out += block
    return bytes(out), bases


def workgroups(threads: int, size: int = 256) -> int:
    """Workgroups of ``size`` threads that cover ``threads`` (the runtime folds counts
    past 65535 into two dimensions)."""
    return -(-threads // size)


# --------------------------------------------------------------------- records

@dataclass(frozen=True)
class Binding:
    """One storage buffer: WGSL variable ``name`` of type ``array<elem>`` (or ``elem``
    where not ``array``), read-only unless ``write``."""

    name: str
    elem: str = "u32"
    write: bool = False
    array: bool = True

    def declaration(self, index: int) -> str:
        mode = "read_write" if self.write else "read"
        ty = f"array<{self.elem}>" if self.array else self.elem
        return f"@group(0) @binding({index}) var<storage, {mode}> {self.name}: {ty};"


@dataclass(frozen=True)
class Group:
    """Consecutive bindings passed by the driver as one sequence of buffers, ``name``."""

    name: str
    bindings: tuple[Binding, ...]


_WORD_TYPES = {"u32": "<I", "i32": "<i", "f32": "<f"}


@dataclass(frozen=True)
class Field:
    """A named part of the parameter block: one word of ``type`` u32/i32/f32, or a
    ``block`` of words (bytes). ``offset`` in words; a field without one follows the
    one before it (a block at the next even word after the bytes packed so far)."""

    name: str
    type: str = "u32"
    offset: int | None = None


@dataclass(frozen=True)
class Launch:
    """The launch record of one kernel (see the module doc): ``name`` (its label in
    profiles and errors), ``args`` (Bindings and Groups, in binding order), ``params``
    (Fields), ``f64_params`` (binds ``PD``) and ``workgroup`` (threads per workgroup)."""

    name: str
    args: tuple = ()
    params: tuple[Field, ...] = ()
    f64_params: bool = False
    workgroup: int | None = 256
    # derived once (not part of equality)
    bindings: tuple[Binding, ...] = field(init=False, compare=False, repr=False)
    writes: tuple[bool, ...] = field(init=False, compare=False, repr=False)
    arg_names: tuple[str, ...] = field(init=False, compare=False, repr=False)
    _sizes: tuple = field(init=False, compare=False, repr=False)
    _flat: bool = field(init=False, compare=False, repr=False)
    _offsets: dict = field(init=False, compare=False, repr=False)
    _head: tuple = field(init=False, compare=False, repr=False)

    def __post_init__(self):
        flat, names, sizes = [], [], []
        for a in self.args:
            names.append(a.name)
            if type(a) is Group:
                flat.extend(a.bindings)
                sizes.append(len(a.bindings))
            else:
                flat.append(a)
                sizes.append(None)
        if len(set(names)) != len(names) or len({b.name for b in flat}) != len(flat):
            raise InternalError(f"launch record {self.name}: binding names repeat: {names}")
        offsets = {}
        word = 0  # the next free word while every field before is of known size; else None
        for f in self.params:
            if f.type != "block" and f.type not in _WORD_TYPES:
                raise InternalError(f"launch record {self.name}: parameter {f.name} of unknown type {f.type}")
            at = f.offset
            if at is None and word is not None:
                at = even(word) if f.type == "block" else word
            if f.type == "block" and at is not None and at % 2:
                raise InternalError(f"launch record {self.name}: parameter block {f.name} at odd word {at}")
            offsets[f.name] = at
            word = None if at is None or f.type == "block" else at + 1
        # pack's fast path: the word fields before the first block as one struct format,
        # then the blocks (None where a word field follows a block: the general loop)
        fmt, head_names, blocks = "<", [], []
        pos = 0
        for f in self.params:
            at = offsets[f.name]
            if f.type != "block" and not blocks and at is not None and at >= pos:
                fmt += "x" * (4 * (at - pos)) + _WORD_TYPES[f.type][1]
                head_names.append(f.name)
                pos = at + 1
            elif f.type == "block" and (blocks or at is None or at >= pos):
                if not blocks and at is not None:
                    fmt += "x" * (4 * (at - pos))
                blocks.append((f.name, None if at is None else 4 * at))
            else:
                fmt = None
                break
        object.__setattr__(self, "_head", (fmt, tuple(head_names), tuple(blocks)) if fmt is not None else None)
        object.__setattr__(self, "bindings", tuple(flat))
        object.__setattr__(self, "writes", tuple(b.write for b in flat))
        object.__setattr__(self, "arg_names", tuple(names))
        object.__setattr__(self, "_sizes", tuple(sizes))
        object.__setattr__(self, "_flat", all(s is None for s in sizes))
        object.__setattr__(self, "_offsets", offsets)

    # ---------------------------------------------------------------- WGSL side
    @property
    def n_bindings(self) -> int:
        return len(self.bindings)

    def binding_declarations(self) -> list[str]:
        return [b.declaration(i) for i, b in enumerate(self.bindings)]

    def params_declarations(self) -> list[str]:
        """``P`` (the parameter words) after the storage bindings, and ``PD`` (the same
        bytes as f64) where the kernel has f64 parameters."""
        n = len(self.bindings)
        decls = [f"@group(0) @binding({n}) var<storage, read> P: array<u32>;"]
        if self.f64_params:
            decls.append(f"@group(0) @binding({n + 1}) var<storage, read> PD: array<f64>;")
        return decls

    def declarations(self) -> list[str]:
        """Every binding declaration of the kernel, one line each, in binding order."""
        return self.binding_declarations() + self.params_declarations()

    def offset(self, name: str) -> int:
        """The word at which parameter field ``name`` starts."""
        at = self._offsets.get(name)
        if at is None:
            raise InternalError(f"kernel {self.name}: no parameter field {name!r} at a fixed word "
                                f"(fields: {[f.name for f in self.params]})")
        return at

    # ---------------------------------------------------------------- driver side
    def pack(self, **values) -> bytes:
        """The parameter block: each field from ``values`` (ints/floats for words, bytes
        for blocks; a field left out is zero or empty), blocks padded to even words."""
        if not values.keys() <= self._offsets.keys():
            raise InternalError(f"kernel {self.name}: no parameter fields {sorted(values.keys() - self._offsets.keys())}")
        head = self._head
        if head is not None:
            fmt, names, blocks = head
            out = bytearray(struct.pack(fmt, *[values.get(n, 0) for n in names]))
            for name, at in blocks:
                if at is None:
                    out += b"\0" * (-len(out) % 8)
                elif len(out) > at:
                    raise InternalError(f"kernel {self.name}: parameter {name} at word {at // 4} "
                                        f"overlaps the field before it")
                else:
                    out += b"\0" * (at - len(out))
                v = values.get(name)
                if v:
                    out += v
                    out += b"\0" * (-len(v) % 8)
            return bytes(out)
        out = bytearray()
        for f in self.params:
            at = self._offsets[f.name]
            if at is None:
                at = len(out) + (-len(out) % 8)
            else:
                at *= 4
                if len(out) > at:
                    raise InternalError(f"kernel {self.name}: parameter {f.name} at word {at // 4} "
                                        f"overlaps the field before it")
            out += b"\0" * (at - len(out))
            v = values.get(f.name)
            if f.type == "block":
                if v:
                    out += pad_even(v)
            else:
                out += struct.pack(_WORD_TYPES[f.type], v if v is not None else 0)
        return bytes(out)

    def buffers(self, given) -> list:
        """The buffers of a dispatch in binding order, from ``given`` (a dict keyed by
        ``arg_names``, in that order; a group's value a sequence of its length)."""
        if tuple(given) != self.arg_names:
            self._mismatch(given)
        if self._flat:
            return list(given.values())
        out = []
        for value, size, name in zip(given.values(), self._sizes, self.arg_names):
            if size is None:
                out.append(value)
            else:
                if len(value) != size:
                    raise LaunchError(f"kernel {self.name}: binding group {name!r} expects {size} buffers, "
                                      f"got {len(value)}")
                out.extend(value)
        return out

    def _mismatch(self, given) -> None:
        names = tuple(given)
        missing = [n for n in self.arg_names if n not in names]
        extra = [n for n in names if n not in self.arg_names]
        if missing:
            what = f"binding {missing[0]!r} missing"
        elif extra:
            what = f"unknown binding {extra[0]!r}"
        else:
            at = next(i for i, (a, b) in enumerate(zip(names, self.arg_names)) if a != b)
            what = f"binding {names[at]!r} out of order (expected {self.arg_names[at]!r} at position {at})"
        raise LaunchError(f"kernel {self.name}: {what}; expected buffers {list(self.arg_names)}, got {list(names)}")


def check_key(key) -> None:
    """Refuse a kernel key of another shape than ``(family, spec)`` (at a cache miss)."""
    if not (type(key) is tuple and len(key) == 2 and type(key[0]) is str):
        raise InternalError(f"kernel key {key!r}: expected (family, spec)")
    hash(key)


# --------------------------------------------------------------------- logging

_log = {"stream": sys.stderr if os.environ.get("WGARRAY_LOG_KERNELS", "") not in ("", "0") else None}


def log_kernels(stream=sys.stderr) -> None:
    """Write every kernel compiled from now on (key, then WGSL) to ``stream``; None stops."""
    _log["stream"] = stream


def log_compiled(key, record: Launch, wgsl: str) -> None:
    stream = _log["stream"]
    if stream is not None:
        print(f"wgarray: compiling kernel {record.name} key={key!r}\n{wgsl}", file=stream, flush=True)
