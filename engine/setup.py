"""The optional C module engine.solver._native (engine/solver/_native.c: the whist and tennis
whist search of the exact solver, docs/engine.md); everything else is in pyproject.toml.

Optional: where no C compiler is at hand the install goes on, and engine.solver searches in
Python, the same values more slowly.
"""

from setuptools import Extension, setup  # type: ignore[import-untyped]

setup(
    ext_modules=[
        Extension(
            "engine.solver._native",
            ["solver/_native.c"],
            optional=True,
            extra_compile_args=["-O2"],
        )
    ],
)
