"""Command-line tools: mtia-opt (passes and targets) and mtia-run (the machine model)."""


def os_error_text(tool: str, error: OSError, verb: str = "read") -> str:
    """One line for a file a tool cannot read or write: "mtia-run: cannot read k.cpp: No such file or directory"."""
    return f"{tool}: cannot {verb} {error.filename or 'the input'}: {error.strerror or error}"
