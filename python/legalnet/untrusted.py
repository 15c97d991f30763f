"""Text from files on its way in and out, as lib/util/json.h and lib/util/text.h treat it: JSON
read through one bounded reader (a size cap, and nesting counted by a linear scan before
json.loads builds anything: the values it builds are walked recursively by json.dumps, ==, and
copies, so text nested thousands deep would end in a RecursionError), and names and messages
escaped before they reach a terminal."""
import json

MAX_JSON_BYTES = 16 << 20  # util/json.h's JsonLimits
MAX_JSON_DEPTH = 64


def check_json_bounds(text, max_bytes=MAX_JSON_BYTES, max_depth=MAX_JSON_DEPTH):
    """ValueError when ``text`` (str or bytes) is longer than ``max_bytes`` or opens more than
    ``max_depth`` arrays and objects inside each other; strings and their escapes are skipped."""
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else bytes(text)
    if len(data) > max_bytes:
        raise ValueError(f"JSON of {len(data)} bytes (at most {max_bytes})")
    depth, in_string, escaped = 0, False, False
    # Bytes, not characters: '"', '\\' and brackets are single bytes in UTF-8 and never part of
    # a longer sequence, so the scan is the one util/json.cpp runs.
    for i, c in enumerate(data):
        if in_string:
            if escaped:
                escaped = False
            elif c == 0x5C:
                escaped = True
            elif c == 0x22:
                in_string = False
        elif c == 0x22:
            in_string = True
        elif c in (0x5B, 0x7B):
            depth += 1
            if depth > max_depth:
                raise ValueError(f"JSON nested deeper than {max_depth} levels (at byte {i})")
        elif c in (0x5D, 0x7D) and depth > 0:
            depth -= 1


def load_json(text, max_bytes=MAX_JSON_BYTES, max_depth=MAX_JSON_DEPTH):
    """``text`` parsed after check_json_bounds; ValueError "not JSON (...)" otherwise."""
    check_json_bounds(text, max_bytes, max_depth)
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as e:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise ValueError(f"not JSON ({printable(str(e))})") from None


def printable(text, max_chars=200):
    """``text`` with every control character (below 0x20, 0x7F, U+0080..U+009F) and every byte
    that was not UTF-8 (a surrogate escape, or a lone surrogate) written as \\xNN, cut to at
    most ``max_chars`` between two pieces (ending "..."): util/text.h's printable()."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "surrogateescape")
    out = []
    size = 0
    for c in str(text):
        o = ord(c)
        if 0xDC80 <= o <= 0xDCFF:  # a byte that was not UTF-8 (os.fsdecode, sys.argv)
            piece = f"\\x{o - 0xDC00:02x}"
        elif 0xD800 <= o <= 0xDFFF:  # a lone surrogate, from JSON's \\uDxxx
            piece = "".join(f"\\x{b:02x}" for b in c.encode("utf-8", "surrogatepass"))
        elif o < 0x20 or 0x7F <= o <= 0x9F:
            piece = f"\\x{o:02x}"
        else:
            piece = c
        if size + len(piece) > max_chars:  # cut between pieces, never inside an escape
            out.append("...")
            break
        out.append(piece)
        size += len(piece)
    return "".join(out)


def quoted(text, max_chars=100):
    """``text`` between single quotes, escaped by printable(): how a message quotes what a user
    or a file gave (repr would show a byte that was not UTF-8 as \\udcff, the C++ tools as \\xff)."""
    return f"'{printable(text, max_chars)}'"
