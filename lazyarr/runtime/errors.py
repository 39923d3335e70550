"""The errors the runtime raises to users."""
from __future__ import annotations


class CompileError(RuntimeError):
    """A kernel failed to compile. `.source` is the kernel, `.log` the compiler's message."""

    def __init__(self, message: str, source: str = "", log: str = ""):
        super().__init__(f"{message}\n--- compiler output ---\n{log}\n--- kernel source ---\n{source}"
                         if source else message)
        self.source, self.log = source, log
