"""Kernels for the parameter-role tests (tests/test_params.py): every use irdiff/diagnose/params.py reads from TTIR,
each by one parameter. ``roles_b`` is ``roles_a`` with every parameter renamed and the list reordered."""

import triton
import triton.language as tl


@triton.jit
def roles_a(x_ptr, w_ptr, out_ptr, cnt_ptr, stride_row, stride_col, off, n_cols, K, scale, unused, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for k in range(0, K):
        x = tl.load(
            x_ptr + pid * stride_row + (cols + k) * stride_col, mask=mask, other=0.0, eviction_policy="evict_first"
        )
        acc += x
    w = tl.load(w_ptr + cols + off, mask=mask, other=0.0)
    y = tl.where(mask, acc * w * scale, 0.0)
    tl.store(out_ptr + pid * stride_row + cols, y, mask=mask)
    tl.atomic_add(cnt_ptr + pid, 1)


@triton.jit
def roles_b(factor, dst, src, weight, counter, n, trip, ld, inc, shift, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for k in range(0, trip):
        x = tl.load(src + pid * ld + (cols + k) * inc, mask=mask, other=0.0, eviction_policy="evict_first")
        acc += x
    w = tl.load(weight + cols + shift, mask=mask, other=0.0)
    y = tl.where(mask, acc * w * factor, 0.0)
    tl.store(dst + pid * ld + cols, y, mask=mask)
    tl.atomic_add(counter + pid, 1)


@triton.jit
def roles_c(buf, table, unused_ptr, a_ptr, b_ptr, c_ptr, step, lim, thresh, hop, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    v = tl.load(buf + pid * BLOCK + cols)  # buf: read and written in place
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for k in range(0, step):  # step: the trip count and a stride of three pointers
        acc += tl.load(a_ptr + k * step + cols) + tl.load(b_ptr + k * step + cols) + tl.load(c_ptr + k * step + cols)
    m = cols < lim  # lim: an offset, a mask bound and a factor
    w = tl.load(a_ptr + lim + cols, mask=m, other=0.0) * lim
    tl.store(buf + pid * BLOCK + cols, v + acc + w, mask=v > thresh)  # thresh: a float in a mask
    p = tl.load(table + pid).to(tl.pointer_type(tl.float32))  # an address read from memory ...
    tl.store(p + hop, tl.sum(v, 0))  # ... that hop offsets: no pointer parameter is its base


@triton.jit
def roles_d(x_ptr, y_ptr, start, stop, step, lim, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for k in range(start, stop, step):  # the induction variable is computed from start and step, not stop
        acc += tl.load(x_ptr + k + cols)
    v = tl.load(y_ptr + cols, mask=cols < lim, other=0.0)  # lim: the mask of a load only
    tl.store(y_ptr + cols, acc + v)
