"""Build the fuzzer's copy of arena/protocol/_wire.c: clang, AddressSanitizer, UBSan and
libFuzzer's coverage (``-fsanitize=fuzzer-no-link``), into out/fuzz/build (docs/fuzzing.md).

    .venv/bin/python fuzz/build.py [--out out/fuzz/build]

Prints the path of the built module. The normal build (setup.py) is left alone: this copy is
loaded by fuzz/wire_fuzz.py only, under the sanitizer runtime atheris ships
(``asan_with_fuzzer.so``, which has UBSan's handlers and libFuzzer linked in).

The flags differ from setup.py's on purpose: ``-O1 -g`` for readable reports, and no
``-fwrapv`` (Python's own CFLAGS have it), so that a signed overflow is reported by UBSan
rather than defined away. ``-fno-sanitize-recover=undefined`` makes any UBSan report abort,
which libFuzzer records as a crash.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "arena" / "protocol" / "_wire.c"
FLAGS = [
    "-shared",
    "-fPIC",
    "-O1",
    "-g",
    "-fno-omit-frame-pointer",
    "-fsanitize=address,undefined,fuzzer-no-link",
    "-fno-sanitize-recover=undefined",
    "-Wall",
]
#: Symbols the built module must reference: ASan's checks, UBSan's handlers, libFuzzer's
#: coverage counters. A build that lacks one is not the build the fuzzer needs.
NEEDED = ("__asan_report_load", "__ubsan_handle_", "__sanitizer_cov_8bit_counters_init")


def module_path(out: Path) -> Path:
    return out / ("_wire" + str(sysconfig.get_config_var("EXT_SUFFIX")))


def build(out: Path, cc: str, source: Path = SOURCE) -> Path:
    compiler = shutil.which(cc)
    if compiler is None:
        sys.exit(
            f"fuzz/build.py: {cc} not found. The instrumented build needs clang "
            "(libFuzzer coverage, -fsanitize=fuzzer-no-link): apt-get install clang"
        )
    target = module_path(out)  # built afresh every time: a second or so
    out.mkdir(parents=True, exist_ok=True)
    include = sysconfig.get_paths()["include"]
    cmd = [compiler, *FLAGS, f"-I{include}", str(source), "-o", str(target)]
    print(" ".join(cmd), file=sys.stderr)
    subprocess.run(cmd, check=True)
    symbols = subprocess.run(
        ["nm", "-D", "--undefined-only", str(target)], capture_output=True, text=True, check=True
    ).stdout
    missing = [s for s in NEEDED if s not in symbols]
    if missing:
        target.unlink()
        sys.exit(f"fuzz/build.py: the build is not instrumented (no {', '.join(missing)})")
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "out" / "fuzz" / "build")
    parser.add_argument("--cc", default=os.environ.get("FUZZ_CC", "clang"))
    # Another copy of the source: to see the fuzzer catch a bug planted in a scratch copy.
    parser.add_argument("--source", type=Path, default=SOURCE)
    args = parser.parse_args()
    print(build(args.out, args.cc, args.source))


if __name__ == "__main__":
    main()
