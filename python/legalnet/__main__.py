"""python -m legalnet export MODEL.safetensors OUT.onnx|OUT.pt2|OUT.ts
        (ONNX, a torch.export program, or legacy TorchScript, for people without legalnet)
python -m legalnet score MODEL.safetensors FEN [TOP]   (the model's most likely moves in a position)
python -m legalnet convert OLD.pt NEW.safetensors      (a model.pt of an earlier legalnet, read as data)"""
import sys


def main(argv):
    import legalnet
    if len(argv) == 3 and argv[0] == "export":
        written = legalnet.export_model(argv[1], argv[2])
        print(f"legalnet: wrote {argv[2]} ({written}; inputs: {legalnet.load_model(argv[1]).inputs})")
        return 0
    if len(argv) in (3, 4) and argv[0] == "score":
        model = legalnet.load_model(argv[1])
        for move, p in legalnet.score_fen(model, argv[2], int(argv[3]) if len(argv) == 4 else 10):
            print(f"{move:<6} {p:.4f}")
        return 0
    if len(argv) == 3 and argv[0] == "convert":
        from .convert import convert_old_model
        convert_old_model(argv[1], argv[2])
        print(f"legalnet: wrote {argv[2]}")
        return 0
    print(__doc__.strip(), file=sys.stderr)
    return 2


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except (OSError, ValueError, RuntimeError) as e:
        print(f"legalnet: {str(e).splitlines()[0] if str(e) else type(e).__name__}", file=sys.stderr)
        sys.exit(1)
