"""``make fuzz``: build the instrumented C module, write the seeds, fuzz for a bounded time,
and say what happened (docs/fuzzing.md).

    .venv/bin/python fuzz/run.py [--time SECONDS] [--out out/fuzz] [--source FILE.c]
    .venv/bin/python fuzz/run.py out/fuzz/artifacts/crash-...   # replay inputs, no fuzzing

One fuzzing process (libFuzzer's default: no -jobs, no -workers). It runs fuzz/wire_fuzz.py
under the runtime atheris ships for native extensions, ``asan_with_fuzzer.so`` (AddressSanitizer
and UBSan with libFuzzer linked in), preloaded as atheris' docs say, with ``PYTHONMALLOC=malloc``
so that every Python object, the bytes under test included, is a malloc block ASan guards.

Under out/fuzz: ``build/`` the instrumented module, ``seeds/`` the seed corpus (fuzz/make_seeds.py),
``corpus/`` the inputs libFuzzer found worth keeping (kept from run to run), ``artifacts/`` the
inputs of findings (``crash-*``, ``timeout-*``, ``oom-*``), ``last-run.log`` the whole output.
Ends with libFuzzer's ``Done N runs in S second(s)`` and a one-line verdict; exits non-zero on
a finding, with the artifacts' paths and bytes.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import atheris

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import build  # noqa: E402
import make_seeds  # noqa: E402

ROOT = HERE.parent
#: libFuzzer's options for the run, past -max_total_time.
REGRESSIONS = "tests/arena/protocol/test_wire_fuzz_regressions.py"
LIBFUZZER = ("-max_len=2048", "-timeout=10", "-rss_limit_mb=4096", "-print_final_stats=1")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--time", type=int, default=int(os.environ.get("FUZZ_TIME", "60")))
    parser.add_argument("--out", type=Path, default=ROOT / "out" / "fuzz")
    parser.add_argument("--source", type=Path, default=build.SOURCE)
    parser.add_argument(
        "replay", nargs="*", type=Path, help="input files to run once each instead of fuzzing"
    )
    args = parser.parse_args()
    out: Path = args.out

    module = build.build(out / "build", os.environ.get("FUZZ_CC", "clang"), args.source)
    seeds = make_seeds.write(out / "seeds")
    corpus, artifacts = out / "corpus", out / "artifacts"
    corpus.mkdir(parents=True, exist_ok=True)
    artifacts.mkdir(parents=True, exist_ok=True)
    kept_before = sum(1 for _ in corpus.iterdir())
    runtime = Path(atheris.path()) / "asan_with_fuzzer.so"
    if not runtime.exists():
        print(f"fuzz: {runtime} is missing: this atheris has no sanitizer runtime", file=sys.stderr)
        return 2
    env = {
        **os.environ,
        "LD_PRELOAD": str(runtime),
        "ASAN_OPTIONS": "detect_leaks=0:halt_on_error=1:abort_on_error=0",
        "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1",
        "PYTHONMALLOC": "malloc",
        "FUZZ_WIRE_MODULE": str(module),
    }
    env.pop("ARENA_PURE_PYTHON", None)  # the harness switches the C reader on and off itself
    if args.replay:  # libFuzzer runs each file given once, under the sanitizers, and stops
        target = [sys.executable, str(HERE / "wire_fuzz.py"), *map(str, args.replay)]
        return subprocess.run(target, env=env).returncode
    cmd = [
        sys.executable,
        str(HERE / "wire_fuzz.py"),
        f"-max_total_time={args.time}",
        *LIBFUZZER,
        f"-artifact_prefix={artifacts}/",
        str(corpus),  # first: where libFuzzer writes what it keeps
        str(out / "seeds"),
    ]
    print(f"fuzz: {seeds} seeds, {kept_before} kept inputs, {args.time} s, module {module}")
    started = time.time()
    log = out / "last-run.log"
    with log.open("w") as sink:
        proc = subprocess.Popen(
            cmd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
        )
        assert proc.stdout is not None
        for line in proc.stdout:
            sink.write(line)
            if not line.startswith("INFO: Instrumenting "):  # one per module: noise
                sys.stdout.write(line)
                sys.stdout.flush()
        rc = proc.wait()
    text = log.read_text()
    done = re.search(r"^Done (\d+) runs in (\d+) second", text, re.M)
    found = sorted(
        p for p in artifacts.iterdir() if p.is_file() and p.stat().st_mtime >= started - 1
    )
    kept = sum(1 for _ in corpus.iterdir())
    runs = f"{done[1]} runs in {done[2]} s" if done else "no 'Done' line"
    print(
        f"fuzz: {runs}; corpus {kept} kept inputs (+{kept - kept_before}) and {seeds} seeds; "
        f"exit status {rc}; log {log}"
    )
    if rc != 0 or found or done is None:
        for p in found:
            print(f"fuzz: FINDING {p}: {p.read_bytes()!r}")
        print("fuzz: FOUND A PROBLEM: each finding becomes a test in " + REGRESSIONS)
        return rc or 1
    print("fuzz: no finding (no disagreement, no sanitizer report)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
