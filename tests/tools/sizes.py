#!/usr/bin/env python3
"""sizes.py SOURCE_DIR: lib/ stays in small pieces. Fails, naming the file and line, on a lib/
file over 400 lines, or a function (a definition's body, lambdas inside it counted with it)
over 80 lines outside the chess core (lib/chess/, where a move generator's one long function
reads best whole, as Stockfish's do). The parse is a brace count over the text with comments,
strings and character literals blanked: a body is a `{` at namespace or class level after a
`)` (with const, noexcept, override, final, or a trailing return type or initializer list)."""
import os
import re
import sys

MAX_FILE_LINES = 400
MAX_FUNCTION_LINES = 80
EXEMPT_FUNCTIONS = ("lib/chess/",)

TOKENS = re.compile(r'//[^\n]*|/\*.*?\*/|R"(?P<delim>[^(\s]*)\(.*?\)(?P=delim)"|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'',
                    re.S)


def blank(text):
    """The text with comments and literals replaced by spaces (newlines kept)."""
    return TOKENS.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


HEAD = re.compile(r"\)\s*(?:const|noexcept|override|final|mutable|->\s*[\w:<>,\s\*&]+|\s)*"
                  r"(?::\s*[\w:]+\s*[({][^;{}]*[)}](?:\s*,\s*[\w:]+\s*[({][^;{}]*[)}])*\s*)?$")
CONTROL = re.compile(r"\b(if|for|while|switch|catch)\s*\($")


def functions(text):
    """(first line, last line) of each function body at namespace or class level."""
    code = blank(text)
    out = []
    stack = []  # for each open brace: (kind, line, start offset)
    line = 1
    last = 0  # offset after the last ';', '{' or '}' at any depth
    for i, c in enumerate(code):
        if c == "\n":
            line += 1
        elif c == "{":
            head = code[last:i].strip()
            inside_function = any(k == "function" for k, _, _ in stack)
            kind = "block"
            if not inside_function and HEAD.search(head) and not re.search(r"\b(namespace|struct|class|enum|union)\b[^)]*$", head):
                paren = head.rfind(")")
                opened = head[:paren]
                if not CONTROL.search(opened[: opened.rfind("(") + 1] if "(" in opened else ""):
                    kind = "function"
            stack.append((kind, line, i))
            last = i + 1
        elif c == "}":
            if stack:
                kind, first, _ = stack.pop()
                if kind == "function":
                    out.append((first, line))
            last = i + 1
        elif c == ";":
            last = i + 1
    return out


def main():
    root = sys.argv[1]
    failures = []
    for folder, _, names in os.walk(os.path.join(root, "lib")):
        for name in sorted(names):
            if not name.endswith((".h", ".cpp", ".inc")):
                continue
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, root)
            text = open(path, encoding="utf-8").read()
            lines = text.count("\n")
            if lines > MAX_FILE_LINES:
                failures.append(f"{rel}: {lines} lines (at most {MAX_FILE_LINES} a file)")
            if rel.startswith(EXEMPT_FUNCTIONS):
                continue
            for first, last in functions(text):
                if last - first + 1 > MAX_FUNCTION_LINES:
                    failures.append(f"{rel}:{first}: a function of {last - first + 1} lines (at most {MAX_FUNCTION_LINES})")
    for f in failures:
        print("sizes:", f)
    if failures:
        sys.exit(1)
    print("sizes ok: no lib/ file over", MAX_FILE_LINES, "lines, no function over", MAX_FUNCTION_LINES,
          "outside lib/chess/")


if __name__ == "__main__":
    main()
