"""The walkthrough harness's own reading of the README and matching of outputs
(scripts/walkthrough.py); no stack is started. `make check` and `make test` run these."""

import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import walkthrough  # noqa: E402
from walkthrough import (  # noqa: E402
    cut,
    line_pattern,
    matches,
    output_lines,
    script_of,
    section_commands,
    split_commands,
)

README = """# project

## Set-up

```sh
make run    # not a walkthrough: no marker
```

### Tokens

<!-- walkthrough -->
```sh
echo one
#   one
```

## A walkthrough

Prose.

<!-- walkthrough -->
```sh
# 1. A heading comment, its second line
#    indented as prose, not output.
curl -s http://127.0.0.1:3000/api/x \\
  | jq -c .data
#   {"a":1,
#    "b":2}
cat > f.csv <<'EOF'
# not a comment: the file's first line
EOF
watch() {
  while sleep 1; do
    echo tick
  done
}
echo '{"multi":
  "line"}'
#   {"multi":
#   "line"}
#   Prose right after output would be output: keep a blank line before it.

#   Not output: not directly under a command.
```

```sh
echo unmarked block: not run
```

<!-- walkthrough -->
```sh
echo second block
#   second block
```

## Next section

<!-- walkthrough -->
```sh
echo other
```
"""


class Reading(unittest.TestCase):
    def test_a_section_is_its_marked_blocks_up_to_the_next_heading_of_its_level(self):
        commands = section_commands(README, "A walkthrough")
        codes = [command.code for command in commands]
        self.assertEqual(
            codes,
            [
                "curl -s http://127.0.0.1:3000/api/x \\\n  | jq -c .data",
                "cat > f.csv <<'EOF'\n# not a comment: the file's first line\nEOF",
                "watch() {\n  while sleep 1; do\n    echo tick\n  done\n}",
                "echo '{\"multi\":\n  \"line\"}'",
                "echo second block",
            ],
        )

    def test_a_subsection_ends_at_the_next_heading_of_its_level_or_above(self):
        self.assertEqual([c.code for c in section_commands(README, "Tokens")], ["echo one"])

    def test_output_lines_are_those_directly_under_a_command_wrapped_lines_joined(self):
        commands = section_commands(README, "A walkthrough")
        self.assertEqual(commands[0].expected, ['{"a":1,"b":2}'])
        self.assertEqual(commands[1].expected, [])
        self.assertEqual(
            commands[3].expected,
            ['{"multi":', '"line"}', "Prose right after output would be output: keep a blank line before it."],
        )
        self.assertEqual(commands[4].expected, ["second block"])

    def test_commands_know_their_readme_line(self):
        lines = README.splitlines()
        for command in section_commands(README, "A walkthrough"):
            self.assertEqual(lines[command.line - 1], command.code.splitlines()[0])

    def test_a_command_that_never_ends_is_refused(self):
        with self.assertRaises(SystemExit):
            split_commands(["echo 'open"])

    def test_a_missing_section_is_refused(self):
        with self.assertRaises(SystemExit):
            section_commands(README, "No such section")

    def test_every_listed_section_of_the_readme_has_commands_with_outputs(self):
        readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
        for name, heading in walkthrough.SECTIONS.items():
            commands = section_commands(readme, heading)
            self.assertTrue(commands, name)
            self.assertTrue(any(command.expected for command in commands), name)


class Matching(unittest.TestCase):
    def test_lines_match_exactly_but_for_trailing_spaces_and_a_byte_order_mark(self):
        self.assertTrue(matches(["a b"], output_lines("a b  \n\n")))
        self.assertTrue(matches(["id,name"], output_lines("\ufeffid,name\n")))
        self.assertFalse(matches(["a b"], ["a  b"]))
        self.assertFalse(matches(["a"], ["a", "b"]))
        self.assertFalse(matches(["a", "b"], ["a"]))

    def test_dots_match_any_text_in_a_line(self):
        self.assertTrue(matches(['{"a":1,...,"z":2}'], ['{"a":1,"b":[1,2],"z":2}']))
        self.assertTrue(matches(['{"a":1,...}'], ['{"a":1,}']))
        self.assertFalse(matches(['{"a":1,...}'], ['{"a":2,"b":3}']))

    def test_a_line_of_dots_matches_any_lines(self):
        self.assertTrue(matches(["...", "last"], ["one", "two", "last"]))
        self.assertTrue(matches(["...", "last"], ["last"]))
        self.assertTrue(matches(["first", "...", "last"], ["first", "x", "last"]))
        self.assertFalse(matches(["...", "last"], ["last", "after"]))

    def test_a_placeholder_matches_one_value(self):
        pattern = line_pattern('{"id":"<id>","time":"<time>","n":<n>}')
        self.assertTrue(pattern.fullmatch('{"id":"01M8P5","time":"2026-11-30 12:13:00","n":12}'))
        self.assertFalse(pattern.fullmatch('{"id":"a","b":"c","time":"t","n":1}'))
        self.assertFalse(pattern.fullmatch('{"id":"","time":"t","n":1}'))
        self.assertTrue(line_pattern("<id>,2125550142,Ada").fullmatch("01K,2125550142,Ada"))
        self.assertFalse(line_pattern("<id>,Ada").fullmatch("a,b,Ada"))

    def test_other_characters_are_literal(self):
        self.assertTrue(line_pattern("a.b (c) [d] $e *").fullmatch("a.b (c) [d] $e *"))
        self.assertFalse(line_pattern("a.b").fullmatch("axb"))


class Running(unittest.TestCase):
    def test_the_script_points_at_the_stack_and_separates_the_commands(self):
        commands = split_commands(["API=http://127.0.0.1:3000/api", "echo $API"])
        script = script_of(commands, 4321)
        self.assertIn("API=http://127.0.0.1:4321/api", script)
        self.assertNotIn(":3000", script)
        self.assertTrue(script.startswith("set -e\n"))

    def test_the_stack_and_the_commands_run_at_the_default_settings_outside_any_make(self):
        saved = dict(walkthrough.os.environ)
        try:
            walkthrough.os.environ.update(
                SIMULATED_OUTCOME_MIX="25,15,60", DIAL_TICK_MS="500", JWT_SECRET="x" * 32,
                MAKELEVEL="1", MAKEFLAGS="w", AWS_ACTION_LOG="/tmp/log",
            )
            env = walkthrough.clean_env()
        finally:
            walkthrough.os.environ.clear()
            walkthrough.os.environ.update(saved)
        for name in ("SIMULATED_OUTCOME_MIX", "DIAL_TICK_MS", "JWT_SECRET", "MAKELEVEL", "MAKEFLAGS"):
            self.assertNotIn(name, env)
        self.assertEqual(env["AWS_ACTION_LOG"], "/tmp/log")

    def test_output_is_cut_per_command(self):
        sep = walkthrough.SEPARATOR
        pieces, finished = cut(f"{sep}0\nfirst\n{sep}1\nno newline{sep}2\n{sep}end\n")
        self.assertEqual(pieces, {0: "first\n", 1: "no newline", 2: ""})
        self.assertTrue(finished)
        pieces, finished = cut(f"{sep}0\nboom\n")
        self.assertEqual(pieces, {0: "boom\n"})
        self.assertFalse(finished)


if __name__ == "__main__":
    unittest.main()
