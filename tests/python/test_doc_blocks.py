"""The runner of the docs' code blocks (tests/docs/run_doc_blocks.py, issue 62): which blocks it
finds and runs, the marks it requires, line numbers kept. The blocks of docs/python.md themselves
run as the ctest tests docs.NAME_md_blocks, the marks of every doc as docs.md_blocks_marked."""
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
RUNNER = os.path.join(HERE, "..", "docs", "run_doc_blocks.py")
spec = importlib.util.spec_from_file_location("run_doc_blocks", RUNNER)
blocks = importlib.util.module_from_spec(spec)
spec.loader.exec_module(blocks)

SAMPLE = """# A doc

<!-- run -->
```python
print("one")
```

Text.

<!-- not run: a placeholder -->
```sh
tool ... more
```

```
a diagram, no language: text
```

- In a list:

  <!--   run   -->
  ~~~bash
  echo two
    indented
  ~~~

````python
```
a fence inside a longer one
````
"""


class Parse(unittest.TestCase):
    def test_blocks_marks_languages_and_lines(self):
        found = blocks.parse("doc.md", SAMPLE)
        self.assertEqual([(b.line, b.language, b.mark) for b in found],
                         [(5, "python", "run"), (12, "sh", "not run"), (16, "", None), (23, "bash", "run"),
                          (28, "python", None)])
        self.assertEqual(found[0].code, 'print("one")\n')
        self.assertEqual(found[1].reason, "a placeholder")
        self.assertEqual(found[3].code, "echo two\n  indented\n")
        self.assertEqual(found[4].code, "```\na fence inside a longer one\n")

    def test_an_unmarked_runnable_block_and_a_mark_on_text_are_problems(self):
        found = blocks.parse("doc.md", SAMPLE + "\n<!-- run -->\n```text\nx\n```\n")
        self.assertEqual(blocks.problems(found), [
            "doc.md:28: a ```python block without <!-- run --> or <!-- not run: REASON --> on the line before it",
            "doc.md:34: marked to run, but ```text is not run (only bash, py, python, sh, shell)"])

    def test_a_command_without_a_language_needs_a_language_and_a_mark(self):
        text = ("```\nscripts/gpu-run /tmp/x\n```\n\n```\ngen_moves [OPTIONS]\n```\n\n```text\nbuild/bin/train\n```\n\n"
                "<!-- not run: a GPU -->\n```\nmake all\n```\n")
        self.assertEqual(blocks.problems(blocks.parse("doc.md", text)), [
            "doc.md:2: a block without a language that reads as a command (scripts/gpu-run /tmp/x): make it ```sh "
            "with <!-- run --> or <!-- not run: REASON --> before it, or ```text"])

    def test_check_fails_on_an_unmarked_block_and_on_a_doc_no_test_runs(self):
        with tempfile.TemporaryDirectory() as folder:
            doc = os.path.join(folder, "doc.md")
            with open(doc, "w") as f:
                f.write(SAMPLE)
            check = subprocess.run([sys.executable, RUNNER, "--check", doc], capture_output=True, text=True)
            self.assertEqual(check.returncode, 1)
            self.assertIn("doc.md:28: a ```python block without", check.stderr)
            with open(doc, "w") as f:
                f.write(SAMPLE.split("````python")[0])
            check = subprocess.run([sys.executable, RUNNER, "--check", doc, "--tested", doc], capture_output=True,
                                   text=True)
            self.assertEqual(check.returncode, 0, check.stderr)
            check = subprocess.run([sys.executable, RUNNER, "--check", doc, "--tested", "other.md"],
                                   capture_output=True, text=True)
            self.assertEqual(check.returncode, 1)
            self.assertIn("but no test runs them", check.stderr)

    def test_a_block_keeps_the_files_line_numbers(self):
        with tempfile.TemporaryDirectory() as folder:
            block = blocks.Block(os.path.join(folder, "doc.md"), 40, "python", "x = 1\nraise SystemExit(7)\n", "run")
            ok, _, output = blocks.run_block(block, folder, dict(os.environ), 60)
            self.assertFalse(ok)
            self.assertIn("(exit status 7)", output)
            block.code = "x = 1\n1 / 0\n"
            ok, _, output = blocks.run_block(block, folder, dict(os.environ), 60)
            self.assertRegex(output, r'doc\.md-L40\.py", line 41\b')
            block.language, block.code = "sh", "true\nfalse\necho never\n"
            ok, _, output = blocks.run_block(block, folder, dict(os.environ), 60)
            self.assertFalse(ok)
            self.assertNotIn("never", output)

    def test_what_a_block_leaves_running_is_stopped_with_it(self):
        with tempfile.TemporaryDirectory() as folder:
            mark = os.path.join(folder, "ran-on")
            block = blocks.Block(os.path.join(folder, "doc.md"), 1, "sh",
                                 f"(sleep 3; touch {mark}) >/dev/null 2>&1 &\necho started\n", "run")
            ok, seconds, output = blocks.run_block(block, folder, dict(os.environ), 60)
            self.assertTrue(ok, output)
            self.assertLess(seconds, 3)
            time.sleep(4)
            self.assertFalse(os.path.exists(mark))
            block.code = "sleep 30 &\necho started\n"  # holds the output: stopped at the time limit
            ok, seconds, output = blocks.run_block(block, folder, dict(os.environ), 2)
            self.assertFalse(ok)
            self.assertIn("started", output)
            self.assertIn("stopped after 2 s", output)

    def test_every_runnable_block_of_the_docs_is_marked(self):
        check = subprocess.run([sys.executable, RUNNER, "--check"], capture_output=True, text=True)
        self.assertEqual(check.returncode, 0, check.stderr)

    def test_every_runnable_block_of_the_python_guide_is_marked(self):
        guide = os.path.join(HERE, "..", "..", "docs", "python.md")
        found = blocks.parse(guide)
        self.assertEqual(blocks.problems(found), [])
        self.assertGreaterEqual(sum(b.mark == "run" for b in found), 4)
        listing = subprocess.run([sys.executable, RUNNER, guide, "--list"], capture_output=True, text=True)
        self.assertEqual(listing.returncode, 0, listing.stderr)
        self.assertNotIn("UNMARKED", listing.stdout)


if __name__ == "__main__":
    unittest.main()
