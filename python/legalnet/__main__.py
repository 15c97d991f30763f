"""legalnet export MODEL.safetensors OUT.onnx|OUT.pt2|OUT.ts
        (ONNX, a torch.export program, or legacy TorchScript, for people without legalnet)
legalnet score MODEL.safetensors FEN [TOP]   (the model's most likely moves in a position)
legalnet convert OLD.pt NEW.safetensors      (a model.pt of an earlier legalnet, read as data)
(`legalnet` is the command `pip install ./python` installs; `python -m legalnet` is the same.)"""
import os
import sys


def run(argv):
    if argv in (["-h"], ["--help"], ["help"]):
        print(__doc__.strip())
        return 0
    from .untrusted import printable, quoted
    if len(argv) == 4 and argv[0] == "score":  # TOP: a count of 1 or more (more than 4096 is all), before torch loads
        if not (argv[3].isascii() and argv[3].isdigit() and int(argv[3]) >= 1):
            raise ValueError(f"score: TOP {quoted(argv[3], 40)} is not a count of moves (1 or more)")
    import legalnet
    if len(argv) == 3 and argv[0] == "export":
        written = legalnet.export_model(argv[1], argv[2])
        print(f"legalnet: wrote {printable(argv[2], 1000)} ({written}; inputs: {legalnet.load_model(argv[1]).inputs})")
        return 0
    if len(argv) in (3, 4) and argv[0] == "score":
        model = legalnet.load_model(argv[1])
        for move, p in legalnet.score_fen(model, argv[2], int(argv[3]) if len(argv) == 4 else 10):
            print(f"{move:<6} {p:.4f}")
        return 0
    if len(argv) == 3 and argv[0] == "convert":
        from .convert import convert_old_model
        convert_old_model(argv[1], argv[2])
        print(f"legalnet: wrote {printable(argv[2], 1000)}")
        return 0
    print(__doc__.strip(), file=sys.stderr)
    return 2


def _fail(line, status):
    """One line on stderr (escaped: it quotes file names and their contents) and the exit status,
    whatever stderr is; the interpreter's exit handlers are skipped (they could print more)."""
    from .untrusted import printable
    try:
        sys.stderr.write(f"legalnet: {printable(line, 1000)}\n")
        sys.stderr.flush()
    except BaseException:  # stderr closed or full: the status still says it
        pass
    os._exit(status)


def main(argv=None):
    """The `legalnet` command (the console script pip installs) and `python -m legalnet`: the
    exit status; every failure is one line on stderr (_fail)."""
    argv = sys.argv[1:] if argv is None else argv
    try:
        status = run(argv)
        sys.stdout.flush()
    except BrokenPipeError:  # the reader went away (`legalnet --help | head`): quiet, as SIGPIPE leaves a C tool
        os._exit(141)
    except KeyboardInterrupt:  # SIGINT: the temporaries are gone (write_atomically), as a shell expects
        _fail("interrupted", 130)
    except MemoryError:
        _fail("out of memory", 1)
    except Exception as e:  # noqa: BLE001 (full disks, read-only folders, a torch or onnx failure: one line each)
        text = str(e)
        if isinstance(e, OSError) and e.strerror and isinstance(e.filename, (str, bytes)):
            text = f"{os.fsdecode(e.filename)}: {e.strerror}"  # the name as it is, escaped below (not repr's)
        # The first line only (torch appends a trace), but a name from the command line that
        # holds a newline stays whole, escaped ("a\x0ab.safetensors: cannot read: ...").
        from .untrusted import printable
        for arg in argv:
            if isinstance(arg, str) and arg.splitlines() != [arg] and arg:
                text = text.replace(arg, printable(arg, 1000))
        text = text.strip()
        _fail(text.splitlines()[0] if text else type(e).__name__, 1)
    return status


if __name__ == "__main__":
    sys.exit(main())
