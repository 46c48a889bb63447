"""Host side of the blocked tridiagonal reduction (kernels: ``_wgsl/linalg_sytrd.py``):
the route of ``linalg_trd.eigh`` from order ``BLOCKED_MIN`` on GPUs.

Why: the one-workgroup reduction (``trd``) streams the trailing matrix through one
core twice a column; at order 1024 on an NVIDIA H200 that was 135 of eigh's 159 ms.
Here each column costs two dispatches: ``tcol`` (one workgroup a matrix: the
column's update against its panel, its reflector, the small products) and ``tsymv``
(the matrix-vector product over all cores); each panel of NB columns ends with
``tupd``, the rank-2 NB update of the trailing matrix. Order n: about 2 n + 2 n / NB
dispatches, all in order on the queue, no readback.
"""
from __future__ import annotations

import struct

from .._wgsl import linalg_sytrd as ks
from .budget import loop_bound
from .linalg import launch

BLOCKED_MIN = 320   # order from which GPUs take this route (H200: eigvalsh 256 8.4 ms by trd, ~10 blocked; 384: 18 vs 11)
MAX_BATCH = 64      # matrices at most (more: trd's workgroup a matrix fills the device)


def _tcol_threads(device) -> int:
    """tcol's workgroup: as many as the device takes up to 1024 (its loops are over
    rows, its reductions trees), 64 on lavapipe (one CPU thread runs them all)."""
    if loop_bound(device) is not None:
        return 2 * ks.NB
    return min(1024, device.limits.get("max-compute-invocations-per-workgroup", 256))


# tcol's sums by subgroups where the device has them (float32)
SUBGROUP_SUMS = True


def _tcol_subgroups(device, wt: str, wg: int) -> int:
    """The subgroup size tcol's sums use (``ks.render_tcol``'s sg), or 0: float32 on a
    device with full subgroups of consecutive invocations, wg / lanes <= lanes."""
    lanes = device.runtime.subgroup_size
    if not SUBGROUP_SUMS or wt != "f32" or not lanes or wg % lanes or wg // lanes > lanes:
        return 0
    return lanes


def wanted(device, nz: int, n: int) -> bool:
    """Whether ``reduce`` should take nz matrices of order n."""
    return loop_bound(device) is None and n >= BLOCKED_MIN and nz <= MAX_BATCH


def init(device, wt: str, isz: int, nz: int, n: int, src, A, SC) -> None:
    """trd's init over the whole device (``tinit``, two dispatches): A (nz x n x n)
    the symmetric matrices of the lower triangles of ``src`` (a contiguous Data of
    the work dtype) scaled by a power of two each, the powers' inverses into SC; the
    same values as trd's own init, which runs in one workgroup a matrix (0.9 ms at
    order 1024 on an H200, and at most order MAX_N)."""
    bufs = {"SRC": src.buf, "A": A, "PM": device.runtime.alloc(nz * ks.INIT_CHUNKS * isz), "SC": SC}
    for mode, blocks in ((0, ks.INIT_CHUNKS), (1, -(-n * n // ks.INIT_WG))):
        launch(device, "linalg_sytrd_tinit", (wt,), ks.tinit_record, ks.render_tinit, bufs, nz * blocks,
               nz=nz, n=n, off=src.offset, s_mat=n * n, mode=mode, blocks=blocks)


def reduce(device, wt: str, isz: int, nz: int, n: int, A, D, E, TAU) -> None:
    """Reduce the nz scaled symmetric matrices in A (full storage, as trd's init leaves
    them) to tridiagonal form: D, E, TAU and the reflectors in A's rows, as trd's
    phase 0 writes them.

    The ~2 n dispatches go straight to the runtime, each kernel and its buffers in
    binding order looked up once and the parameters packed by one Struct: the host's
    share per dispatch is the runtime's own. None counts towards the batch's bytes
    (``held=()``): every buffer here lives for the whole reduction, so no batch needs
    submitting early to free temporaries (A's 8 MiB at order 1024 in float64 would
    otherwise submit every ~30 dispatches)."""
    rt = device.runtime
    nb = ks.NB
    cw = ks.chunk_cols(n)
    cbm = -(-n // cw)
    VW = rt.alloc(nz * n * 2 * nb * isz)
    AVP = rt.alloc(nz * cbm * n * isz)
    Y = rt.alloc(nz * -(-n // ks.SW) * 2 * nb * isz)
    wg = _tcol_threads(device)
    bufs = {"A": A, "VW": VW, "AVP": AVP, "Y": Y, "D": D, "E": E, "TAU": TAU}

    def kernel(family, spec, rec, ren):
        k = rt.compile((family, spec), lambda: (rec(*spec), ren(*spec)))
        return k, k.record.buffers({b.name: bufs[b.name] for b in k.record.args})

    tcol, tcol_b = kernel("linalg_sytrd_tcol", (wt, wg, _tcol_subgroups(device, wt, wg), cw), ks.tcol_record,
                          ks.render_tcol)
    symv, symv_b = kernel("linalg_sytrd_tsymv", (wt, cw), ks.tsymv_record, ks.render_tsymv)
    tupd, tupd_b = kernel("linalg_sytrd_tupd", (wt,), ks.tupd_record, ks.render_tupd)
    seven, six, five = struct.Struct("<7I").pack, struct.Struct("<6I").pack, struct.Struct("<5I").pack
    dispatch = rt.dispatch
    cbn = rb = 0
    for k0 in range(0, n - 2, nb):
        k1 = min(k0 + nb, n - 2)
        for k in range(k0, k1):
            dispatch(tcol, tcol_b, seven(nz, n, k, k - k0, 0, cbn, rb), nz, ())  # tcol: mode 0
            m = n - k - 1
            rb, cbn = -(-m // ks.SW), -(-m // cw)
            dispatch(symv, symv_b, six(nz, n, k, k - k0, rb, cbn), nz * rb * cbn, ())
        dispatch(tcol, tcol_b, seven(nz, n, k1, k1 - k0, 1, cbn, rb), nz, ())  # mode 1: the panel's last w
        tiles = -(-(n - k1) // ks.TILE)
        dispatch(tupd, tupd_b, five(nz, n, k1, k1 - k0, tiles), nz * tiles * tiles, ())
    dispatch(tcol, tcol_b, seven(nz, n, 0, 0, 2, 0, 0), nz, ())  # mode 2: the last 2 x 2 block
