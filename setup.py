"""The optional C module arena.protocol._wire (arena/protocol/_wire.c: the wire encoding of
decision requests and the reading of answers, docs/performance.md); everything else is declared
in pyproject.toml.

Optional: where no C compiler is at hand the install goes on, and arena.protocol's Python code
writes and reads the same bytes, more slowly. Also the texts a wheel installs beside the code.
"""

from glob import glob

from setuptools import Extension, setup

setup(
    # What a competition's pages serve authors (arena/web/assets.py reads them from the checkout,
    # else from here): the games' rules and the protocol's .proto.
    data_files=[
        ("share/card-arena/rules/law", sorted(glob("docs/rules/law/*.md"))),
        ("share/card-arena/rules", sorted(glob("docs/rules/*.md"))),
        ("share/card-arena/proto", ["proto/cardarena/v1/arena.proto"]),
    ],
    ext_modules=[
        Extension(
            "arena.protocol._wire",
            ["arena/protocol/_wire.c"],
            optional=True,
            extra_compile_args=["-O2"],
        )
    ],
)
