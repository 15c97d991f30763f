"""python/legalnet/untrusted.py: the bounded JSON reader gives the verdicts of lib/util/json.h
(tests/util/json_test.cpp) on the same texts, and printable() escapes as lib/util/text.h does."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from legalnet.untrusted import check_json_bounds, load_json, printable  # noqa: E402


def nested(depth, open_="[", close="]"):
    return open_ * depth + close * depth


class BoundedJson(unittest.TestCase):
    def refusal(self, text, **limits):
        with self.assertRaises(ValueError) as raised:
            load_json(text, **limits)
        return str(raised.exception)

    def test_nesting_up_to_the_cap_is_read_and_one_level_more_is_refused(self):
        self.assertEqual(load_json(nested(64)), eval(nested(64)))  # noqa: S307 (brackets only)
        self.assertEqual(self.refusal(nested(65)), "JSON nested deeper than 64 levels (at byte 64)")
        self.assertEqual(self.refusal('{"a":' + nested(70, "{", "}") + "}"),
                         "JSON nested deeper than 64 levels (at byte 68)")
        self.assertIn("nested deeper than 64", self.refusal(nested(1_000_000)))  # no RecursionError

    def test_brackets_in_strings_and_escapes_do_not_count(self):
        text = '["' + "[" * 500 + '\\"' + "{" * 500 + '"]'
        self.assertEqual(len(load_json(text)[0]), 1001)
        self.assertEqual(self.refusal('["\\\\",' + nested(64) + "]"), "JSON nested deeper than 64 levels (at byte 69)")
        check_json_bounds(b'["\xc3\xa9[[[", 1]')  # bytes, with UTF-8 inside a string

    def test_size_cap_and_syntax_errors(self):
        self.assertEqual(self.refusal(" " * 101, max_bytes=100), "JSON of 101 bytes (at most 100)")
        message = self.refusal('{"a\x1b]0;owned\x07"')
        self.assertTrue(message.startswith("not JSON ("), message)
        self.assertNotIn("\x1b", message)


class Printable(unittest.TestCase):
    def test_controls_bytes_that_are_not_utf8_and_lone_surrogates_are_escaped(self):
        self.assertEqual(printable("a\x1b]0;x\x07\x7f\x9bé€"), "a\\x1b]0;x\\x07\\x7f\\x9bé€")
        self.assertEqual(printable(os.fsdecode(b"n\xff.pt")), "n\\xff.pt")
        self.assertEqual(printable("x\ud800"), "x\\xed\\xa0\\x80")
        self.assertEqual(printable(b"\xfe"), "\\xfe")
        self.assertEqual(printable("a" * 300), "a" * 200 + "...")
        self.assertEqual(printable("a" * 200), "a" * 200)
        # cut between pieces: an escape that would pass the limit is left out whole
        self.assertEqual(printable("a" * 198 + "\x7f\x7f"), "a" * 198 + "...")
        self.assertEqual(printable("a" * 196 + "\x7f"), "a" * 196 + "\\x7f")


if __name__ == "__main__":
    unittest.main()
