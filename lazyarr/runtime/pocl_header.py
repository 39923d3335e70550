"""A short header for PoCL builds: the declarations of the OpenCL built-ins a program names.

PoCL compiles every program after Clang's opencl-c.h, ~900 KB of declarations that take most of
a build (a small kernel: ~140 ms with it, ~25 ms without; the test suite's OpenCL pass builds
thousands). lazyarr's kernels call a few dozen built-ins, so a program is built with
`-D_OPENCL_H_` (opencl-c.h's include guard, which PoCL's own header honours) after the
declarations of just the built-ins it names, each with opencl-c.h's signature and attributes, so
that Clang mangles and optimises the calls exactly as with the full header and PoCL's library
resolves them. A program that names a built-in not declared here fails that build (an undeclared
name is an error in OpenCL C) and is built again with the full header (`short_header` is None
where a source's names are known to need it). A PoCL whose headers ignore the guard parses both:
no faster, and where a declaration clashes, built again with the full header.
"""
from __future__ import annotations

import re

OPTION = "-D_OPENCL_H_"   # skips opencl-c.h (PoCL's _kernel.h includes it under this guard)

_FLOATS = ("float", "double")
_UNARY = ("sqrt exp exp2 expm1 log log2 log10 log1p sin cos tan asin acos atan sinh cosh tanh asinh acosh "
          "atanh floor ceil trunc rint round erf erfc fabs cbrt lgamma tgamma").split()
_BINARY = "pow atan2 hypot copysign nextafter fmod fmin fmax".split()
_TERNARY = "fma mad".split()
_TESTS = "isnan isinf isfinite signbit".split()            # int of a float, int of a double (scalars)
_WORK_ITEM = "get_global_id get_global_size get_local_id get_local_size get_group_id get_num_groups".split()
_CONST = "__attribute__((overloadable, const))"


def _declarations() -> dict[str, list[tuple[bool, str]]]:
    """Each built-in's declarations, as (needs double, text)."""
    table: dict[str, list[tuple[bool, str]]] = {}
    for name in _UNARY:
        table[name] = [(t == "double", f"{t} {_CONST} {name}({t});") for t in _FLOATS]
    for name in _BINARY:
        table[name] = [(t == "double", f"{t} {_CONST} {name}({t}, {t});") for t in _FLOATS]
    for name in _TERNARY:
        table[name] = [(t == "double", f"{t} {_CONST} {name}({t}, {t}, {t});") for t in _FLOATS]
    for name in _TESTS:
        table[name] = [(t == "double", f"int {_CONST} {name}({t});") for t in _FLOATS]
    for name in _WORK_ITEM:
        table[name] = [(False, f"size_t {_CONST} {name}(uint);")]
    # (cl_mem_fence_flags is uint, and PoCL's headers define it)
    table["barrier"] = [(False, "void __attribute__((overloadable, convergent)) barrier(uint);")]
    # opencl-c-base.h's macros, as it defines them (PoCL's own headers define NAN and INFINITY)
    table["CLK_LOCAL_MEM_FENCE"] = [(False, "#define CLK_LOCAL_MEM_FENCE 0x01")]
    table["CLK_GLOBAL_MEM_FENCE"] = [(False, "#define CLK_GLOBAL_MEM_FENCE 0x02")]
    table["HUGE_VALF"] = [(False, "#define HUGE_VALF (__builtin_huge_valf())")]
    table["HUGE_VAL"] = [(False, "#define HUGE_VAL (__builtin_huge_val())")]
    return table


DECLARATIONS = _declarations()
_NAME = re.compile(r"\b[A-Za-z_]\w*\b")
# names of opencl-c.h that this header does not declare and a kernel of lazyarr's may use: a source
# naming one goes straight to the full header (its short build would only fail)
FULL_HEADER_NAMES = frozenset({"vload_half", "vstore_half", "half"})


def short_header(source: str) -> str | None:
    """The declarations `source` needs in front of it to build with `OPTION`, or None where it
    names something only the full header declares."""
    names = set(_NAME.findall(source))
    if names & FULL_HEADER_NAMES:
        return None
    doubles = "double" in names
    lines = ["#pragma OPENCL EXTENSION cl_khr_fp64 : enable"] if doubles else []
    for name in sorted(names & DECLARATIONS.keys()):
        lines += [text for needs_double, text in DECLARATIONS[name] if doubles or not needs_double]
    return "\n".join(lines)
