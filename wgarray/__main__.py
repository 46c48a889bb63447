"""Command line: python -m wgarray [info|kmeans|all]."""
from __future__ import annotations

import argparse
import sys

import wgarray
from wgarray._kmeans import run
from wgarray._runtime.device import default_device, devices
from wgarray._runtime.numerics import float32_behaviour

DESCRIPTION = """\
commands:
  info     the adapters wgpu finds, the device wgarray chose, its features, key limits
           and dtypes
  kmeans   the main job: k-means (Lloyd's algorithm, written only against the Array API)
           on that device and with NumPy on the host, on the same data; prints the
           median time of each after a warm-up, and whether the results agree
  all      both (the default)

environment:
  WGARRAY_DEVICE=<index or name substring>   pick the device (see 'info')
  WGARRAY_DISABLE_FEATURES=shader-f64,...    hide adapter features
"""


def info() -> None:
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
    print("  " + float32_behaviour(chosen).describe())


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m wgarray", description=DESCRIPTION,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", nargs="?", default="all", choices=("info", "kmeans", "all"))
    parser.add_argument("--n", type=int, default=None,
                        help="k-means: number of points (default 1,000,000; 100,000 on a CPU software driver)")
    parser.add_argument("--d", type=int, default=32, help="k-means: dimensions (default 32)")
    parser.add_argument("--k", type=int, default=16, help="k-means: clusters (default 16)")
    parser.add_argument("--iters", type=int, default=10, help="k-means: Lloyd iterations (default 10)")
    parser.add_argument("--repeat", type=int, default=5,
                        help="k-means: timed runs of each side; the median is reported (default 5)")
    args = parser.parse_args(argv)
    try:
        default_device()
    except (ValueError, RuntimeError) as exc:
        # A bad WGARRAY_DEVICE or feature name, or no adapter: the message says it all.
        print(f"python -m wgarray: {exc}", file=sys.stderr)
        return 2
    if args.command in ("info", "all"):
        info()
    if args.command in ("kmeans", "all"):
        print()
        return run(n=args.n, d=args.d, k=args.k, iters=args.iters, repeat=args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
