#!/usr/bin/env python3
"""The README's walkthroughs, run as written: `make walkthrough` (all of them) or
`make walkthrough SECTION=hostile` (one; `scripts/walkthrough.py --list` names them).

Each walkthrough is a section of README.md whose ```sh blocks are marked with a line
`<!-- walkthrough -->` just before them. For each section this script starts a fresh local stack
of its own (target/debug/local-api on a free port, `LOCAL_STACK=walkthrough-...`, its DynamoDB in
memory, moto on MOTO_ENDPOINT or, when none answers there, a moto of its own on a free port),
runs the section's blocks one after another in one bash (`set -e`, from the repository's root,
with its own TMPDIR), and compares what each command printed (stdout and stderr) with the
`#   ` lines the README shows under it. Sections run side by side (`--jobs`), each on its own stack.

What the README may write, and how it is read:

- A block is split into commands as bash reads them (a line continued with `\\`, an open quote,
  a heredoc, a function or loop run on until complete). Comment lines between commands are the
  reader's: `#   text` (a hash and three spaces) directly under a command, or under another
  output line, is a line of that command's output; `#    text` (four or more spaces) under an
  output line continues it (a long line wrapped for the README; the text is appended with its
  leading spaces removed); any other comment is prose. A command with no output lines under it is run, and its output not compared.
- `127.0.0.1:3000` in a command is replaced by the address of the stack this script started.
- Output is compared line by line, trailing spaces and a byte order mark (the CSV exports start
  with one) ignored. In an output line `...` matches any text (also none), and a placeholder
  `<id>`, `<time>`, `<token>` (any `<words>`) matches one value: one or more characters other
  than double quotes, commas and brackets. A line that is `...` alone matches any number of lines
  (also none).
- Anything that depends on time (calls completing) is waited for by the README's own commands,
  as a person would wait; this script adds no waiting of its own.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
MARKER = "<!-- walkthrough -->"
# The walkthroughs: a short name for each (the `SECTION=` of `make walkthrough`), and its heading.
SECTIONS = {
    "tokens": "Development tokens",
    "campaign": "A whole campaign with curl",
    "law": "Calling only when and whom the law allows (D14-D19)",
    "hostile": "A hostile provider, simulated (D28)",
    "numbers": "Each tenant's numbers, script and results (D22)",
    "agents": "Calls paced to agents (D30)",
    "callbacks": "Callbacks, a schedule and a filter (D31)",
    "events": "Events other systems can subscribe to (D20)",
}
# The order they start in: the slowest first (a callback's minute; a minute of agents' calls).
SLOWEST_FIRST = ("callbacks", "agents", "hostile", "campaign", "law", "events", "numbers", "tokens")
LOCAL_ADDRESS = "127.0.0.1:3000"
SECTION_TIMEOUT_SECONDS = 300
OUTPUT_LINE = "#   "
SEPARATOR = "\x1e"  # printed before each command, so the output can be cut per command


@dataclass
class Command:
    """One command of a block as bash reads it, and the output the README shows under it."""

    code: str
    line: int  # README line of its first line
    expected: list[str] = field(default_factory=list)


# ---- reading the README ------------------------------------------------------------------------


def section_blocks(readme: str, heading: str) -> list[tuple[int, list[str]]]:
    """The marked ```sh blocks of the section headed `heading` (`## heading`, `### heading`...,
    up to the next heading of its level or above): (README line of the block's first line, its
    lines)."""
    lines = readme.splitlines()
    fenced = set()  # lines inside ``` fences, whose `#` starts a comment, not a heading
    inside = False
    for number, line in enumerate(lines):
        if line.lstrip().startswith("```"):
            inside = not inside
        elif inside:
            fenced.add(number)

    def level(number: int) -> int:
        line = lines[number]
        hashes = len(line) - len(line.lstrip("#"))
        return hashes if hashes and number not in fenced and line[hashes:].startswith(" ") else 0

    try:
        start = next(
            i for i, line in enumerate(lines) if level(i) and line[level(i) + 1 :].strip() == heading
        )
    except StopIteration:
        raise SystemExit(f"README.md has no section '{heading}'") from None
    top = level(start)
    blocks = []
    i = start + 1
    while i < len(lines) and not 0 < level(i) <= top:
        if lines[i].strip() == MARKER:
            if i + 1 >= len(lines) or lines[i + 1].strip() != "```sh":
                raise SystemExit(f"README.md:{i + 1}: {MARKER} is not followed by a ```sh block")
            end = i + 2
            while end < len(lines) and lines[end].strip() != "```":
                end += 1
            blocks.append((i + 3, lines[i + 2 : end]))
            i = end
        i += 1
    return blocks


def is_complete(code: str) -> bool:
    """Whether bash reads `code` as whole commands (no open quote, heredoc, block or pipe)."""
    if code.rstrip("\n").endswith("\\"):
        return False
    checked = subprocess.run(
        ["bash", "-n"], input=code + "\n", capture_output=True, text=True, check=False
    )
    if checked.returncode != 0 and ("end of file" in checked.stderr or "unexpected EOF" in checked.stderr):
        return False
    if "here-document" in checked.stderr:
        return False
    return True


def split_commands(lines: list[str], first_line: int = 1) -> list[Command]:
    """A block's commands, each with the output lines the README shows under it."""
    commands: list[Command] = []
    pending: list[str] = []
    pending_line = first_line
    in_output = False  # whether the line above was one of a command's output lines
    for offset, line in enumerate(lines):
        if pending:
            pending.append(line)
        elif line.startswith("#"):
            is_output = line.startswith(OUTPUT_LINE) and (in_output or not line[len(OUTPUT_LINE) :].startswith(" "))
            if is_output and commands and (in_output or commands[-1].line + commands[-1].code.count("\n") + 1 == first_line + offset):
                text = line[len(OUTPUT_LINE) :]
                expected = commands[-1].expected
                if in_output and text.startswith(" "):
                    expected[-1] += text.lstrip()
                else:
                    expected.append(text.rstrip())
                in_output = True
            else:
                in_output = False
            continue
        elif not line.strip():
            in_output = False
            continue
        else:
            pending = [line]
            pending_line = first_line + offset
            in_output = False
        if is_complete("\n".join(pending)):
            commands.append(Command("\n".join(pending), pending_line))
            pending = []
    if pending:
        raise SystemExit(f"README.md:{pending_line}: this command never ends")
    return commands


def section_commands(readme: str, heading: str) -> list[Command]:
    commands = []
    for first_line, lines in section_blocks(readme, heading):
        commands.extend(split_commands(lines, first_line))
    return commands


# ---- comparing ---------------------------------------------------------------------------------

PLACEHOLDER = re.compile(r"(\.\.\.|<[A-Za-z0-9][A-Za-z0-9 _-]*>)")


def line_pattern(expected: str) -> re.Pattern[str]:
    """An output line of the README as a pattern: `...` any text, `<words>` one value."""
    parts = []
    for part in PLACEHOLDER.split(expected.rstrip()):
        if part == "...":
            parts.append(".*")
        elif PLACEHOLDER.fullmatch(part):
            parts.append(r"[^\",\[\]{}]+")
        else:
            parts.append(re.escape(part))
    return re.compile("".join(parts))


def output_lines(text: str) -> list[str]:
    lines = [line.rstrip().lstrip("\ufeff") for line in text.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def matches(expected: list[str], actual: list[str]) -> bool:
    """Whether `actual` (a command's output lines) is what the README's `expected` lines show."""
    memo: dict[tuple[int, int], bool] = {}

    def at(i: int, j: int) -> bool:
        if (i, j) not in memo:
            if i == len(expected):
                result = j == len(actual)
            elif expected[i].strip() == "...":
                result = any(at(i + 1, k) for k in range(j, len(actual) + 1))
            else:
                result = (
                    j < len(actual)
                    and line_pattern(expected[i]).fullmatch(actual[j]) is not None
                    and at(i + 1, j + 1)
                )
            memo[(i, j)] = result
        return memo[(i, j)]

    return at(0, 0)


# ---- running -----------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2):
            return True
    except Exception:  # noqa: BLE001 - anything but an answer is "no"
        return False


def script_of(commands: list[Command], port: int) -> str:
    """The bash script of a section: each command after a separator naming it."""
    body = ["set -e", f"cd {shlex.quote(str(ROOT))}"]
    for index, command in enumerate(commands):
        body.append(f"printf '{SEPARATOR}%s\\n' {index}")
        body.append(command.code.replace(LOCAL_ADDRESS, f"127.0.0.1:{port}"))
    body.append(f"printf '{SEPARATOR}end\\n'")
    return "\n".join(body) + "\n"


def cut(output: str) -> tuple[dict[int, str], bool]:
    """The output of each command (by index), and whether the script reached its end."""
    pieces: dict[int, str] = {}
    finished = False
    parts = re.split(f"{SEPARATOR}(\\d+|end)\n", output)
    for name, text in zip(parts[1::2], parts[2::2]):
        if name == "end":
            finished = True
        else:
            pieces[int(name)] = text
    return pieces, finished


class Stack:
    """A local-api of its own on a free port, its DynamoDB in memory, moto at `moto`."""

    def __init__(self, name: str, moto: str, workdir: Path):
        self.port = free_port()
        self.log_path = workdir / "local-api.log"
        env = clean_env()
        env.update(
            LOCAL_STACK=f"walkthrough-{name}-{os.getpid()}-{int(time.time())}",
            LOCAL_DYNAMODB="memory",
            PORT=str(self.port),
            MOTO_ENDPOINT=moto,
        )
        env.pop("LAMBDA_ENV_FILE", None)
        env.pop("DYNAMODB_ENDPOINT", None)
        self.log = open(self.log_path, "w")
        self.process = subprocess.Popen(
            [os.environ.get("WALKTHROUGH_LOCAL_API", str(ROOT / "target/debug/local-api"))],
            cwd=ROOT,
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + 60
        while not answers(f"http://127.0.0.1:{self.port}/api/openapi.yaml"):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"local-api did not start:\n{self.log_path.read_text()[-3000:]}")
            time.sleep(0.2)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()


# Settings the README's outputs assume at their defaults, as a plain `make run` has them: the
# stack's and the dev token's, whatever the caller's environment says.
DEFAULTED = ("SIMULATED_", "DIAL_", "EDGE_", "TENANT_", "API_THROTTLING_", "JWT_")
DEFAULTED_NAMES = ("AUTH_MODE", "REQUIRE_SCOPES", "SCOPE_PREFIX", "LOCAL_STACK", "DYNAMODB_PORT", "SERVICE_TIME_ZONE")


def clean_env() -> dict[str, str]:
    """The environment of a person's terminal: no variables of an enclosing make, and the
    stack's settings at their defaults."""
    env = dict(os.environ)
    for name in list(env):
        if name.startswith(DEFAULTED) or name in DEFAULTED_NAMES:
            del env[name]
    for name in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS", "MAKEOVERRIDES", "MAKE_TERMOUT", "MAKE_TERMERR"):
        env.pop(name, None)
    return env


@dataclass
class Result:
    name: str
    ok: bool
    seconds: float
    report: str


def run_section(name: str, moto: str, keep: bool) -> Result:
    started = time.monotonic()
    commands = section_commands(README.read_text(), SECTIONS[name])
    if not commands:
        return Result(name, False, 0, f"README.md's section '{SECTIONS[name]}' has no {MARKER} block")
    workdir = Path(tempfile.mkdtemp(prefix=f"walkthrough-{name}-"))
    stack = None
    ok = False
    try:
        stack = Stack(name, moto, workdir)
        script = script_of(commands, stack.port)
        (workdir / "walkthrough.sh").write_text(script)
        env = clean_env()
        tmp = workdir / "tmp"
        tmp.mkdir()
        env["TMPDIR"] = str(tmp)
        process = subprocess.Popen(
            ["bash", str(workdir / "walkthrough.sh")],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            raw, _ = process.communicate(timeout=SECTION_TIMEOUT_SECONDS)
            timed_out = False
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            raw, _ = process.communicate()
            timed_out = True
        output = raw.decode("utf-8", "replace")
        (workdir / "output.txt").write_text(output)
        pieces, finished = cut(output)
        problems = []
        for index, command in enumerate(commands):
            if index not in pieces:
                break
            actual = output_lines(pieces[index])
            if command.expected and not matches(command.expected, actual):
                problems.append(describe(command, actual))
        if not finished:
            last = max(pieces, default=-1)
            failing = commands[last] if last >= 0 else None
            why = f"timed out after {SECTION_TIMEOUT_SECONDS} s" if timed_out else f"bash exited {process.returncode}"
            text = f"{why} in the command of README.md:{failing.line if failing else '?'}"
            if failing:
                text += ":\n" + indent(failing.code) + "\n  its output:\n" + indent(pieces.get(last, ""))
            problems.append(text)
        ok = not problems
        report = "\n\n".join(problems)
        if not ok:
            report += f"\n\n(local-api's log: {stack.log_path}; the script and its output: {workdir})"
        return Result(name, ok, time.monotonic() - started, report)
    except Exception as error:  # noqa: BLE001 - a section that cannot run is a failed section
        return Result(name, False, time.monotonic() - started, str(error))
    finally:
        if stack:
            stack.stop()
        if ok and not keep:
            shutil.rmtree(workdir, ignore_errors=True)


def describe(command: Command, actual: list[str]) -> str:
    return (
        f"README.md:{command.line}:\n{indent(command.code)}\n"
        f"  the README shows:\n{indent(chr(10).join(command.expected))}\n"
        f"  it printed:\n{indent(chr(10).join(actual))}"
    )


def indent(text: str) -> str:
    return "\n".join("    " + line for line in text.rstrip("\n").splitlines())


def start_moto() -> tuple[str, subprocess.Popen | None]:
    """MOTO_ENDPOINT when a moto answers there, else a moto of our own on a free port."""
    endpoint = os.environ.get("MOTO_ENDPOINT", "http://127.0.0.1:5000")
    if answers(f"{endpoint}/moto-api/"):
        return endpoint, None
    python = ROOT / ".venv/bin/python"
    if not python.exists():
        subprocess.run([str(ROOT / "scripts/stack.sh"), "setup"], check=True)
    port = free_port()
    log = open(tempfile.gettempdir() + f"/walkthrough-moto-{port}.log", "w")
    process = subprocess.Popen(
        [str(python), str(ROOT / "scripts/moto_server.py"), "127.0.0.1", str(port)],
        cwd=ROOT,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    endpoint = f"http://127.0.0.1:{port}"
    for _ in range(300):
        if answers(f"{endpoint}/moto-api/"):
            return endpoint, process
        if process.poll() is not None:
            break
        time.sleep(0.1)
    process.kill()
    raise SystemExit(f"moto did not start; see {log.name}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sections", nargs="*", help="the sections to run (default: all)")
    parser.add_argument("--list", action="store_true", help="name the sections and their headings")
    parser.add_argument("--jobs", type=int, default=4, help="sections run side by side (default 4)")
    parser.add_argument("--keep", action="store_true", help="keep every section's scratch directory")
    args = parser.parse_args()
    if args.list:
        for name, heading in SECTIONS.items():
            print(f"{name:10} {heading}")
        return 0
    unknown = [name for name in args.sections if name not in SECTIONS]
    if unknown:
        parser.error(f"unknown section(s) {', '.join(unknown)}; --list names them")
    names = args.sections or list(SECTIONS)
    if not (ROOT / "target/debug/local-api").exists():
        raise SystemExit("target/debug/local-api is not built: make walkthrough builds it")
    started = time.monotonic()
    moto, own_moto = start_moto()
    lock = threading.Lock()
    results: list[Result] = []
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            ordered = sorted(names, key=lambda name: SLOWEST_FIRST.index(name) if name in SLOWEST_FIRST else -1)
            futures = [pool.submit(run_section, name, moto, args.keep) for name in ordered]
            for future in concurrent.futures.as_completed(futures):
                result = future.result()
                with lock:
                    results.append(result)
                    print(f"{'ok  ' if result.ok else 'FAIL'} {result.name} ({result.seconds:.0f} s)", flush=True)
                    if not result.ok:
                        print(indent(result.report), flush=True)
    finally:
        if own_moto:
            own_moto.terminate()
            own_moto.wait(10)
    failed = [result.name for result in results if not result.ok]
    elapsed = time.monotonic() - started
    if failed:
        print(f"walkthrough: {len(failed)} of {len(results)} sections differ from README.md ({', '.join(sorted(failed))}), {elapsed:.0f} s")
        return 1
    print(f"walkthrough: {len(results)} sections run as README.md shows them, {elapsed:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
