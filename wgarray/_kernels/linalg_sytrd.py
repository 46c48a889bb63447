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

from .._wgsl import linalg_sytrd as ks
from .budget import loop_bound
from .linalg import launch

BLOCKED_MIN = 192   # order from which GPUs take this route (below: trd's one dispatch)
MAX_BATCH = 64      # matrices at most (more: trd's workgroup a matrix fills the device)


def _tcol_threads(device) -> int:
    """tcol's workgroup: as many as the device takes up to 1024 (its loops are over
    rows, its reductions trees), 64 on lavapipe (one CPU thread runs them all)."""
    if loop_bound(device) is not None:
        return 2 * ks.NB
    return min(1024, device.limits.get("max-compute-invocations-per-workgroup", 256))


def wanted(device, nz: int, n: int) -> bool:
    """Whether ``reduce`` should take nz matrices of order n."""
    return loop_bound(device) is None and n >= BLOCKED_MIN and nz <= MAX_BATCH


def reduce(device, wt: str, isz: int, nz: int, n: int, A, D, E, TAU) -> None:
    """Reduce the nz scaled symmetric matrices in A (full storage, as trd's init leaves
    them) to tridiagonal form: D, E, TAU and the reflectors in A's rows, as trd's
    phase 0 writes them."""
    rt = device.runtime
    nb = ks.NB
    cbm = -(-n // ks.CB)
    VW = rt.alloc(nz * n * 2 * nb * isz)
    AVP = rt.alloc(nz * cbm * n * isz)
    Y = rt.alloc(nz * 2 * nb * isz)
    wg = _tcol_threads(device)
    col = {"A": A, "VW": VW, "AVP": AVP, "Y": Y, "D": D, "E": E, "TAU": TAU}
    mv = {"A": A, "VW": VW, "Y": Y, "AVP": AVP}
    up = {"A": A, "VW": VW}
    cbn = 0
    for k0 in range(0, n - 2, nb):
        k1 = min(k0 + nb, n - 2)
        for k in range(k0, k1):
            launch(device, "linalg_sytrd_tcol", (wt, wg), ks.tcol_record, ks.render_tcol, col, nz,
                   nz=nz, n=n, k=k, i=k - k0, mode=0, cbn=cbn)
            m = n - k - 1
            rb, cbn = -(-m // ks.SW), -(-m // ks.CB)
            launch(device, "linalg_sytrd_tsymv", (wt,), ks.tsymv_record, ks.render_tsymv, mv, nz * rb * cbn,
                   nz=nz, n=n, k=k, i=k - k0, rb=rb, cbn=cbn)
        launch(device, "linalg_sytrd_tcol", (wt, wg), ks.tcol_record, ks.render_tcol, col, nz,
               nz=nz, n=n, k=k1, i=k1 - k0, mode=1, cbn=cbn)
        tiles = -(-(n - k1) // ks.TILE)
        launch(device, "linalg_sytrd_tupd", (wt,), ks.tupd_record, ks.render_tupd, up, nz * tiles * tiles,
               nz=nz, n=n, k1=k1, nbu=k1 - k0, tiles=tiles)
    launch(device, "linalg_sytrd_tcol", (wt, wg), ks.tcol_record, ks.render_tcol, col, nz,
           nz=nz, n=n, k=0, i=0, mode=2, cbn=0)
