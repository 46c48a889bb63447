"""wgarray: the Python Array API standard (2025.12) on WebGPU.

Every function runs on a wgpu device (Vulkan, Metal, DX12; Mesa's lavapipe when there
is no GPU) through WGSL kernels generated at run time. Chains of elementwise operations
are fused lazily into single kernels; ``evaluate`` forces pending work.
"""
from __future__ import annotations

import sys as _sys

__array_api_version__ = "2025.12"
__version__ = "0.1.0"

from ._dtypes import (  # noqa: F401
    bool, complex64, complex128, float32, float64, int8, int16, int32, int64,
    uint8, uint16, uint32, uint64,
)
from ._array import Array
from ._constants import e, inf, nan, newaxis, pi
from ._creation_functions import *  # noqa: F401,F403
from ._creation_functions import __all__ as _creation_all
from ._data_type_functions import *  # noqa: F401,F403
from ._data_type_functions import __all__ as _data_type_all
from ._elementwise_functions import *  # noqa: F401,F403
from ._elementwise_functions import __all__ as _elementwise_all
from ._indexing_functions import *  # noqa: F401,F403
from ._indexing_functions import __all__ as _indexing_all
from ._linear_algebra_functions import *  # noqa: F401,F403
from ._linear_algebra_functions import __all__ as _linalg_main_all
from ._manipulation_functions import *  # noqa: F401,F403
from ._manipulation_functions import __all__ as _manipulation_all
from ._searching_functions import *  # noqa: F401,F403
from ._searching_functions import __all__ as _searching_all
from ._set_functions import *  # noqa: F401,F403
from ._set_functions import __all__ as _set_all
from ._sorting_functions import *  # noqa: F401,F403
from ._sorting_functions import __all__ as _sorting_all
from ._statistical_functions import *  # noqa: F401,F403
from ._statistical_functions import __all__ as _statistical_all
from ._utility_functions import *  # noqa: F401,F403
from ._utility_functions import __all__ as _utility_all
from . import fft, linalg, special
from ._extra_functions import bincount, median, nanmax, nanmean, nanmin, nansum  # noqa: F401 - beyond the standard
from ._runtime.device import Device, devices
from ._info import __array_namespace_info__
from ._evaluate import evaluate
from ._validation import AxisError
from . import debug
from . import _array, _core, _elementwise_functions, _indexing

# what Array's methods call (see wgarray._array.ns)
_array.ns.__dict__.update(
    namespace=_sys.modules[__name__], elementwise=_elementwise_functions, asarray=asarray, matmul=matmul,
    matrix_transpose=matrix_transpose, permute_dims=permute_dims, getitem=_indexing.getitem, setitem=_indexing.setitem,
    setitem_inplace=_indexing.setitem_inplace, compose_view_key=_indexing.compose_view_key,
    fast_operator=_core.fast_operator)

__all__ = (
    ["__array_api_version__", "__array_namespace_info__", "Array", "Device", "devices", "evaluate", "debug",
     "AxisError",
     "e", "inf", "nan", "newaxis", "pi",
     "bool", "complex64", "complex128", "float32", "float64", "int8", "int16", "int32", "int64",
     "uint8", "uint16", "uint32", "uint64"]
    + ["fft", "linalg"]
    + _creation_all + _data_type_all + _elementwise_all + _indexing_all + _linalg_main_all
    + _manipulation_all + _searching_all + _set_all + _sorting_all + _statistical_all + _utility_all
)
