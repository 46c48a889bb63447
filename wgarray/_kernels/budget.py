"""How long one invocation of a kernel may loop: the one place the kernel families read
the device's bound.

Mesa's lavapipe (CPU Vulkan) ends every loop of an invocation, silently, once 65535
loop iterations of all its loops together have run (``Device.max_loop_iterations``).
Kernels that loop over data therefore split their work over more invocations or
dispatches, planned against one of the two numbers below.
"""
from __future__ import annotations

# Loop iterations per invocation that one dispatch of a phased kernel (the LU, QR,
# Jacobi and eig kernels, the blocked panels) is planned for, on every device: a margin
# under lavapipe's bound there, and short dispatches beside a GPU's watchdog elsewhere.
PHASE_LOOPS = 40000


def loop_bound(device) -> int | None:
    """The loop iterations per invocation to plan for where ``device`` bounds them
    (``PHASE_LOOPS``, or the device's bound where lower), None where it does not: for
    kernels that split only there (matmul's K range, the eigen solvers' rounds)."""
    limit = device.max_loop_iterations
    return None if limit is None else min(PHASE_LOOPS, limit)


def phase_budget(device) -> int:
    """The loop iterations per invocation that one dispatch of a phased kernel is
    planned for on ``device``."""
    bound = loop_bound(device)
    return PHASE_LOOPS if bound is None else bound
