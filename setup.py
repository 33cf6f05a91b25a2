"""The optional C module arena.protocol._wire (arena/protocol/_wire.c: the wire encoding of
decision requests and the reading of answers, docs/performance.md); everything else is declared
in pyproject.toml.

Optional: where no C compiler is at hand the install goes on, and arena.protocol's Python code
writes and reads the same bytes, more slowly.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "arena.protocol._wire",
            ["arena/protocol/_wire.c"],
            optional=True,
            extra_compile_args=["-O2"],
        )
    ]
)
