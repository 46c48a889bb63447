"""Internal failures, typed: a bug in wgarray (or in a driver below it), never the
user's input. Each keeps what is needed to find the bug and chains its cause."""
from __future__ import annotations


class InternalError(RuntimeError):
    """wgarray did something wrong (not the caller): please report it with the message."""


class KernelCompileError(InternalError):
    """A generated kernel that the device's shader compiler rejects.

    ``key``: the kernel's cache key; ``name``: its label; ``wgsl``: its source text.
    The compiler's own error is the ``__cause__``."""

    def __init__(self, name: str, key, wgsl: str, cause: BaseException):
        self.name = name
        self.key = key
        self.wgsl = wgsl
        super().__init__(f"wgarray: internal error: kernel {name} does not compile (key {key!r}):\n"
                         f"{cause}\n--- WGSL ---\n{wgsl}")


class LaunchError(InternalError):
    """A dispatch whose buffers do not match its kernel's launch record (a binding
    missing, extra, out of order, or a group of the wrong length)."""
