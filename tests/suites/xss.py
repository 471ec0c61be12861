"""A suite whose names, comments and string constants carry HTML and script fragments (report escaping tests).

Kernel names must be Python identifiers, so the markup rides on what can hold it: the variant names (shown
wherever a variant is named), the kernel source's comments and docstring (the Python source panel), and a
``tl.device_print`` prefix, a string constant that reaches the TTIR (``tt.print``) and the LLIR (the printf format
global). ``</script><img src=x onerror=alert(1)>``
"""

import triton
import triton.language as tl

from irdiff.suite import Suite, Tensor, Variant

PAYLOAD = "</script><img src=x onerror=alert(1)>"


@triton.jit
def xss_scale(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    # </script><img src=x onerror=alert(1)> <b>bold?</b> &amp; <!-- comment -->
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.device_print("</script><img src=x onerror=alert(1)>", x)
    tl.store(y_ptr + offs, x * 2.0, mask=mask)


@triton.jit
def xss_scale_dns(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    """<script>alert('docstring')</script>"""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.device_print("</script><svg onload=alert(2)>", x)
    tl.store(y_ptr + offs, x * 3.0, mask=mask)


suite = Suite(
    name="xss<img src=x onerror=alert(3)>",
    description=PAYLOAD,
    variants={
        "<img src=x onerror=alert(4)>": Variant(xss_scale, description=PAYLOAD),
        "<svg onload=alert(5)>&amp;": Variant(xss_scale_dns, description=PAYLOAD),
    },
    args=lambda s: {
        "x_ptr": Tensor((s["N"],), "fp32"),
        "y_ptr": Tensor((s["N"],), "fp32", output=True),
        "n": s["N"],
    },
    constexprs={"BLOCK": 256},
    shape={"N": 4096},
    grid=lambda s, meta: (triton.cdiv(s["N"], meta["BLOCK"]),),
)
