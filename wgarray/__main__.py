"""Command line: ``python -m wgarray [info|kmeans|all]``.

``info`` reports the adapters wgpu finds, the device wgarray chose, its features, key
limits and dtypes. ``kmeans`` runs the main workload (see ``wgarray/_kmeans.py``) on
that device and with NumPy, and prints both times and their agreement. With no
argument, both run.
"""
from __future__ import annotations

import argparse
import sys


def info() -> None:
    import wgarray
    from wgarray._device import default_device, devices

    chosen = default_device()
    print("wgarray", wgarray.__array_api_version__, "(Array API version)")
    print("adapters:")
    for d in devices():
        mark = "*" if d is chosen else " "
        print(f"  {mark} {d.index}: {d.name}  [{d.backend}, {d.adapter_type}]")
    print(f"device: {chosen.name} ({chosen.backend}, {chosen.adapter_type})")
    print("  features:", ", ".join(sorted(chosen.features)) or "none")
    for key in ("max-buffer-size", "max-storage-buffer-binding-size", "max-storage-buffers-per-shader-stage",
                "max-compute-workgroup-storage-size", "max-compute-invocations-per-workgroup"):
        print(f"  {key}: {chosen.limits.get(key)}")
    print("  dtypes:", ", ".join(wgarray.__array_namespace_info__().dtypes(device=chosen)))
    print("  int64:", "native" if chosen.has_int64 else "emulated (two u32 words)")
    print("  default float:", chosen.default_float)
    from wgarray._numerics import float32_behaviour

    print("  " + float32_behaviour(chosen).describe())


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m wgarray", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", nargs="?", default="all", choices=("info", "kmeans", "all"))
    parser.add_argument("--n", type=int, default=1_000_000, help="k-means: number of points")
    parser.add_argument("--d", type=int, default=32, help="k-means: dimensions")
    parser.add_argument("--k", type=int, default=16, help="k-means: clusters")
    parser.add_argument("--iters", type=int, default=10, help="k-means: Lloyd iterations")
    args = parser.parse_args(argv)
    if args.command in ("info", "all"):
        info()
    if args.command in ("kmeans", "all"):
        from wgarray._kmeans import run

        print()
        return run(n=args.n, d=args.d, k=args.k, iters=args.iters)
    return 0


if __name__ == "__main__":
    sys.exit(main())
