"""The Array object: a handle on a lazy graph node, with a host mirror.

Nodes are values. ``x[key] = v`` on a realized array stores into its buffer (one small
dispatch over the region, ``_inplace``), copying first only when another value still
uses that buffer; on a pending array, and for ``x += y``, the handle is rebound to a new
node, which stays lazy and fuses. Views follow their bases by versions (``_View``).
Once data has been read to the host it is kept (``_host``) until the value changes, so
element-by-element reads cost no further GPU round trips.
"""
from __future__ import annotations

import builtins
import operator
import types
import weakref

import numpy as np

from . import _dtypes as dt
from . import _known
from ._graph import node as g
from ._graph.transfer import download, upload
from ._runtime.device import Device, default_device, resolve_device
from ._runtime.runtime import public_caller

# The namespace functions that Array's methods call (getitem, matmul, the elementwise
# operators, ...). Their modules import this one, so wgarray/__init__.py fills the table
# once every module is loaded: the methods look a name up here, not import it per call.
ns = types.SimpleNamespace()


class Array:
    __slots__ = ("_node", "_host", "_origin", "_view", "_version", "_views", "_element_read", "__weakref__")
    __array_priority__ = 100  # NumPy defers binary operators to us
    # ... and never runs a ufunc on our data behind the user's back: `numpy_array + x`
    # reaches our reflected operator, which asks for an explicit conversion.
    __array_ufunc__ = None

    def __init__(self, *args, **kwargs):
        raise TypeError("Array: use wgarray.asarray() or another creation function to make an array")

    @classmethod
    def _new(cls, node: g.Node) -> Array:
        if type(node) is not g.Data and g.prod(node.shape) * node.dtype.itemsize > _SURE_FITS:
            _check_fits(node)
        self = object.__new__(cls)
        self._node = node
        self._host = None
        self._origin = None  # (array, its version then, host key) for element copies, see _numpy
        self._view = None  # (base array, basic index, base's version then), see _View
        self._version = 0  # counts changes of value (not realizations)
        self._views = None  # weak references to the views made from this array (_inplace)
        self._element_read = -1  # the version at which one element alone was read, see _numpy
        return self

    def _sync(self) -> int:
        """This array's version, after following any change of its bases (views)."""
        view = self._view
        if view is not None:
            base, key, seen = view
            now = base._sync()
            if now != seen:
                _NODE.__set__(self, key.derive(base) if isinstance(key, Mapped) else ns.getitem(base, key)._node)
                self._host = None
                self._version += 1
                self._view = (base, key, now)
        return self._version

    def _assign(self, node: g.Node) -> None:
        """Give this array a new value (same shape and dtype), and its base too."""
        with node.device.runtime.lock:  # the write and the version it gives, as one step
            view = self._view
            if view is not None:  # the new value replaces what the base holds now (no re-sync)
                self._view = (view[0], view[1], view[0]._sync())
            self._node = node
            self._host = None
            self._origin = None  # an element copy now has a value of its own
            self._version += 1
            if view is not None:
                base, key, _ = view
                if isinstance(key, Mapped):
                    base[...] = Array._new(key.undo(node))
                else:
                    base[key] = self
                self._view = (base, key, base._version)

    # ----------------------------------------------------------- attributes
    @property
    def dtype(self) -> dt.DType:
        return self._node.dtype

    @property
    def device(self) -> Device:
        return self._node.device

    @property
    def shape(self) -> tuple[int, ...]:
        return self._node.shape

    @property
    def ndim(self) -> int:
        return len(self._node.shape)

    @property
    def size(self) -> int:
        return g.prod(self._node.shape)

    @property
    def T(self) -> Array:
        if self.ndim != 2:
            raise ValueError(f"Array.T: expected a 2-D array, got {self.ndim}-D; use matrix_transpose or permute_dims")
        return ns.permute_dims(self, (1, 0))

    @property
    def mT(self) -> Array:
        return ns.matrix_transpose(self)

    def __array_namespace__(self, *, api_version=None):
        if api_version is not None and api_version not in ("2021.12", "2022.12", "2023.12", "2024.12", "2025.12"):
            raise ValueError(f"__array_namespace__: unsupported api_version {api_version!r}")
        return ns.namespace

    # ----------------------------------------------------------- host data
    def _realize(self) -> g.Data:
        with self.device.runtime.lock:  # a write from another thread lands before or after
            data = g.realize(self._node)
            self._node = data
        return data

    def _numpy(self) -> np.ndarray:
        """The values on the host (cached; read-only)."""
        host = self._host
        if host is not None:
            return host
        with self.device.runtime.lock:  # the mirror and the value it mirrors, as one step
            if self._host is None:
                origin = self._origin
                if origin is not None and origin[0]._sync() == origin[1]:
                    # An element of an array that was never read: a small array is read
                    # whole, so that a loop over its elements costs one round trip; a
                    # larger one (up to _indexing.ELEMENT_READ_MIRRORS) at its second
                    # element read of the same value, so that one read moves one element
                    # (float(L[0, 0]) of a 1024 x 1024 result: 4 bytes, not 4 MiB) and a
                    # loop two round trips.
                    base = origin[0]
                    if base._element_read == origin[1] or g.prod(base.shape) <= ELEMENT_READ_WHOLE:
                        self._host = base._numpy()[origin[2]]
                        return self._host
                    base._element_read = origin[1]
                node = self._node
                # a small value computed from unchanged data and read before (``_known``)
                buf, key, host = _known.read(node) if g.prod(node.shape) <= _known.MAX_READ else (None, None, None)
                del node
                if host is None:
                    host = download(self._realize())
                    if buf is not None:
                        _known.keep_read(buf, key, host.copy())
                else:
                    host = host.copy()  # each array's mirror its own (a DLPack export may write it)
                host.flags.writeable = False
                self._host = host
            return self._host

    def __array__(self, dtype=None, copy=None):
        """The values as a new, writable NumPy array that the caller owns, as NumPy's
        and PyTorch's CPU arrays give: SciPy's and scikit-learn's compiled code writes
        into ``numpy.asarray(x)`` (or asks for a writable buffer). The host mirror itself
        stays private and read-only, so a write there can never disagree with the
        device; the copy is a host memcpy, after at most one readback."""
        if copy is False:
            raise ValueError("Array.__array__: data lives on a GPU device; a host array is always a copy")
        host = self._numpy()
        if dtype is not None and np.dtype(dtype) != host.dtype:
            return host.astype(dtype)
        return host.copy()

    def to_device(self, device, /, *, stream=None) -> Array:
        if stream is not None:
            raise ValueError("to_device: wgarray has no streams; expected stream=None")
        target = resolve_device(device, "to_device")
        if target is self.device:
            return self
        target.check_dtype(self.dtype, "to_device")
        return Array._new(upload(self._numpy(), target))

    # ----------------------------------------------------------- copies and pickling
    def __copy__(self) -> Array:
        """A new array with the same values (copied on the device; a view's copy is a
        plain array, as NumPy's)."""
        return ns.asarray(self, copy=True)

    def __deepcopy__(self, memo) -> Array:
        return self.__copy__()

    def __reduce__(self):
        """Pickles as the values (read back to the host) and the device they live on."""
        return (_unpickle, (np.array(self._numpy()), self.device))

    def __dlpack_device__(self):
        return (1, 0)  # kDLCPU: wgarray exports through a host copy

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        if dl_device is not None and tuple(dl_device) != (1, 0):
            raise BufferError(f"__dlpack__: can only export to the CPU (dl_device=(1, 0)), got {dl_device}")
        # The export is the host mirror (the CPU copy wgarray keeps once data has been
        # read): copy=False/None share it, copy=True hands out a fresh copy. Writing
        # through a shared export is undefined behaviour, as the standard says.
        host = self._numpy()
        if copy:
            host = host.copy()
        kwargs = {} if max_version is None else {"max_version": max_version}
        if host.flags.writeable or (max_version is not None and tuple(max_version) >= (1, 0)):
            return host.__dlpack__(**kwargs)  # a versioned capsule carries the read-only flag
        try:
            host.flags.writeable = True  # DLPack < 1.0 cannot mark an export read-only
        except ValueError:  # a mirror over read-only memory
            if copy is False:
                raise BufferError("__dlpack__: the host data is read-only; use copy=True") from None
            return host.copy().__dlpack__(**kwargs)
        try:
            return host.__dlpack__(**kwargs)
        finally:
            host.flags.writeable = False

    # ----------------------------------------------------------- conversions
    def _scalar(self, func: str):
        if self.size != 1:
            raise TypeError(f"{func}: only an array of one element converts to a Python scalar, got shape {self.shape}")
        return self._numpy().reshape(()).item()

    def __bool__(self) -> builtins.bool:
        return builtins.bool(self._scalar("__bool__"))

    def __int__(self) -> int:
        if self.dtype.kind == "c":
            raise TypeError("__int__: cannot convert a complex array to int")
        v = self._scalar("__int__")
        if isinstance(v, float) and (v != v or v in (float("inf"), float("-inf"))):
            raise (ValueError if v != v else OverflowError)(f"__int__: cannot convert {v} to int")
        return int(v)

    def __float__(self) -> float:
        if self.dtype.kind == "c":
            raise TypeError("__float__: cannot convert a complex array to float")
        return float(self._scalar("__float__"))

    def __complex__(self) -> complex:
        return complex(self._scalar("__complex__"))

    def __index__(self) -> int:
        if self.dtype.kind not in "iu":
            raise TypeError(f"__index__: expected an integer array, got {self.dtype}")
        return int(self._scalar("__index__"))

    # ----------------------------------------------------------- display
    def __repr__(self) -> str:
        body = np.array2string(self._numpy(), separator=", ", prefix="Array(")
        extra = "" if self.device is default_device() else f", device={self.device.name!r}"
        return f"Array({body}, dtype={self.dtype}{extra})"

    def __str__(self) -> str:
        return str(self._numpy())

    def __format__(self, spec: str) -> str:
        # as NumPy: a 0-d array formats as its scalar, a larger one only as str()
        if self.ndim == 0:
            return format(self._numpy().item(), spec)
        if spec:
            raise TypeError(f"__format__: expected a 0-d array for format spec {spec!r}, got shape {self.shape}")
        return str(self)

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of a 0-d array")
        return self.shape[0]

    def __iter__(self):
        if self.ndim == 0:  # raised by iter() itself, as NumPy does, not at the first next()
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    # ----------------------------------------------------------- indexing
    def __getitem__(self, key) -> Array:
        seen = self._sync()  # before the node: a write in between makes the view re-derive
        out = ns.getitem(self, key)
        if out is not self and _is_view_index(key, out.ndim):
            base = self
            if self._view is not None:  # a view of a view follows the root, with one key
                root, outer, seen = self._view  # just synced: seen is the root's version
                composed = None if isinstance(outer, Mapped) else ns.compose_view_key(root.shape, outer, self.shape, key)
                if composed is None:
                    seen = self._version
                else:
                    base, key = root, composed
            make_view(out, base, key, seen)
        return out

    def __setitem__(self, key, value) -> None:
        # under the runtime's lock: writes from several threads apply one at a time
        with self.device.runtime.lock:
            if not ns.setitem_inplace(self, key, value):
                self._assign(ns.setitem(self, key, value)._node)

    # ----------------------------------------------------------- operators
    def __matmul__(self, other):
        return ns.matmul(self, other) if _operand_ok(other, "__matmul__") else NotImplemented

    def __rmatmul__(self, other):
        return ns.matmul(other, self) if _operand_ok(other, "__rmatmul__") else NotImplemented

    def __imatmul__(self, other):
        return self._rebind(self.__matmul__(other))

    def _rebind(self, result):
        if result is NotImplemented:
            return result
        if result.shape != self.shape:
            raise ValueError(f"in-place operator: result shape {result.shape} differs from the array's {self.shape}")
        if result.dtype != self.dtype:
            raise TypeError(f"in-place operator: result dtype {result.dtype} differs from the array's {self.dtype}")
        self._assign(result._node)
        return self

    def __neg__(self):
        return ns.elementwise.negative(self)

    def __pos__(self):
        return ns.elementwise.positive(self)

    def __abs__(self):
        return ns.elementwise.abs(self)

    def __invert__(self):
        return ns.elementwise.bitwise_invert(self)


# WebGPU guarantees storage bindings of 128 MiB: a result this small fits on any
# device, and only a larger one pays for the lookup of the device's limit.
_SURE_FITS = 1 << 27
ELEMENT_READ_WHOLE = 1 << 12  # elements of an array read whole at its first element read


def _check_fits(node: g.Node) -> None:
    """Raise, at the call that makes it, for a lazy result that no buffer of its device
    can hold: it could only fail later, at its first read."""
    nbytes = g.prod(node.shape) * node.dtype.itemsize
    limit = node.device.max_array_bytes
    if nbytes > limit:
        raise MemoryError(f"{public_caller()}: expected a result of at most {limit} bytes (the largest array "
                          f"of {node.device.name!r}), got shape {node.shape} of {node.dtype}: {nbytes} bytes")




def _operand_ok(other, op: str = "in-place operator") -> builtins.bool:
    """Whether an operator takes ``other``: arrays, Python scalars, and NumPy scalars or
    0-d arrays (as Python scalars). A NumPy array of ndim >= 1 is an error, not a host
    computation: the user converts it explicitly (CuPy's rule)."""
    if isinstance(other, (Array, builtins.bool, int, float, complex, np.generic)):
        return True
    if isinstance(other, np.ndarray):
        if other.ndim == 0:
            return True
        raise TypeError(f"{op}: expected a wgarray Array or a scalar, got a NumPy array of shape {other.shape};"
                        " convert it with xp.asarray(...) first")
    return False


def _install_operators():
    """Binary operators, reflected and in-place forms, from the elementwise functions."""
    binary = {
        "add": "add", "sub": "subtract", "mul": "multiply", "truediv": "divide",
        "floordiv": "floor_divide", "mod": "remainder", "pow": "pow", "and": "bitwise_and",
        "or": "bitwise_or", "xor": "bitwise_xor", "lshift": "bitwise_left_shift",
        "rshift": "bitwise_right_shift",
    }
    compare = {"lt": "less", "le": "less_equal", "gt": "greater", "ge": "greater_equal",
               "eq": "equal", "ne": "not_equal"}

    def forward(fname):
        def op(self, other):
            t = type(other)
            if t is float or t is int or t is Array:  # the common lazy op (_core.fast_operator)
                out = ns.fast_operator(fname, self, other, True)
                if out is not None:
                    return out
            if not _operand_ok(other, fname):
                return NotImplemented
            return getattr(ns.elementwise, fname)(self, other)
        return op

    def reflected(fname):
        def op(self, other):
            t = type(other)
            if t is float or t is int:
                out = ns.fast_operator(fname, self, other, False)
                if out is not None:
                    return out
            if not _operand_ok(other, fname):
                return NotImplemented
            return getattr(ns.elementwise, fname)(other, self)
        return op

    def inplace(fname):
        def op(self, other):
            if not _operand_ok(other):
                return NotImplemented
            return self._rebind(getattr(ns.elementwise, fname)(self, other))
        return op

    for short, fname in binary.items():
        setattr(Array, f"__{short}__", forward(fname))
        setattr(Array, f"__r{short}__", reflected(fname))
        setattr(Array, f"__i{short}__", inplace(fname))
    for short, fname in compare.items():
        setattr(Array, f"__{short}__", forward(fname))
    Array.__hash__ = None


_install_operators()
del operator


def _is_view_index(key, ndim: int) -> bool:
    """Whether ``key`` makes a view of an array: integers, slices, Ellipsis and None
    only (basic indexing), except one element picked by integers alone (a copy, as
    NumPy's scalar; ``ndim``: the result's)."""
    items = key if isinstance(key, tuple) else (key,)
    ints = [isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_)) for k in items]
    if ndim == 0 and all(ints):
        return False
    return all(i or k is None or k is Ellipsis or isinstance(k, slice) for i, k in zip(ints, items))


class Mapped:
    """The key of a view that maps its base's whole value (permuted axes, a reshape):
    ``derive`` gives the view's node from the base, ``undo`` the base's node from a new
    value of the view, which ``Array._assign`` writes into the base."""

    __slots__ = ()


class Permuted(Mapped):
    """The key of a view made by permuting axes (permute_dims, moveaxis, ``.T``): as in
    NumPy, writing to it writes to its base (SciPy's oaconvolve adds into a swapped-axes
    slice of its result)."""

    __slots__ = ("axes", "inverse")

    def __init__(self, axes):
        self.axes = tuple(axes)
        inverse = [0] * len(self.axes)
        for i, a in enumerate(self.axes):
            inverse[a] = i
        self.inverse = tuple(inverse)

    def derive(self, base: Array) -> g.Node:
        return g.permute_view(base._node, self.axes)

    def undo(self, node: g.Node) -> g.Node:
        return g.permute_view(node, self.inverse)


class Reshaped(Mapped):
    """The key of a reshape that NumPy makes without a copy (the base's strides allow
    it): writing to it writes to its base, as in NumPy (SciPy's tanh-sinh fills the
    non-finite values of a reshaped transpose of its function values in place)."""

    __slots__ = ("shape", "base_shape", "strides")

    def __init__(self, shape, base_shape, strides):
        self.shape, self.base_shape, self.strides = tuple(shape), tuple(base_shape), tuple(strides)

    def derive(self, base: Array) -> g.Node:
        return g.reshape_view(base._node, self.shape)

    def undo(self, node: g.Node) -> g.Node:
        return g.reshape_view(node, self.base_shape)


def make_view(out: Array, base: Array, key, seen: int) -> None:
    """Make ``out`` a view of ``base`` by ``key`` (a basic index, or a Mapped key), as of
    ``base``'s version ``seen``."""
    out._view = (base, key, seen)
    out.__class__ = _View
    views = base._views
    if views is None:
        base._views = [weakref.ref(out)]
    else:
        if len(views) >= 8 and not len(views) & (len(views) - 1):  # amortized pruning
            views[:] = [r for r in views if r() is not None]
        views.append(weakref.ref(out))


_NODE = Array._node  # the slots' descriptors
_HOST = Array._host


class _View(Array):
    """An array made by basic indexing (integers, slices, ..., None): it shares its
    base's elements, as in NumPy, CuPy and PyTorch. Writing to it writes to the base
    (``Array._assign``), and it shows later writes to the base. Nodes are values, so the
    sharing is kept by versions: reading the node (or the host mirror) first re-derives
    it from the base if the base (or one of its own bases) has changed since. Only views
    pay for the check."""

    __slots__ = ()

    @property
    def _node(self) -> g.Node:
        self._sync()
        return _NODE.__get__(self, Array)

    @_node.setter
    def _node(self, node: g.Node) -> None:
        _NODE.__set__(self, node)

    @property
    def _host(self):
        self._sync()
        return _HOST.__get__(self, Array)

    @_host.setter
    def _host(self, host) -> None:
        _HOST.__set__(self, host)


def _unpickle(host: np.ndarray, device) -> Array:
    return ns.asarray(host, device=device)
