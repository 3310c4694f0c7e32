#!/usr/bin/env python3
"""Writes the .npy files that tests/core/test_npy.c reads, with NumPy itself
(run with /usr/bin/python3, which has python3-numpy). The files are committed,
so the test needs no NumPy; rerun only to add files. Values are simple
functions of the index that the test recomputes."""
import numpy as np
from numpy.lib import format as npf

def save(name, a, version=None):
    with open(name, "wb") as f:
        npf.write_array(f, a, version=version, allow_pickle=False)

save("f32_2x3.npy", (np.arange(6, dtype=np.float32) * 0.5 - 1).reshape(2, 3))
save("f64_scalar.npy", np.array(3.141592653589793, dtype=np.float64))
save("s32_4.npy", np.array([-2147483648, -1, 0, 2147483647], dtype=np.int32))
save("bool_2x2.npy", np.array([[True, False], [False, True]]))
save("u8_5.npy", np.array([0, 1, 127, 128, 255], dtype=np.uint8))
save("f32_0x3.npy", np.zeros((0, 3), dtype=np.float32))
save("f32_2x3x4_v2.npy", np.arange(24, dtype=np.float32).reshape(2, 3, 4), version=(2, 0))
save("f64_3_v3.npy", np.array([1.0, -0.0, 1e300]), version=(3, 0))
save("f32_special.npy", np.array([np.inf, -np.inf, np.nan, 1e-45, 3.4028235e38], dtype=np.float32))
save("s8_5.npy", np.array([-128, -1, 0, 1, 127], dtype=np.int8))
save("s16_4.npy", np.array([-32768, -1, 0, 32767], dtype=np.int16))
save("s64_4.npy", np.array([-2**63, -1, 0, 2**63 - 1], dtype=np.int64))
save("u16_3.npy", np.array([0, 1, 65535], dtype=np.uint16))
save("u32_3.npy", np.array([0, 1, 2**32 - 1], dtype=np.uint32))
save("u64_3.npy", np.array([0, 1, 2**64 - 1], dtype=np.uint64))
save("f16_6.npy", np.array([np.inf, -np.inf, np.nan, 2.0**-24, 65504.0, -0.0], dtype=np.float16))
# refused ones
save("bad_big_endian_f32.npy", np.arange(4, dtype=">f4"))
save("bad_fortran_2x3.npy", np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3)))
save("bad_c8.npy", np.arange(3, dtype=np.complex64))
save("bad_f16.npy", np.arange(3, dtype=np.longdouble))
save("bad_structured.npy", np.zeros(2, dtype=[("a", "<f4"), ("b", "<i4")]))
