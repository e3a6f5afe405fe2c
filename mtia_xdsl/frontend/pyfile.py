"""Read a Triton kernel from a `.py` file for `mtia-opt`, directed by a comment in the file.

The file names the kernel to build and its specialisation in comments (several lines are joined):

    # mtia-opt: kernel=add_kernel signature=x_ptr:*fp32,y_ptr:*fp32,n:i32
    # mtia-opt: constexprs=BLOCK:1024

Arguments not in `signature` must be constexprs. A signature type may name a ctypes.Structure class of
the file (`view:TensorView`): the argument is passed by field (mtia_xdsl.utils.structs). The module is
the frontend's raw output (helper calls not yet inlined: add `-p tt-inline`).
Example: mtia-opt examples/vector_add.py -p tt-inline,convert-tt-to-mtia
"""

from __future__ import annotations

import ast
import importlib.util
import re
import sys
import traceback
from pathlib import Path
from typing import Any

from xdsl.dialects.builtin import ModuleOp

from mtia_xdsl.frontend.build import build_tt_module
from mtia_xdsl.frontend.errors import KernelError

_DIRECTIVE = re.compile(r"^#\s*mtia-opt:\s*(?P<body>.*)$", re.MULTILINE)


def parse_directive(text: str, path: str) -> tuple[str, dict[str, str], dict[str, object]]:
    """Return (kernel name, signature, constexprs) from the file's `# mtia-opt:` comment.

    Raises: KernelError naming the file if the directive is missing or malformed.
    """
    matches = list(_DIRECTIVE.finditer(text))
    match = matches[0] if matches else None
    if match is None:
        raise KernelError(
            "no '# mtia-opt: kernel=NAME signature=arg:type,...' comment says which kernel to build; add one",
            path,
            1,
            1,
        )
    line = text[: match.start()].count("\n") + 1
    fields: dict[str, str] = {}
    for item in " ".join(m.group("body") for m in matches).split():
        key, sep, value = item.partition("=")
        if not sep or key not in ("kernel", "signature", "constexprs"):
            raise KernelError(
                f"'{item}' in the mtia-opt comment; expected kernel=NAME, signature=arg:type,... and "
                "optionally constexprs=name:value,...",
                path,
                line,
                1,
            )
        fields[key] = f"{fields[key]},{value}" if key in fields and key != "kernel" else value
    if "kernel" not in fields:
        raise KernelError("the mtia-opt comment names no kernel=NAME", path, line, 1)
    for key in ("signature", "constexprs"):
        bad = [item for item in fields.get(key, "").split(",") if item and ":" not in item]
        if bad:
            raise KernelError(
                f"'{bad[0]}' in {key}= of the mtia-opt comment; write name:value pairs, e.g. {key}=BLOCK:64",
                path,
                line,
                1,
            )
    signature = parse_pairs(fields.get("signature", ""))
    constexprs: dict[str, object] = {}
    for name, text in parse_pairs(fields.get("constexprs", "")).items():
        try:
            constexprs[name] = parse_constexpr(text)
        except ValueError:
            raise KernelError(
                f"'{name}:{text}' in constexprs= of the mtia-opt comment: '{text}' is not a number or a Python "
                f"literal; give an int ({name}:64), a float, True/False or a quoted string ({name}:'{text}')",
                path,
                line,
                1,
            ) from None
    return fields["kernel"], signature, constexprs


def module_from_python_file(path: str) -> ModuleOp:
    """Import `path`, build the kernel its `# mtia-opt:` comment names, and return the tt module.

    Raises: KernelError naming the file (and kernel line) for a missing directive, unknown kernel or a
    kernel the frontend refuses.
    """
    file = Path(path)
    name, signature, constexprs = parse_directive(file.read_text(), path)
    module = import_file(file)
    fn: Any = getattr(module, name, None)
    if fn is None or not hasattr(fn, "arg_names"):
        raise KernelError(f"no @triton.jit function named '{name}' in the file", path, 1, 1)
    full: dict[str, Any] = {a: _struct_or(module, signature.get(a, "constexpr"), a, path) for a in fn.arg_names}
    missing = [a for a in fn.arg_names if full[a] == "constexpr" and a not in constexprs]
    if missing:
        raise KernelError(
            f"arguments {', '.join(missing)} of '{name}' have no type in signature= and no value in constexprs=",
            path,
            1,
            1,
        )
    return build_tt_module(fn, full, constexprs)


def _struct_or(module: Any, ty: str, name: str, path: str) -> Any:
    """Return the field types of the ctypes.Structure class `ty` of the file (a signature type may name one),
    else `ty` unchanged.

    Raises: KernelError naming the file and the field for a field with no Triton type.
    """
    import ctypes

    cls = getattr(module, ty, None)
    if isinstance(cls, type) and issubclass(cls, ctypes.Structure):
        from mtia_xdsl.utils.structs import StructFieldError, field_type

        try:
            return field_type(cls, name)
        except StructFieldError as e:
            raise KernelError(f"argument '{name}': {e}", path, 1, 1) from None
    return ty


def import_file(file: Path) -> Any:
    """Import a Python file as a module (Triton needs kernels to live in a real file).

    Raises: KernelError at the file's line if importing it fails (a syntax error, an exception raised
    by its top-level code), chained to that exception.
    """
    spec = importlib.util.spec_from_file_location(f"_mtia_opt_{file.stem}", file)
    if spec is None or spec.loader is None:
        raise KernelError("cannot import the file", str(file), 1, 1)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
    except SyntaxError as e:
        sys.modules.pop(spec.name, None)
        raise KernelError(
            f"the file does not import: SyntaxError: {e.msg}", str(file), e.lineno or 1, e.offset or 1
        ) from e
    except Exception as e:
        sys.modules.pop(spec.name, None)
        here = file.resolve()
        frames = [f for f in traceback.extract_tb(e.__traceback__) if Path(f.filename).resolve() == here]
        line = (frames[-1].lineno or 1) if frames else 1
        raise KernelError(f"the file does not import: {type(e).__name__}: {e}", str(file), line, 1) from e
    return module


def parse_pairs(text: str, sep: str = ":") -> dict[str, str]:
    """Parse `a<sep>x,b<sep>y` into {"a": "x", "b": "y"}."""
    return dict(item.split(sep, 1) for item in text.split(",") if item)


def parse_constexpr(text: str) -> object:
    """Return a constexpr value of the mtia-opt comment: a number (as `parse_number`), else a Python literal
    (True, False, None, 'a quoted string').

    Raises: ValueError for anything else (a bare word such as `abc`).
    """
    value = parse_number(text)
    if not isinstance(value, str):
        return value
    try:
        literal = ast.literal_eval(text.strip())
    except (ValueError, SyntaxError):
        raise ValueError(f"{text!r} is not a number or a Python literal") from None
    if not isinstance(literal, bool | int | float | str) and literal is not None:
        raise ValueError(f"{text!r} is not a number or a Python literal")
    return literal


def parse_number(text: str) -> object:
    """Return `text` as an int, else a float, else unchanged (a constexpr value from the command line)."""
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text
