"""python -m legalnet export MODEL.pt OUT.ts   (a TorchScript file to hand to other people)
python -m legalnet score MODEL.pt FEN [TOP]   (the model's most likely moves in a position)"""
import sys


def main(argv):
    import legalnet
    if len(argv) == 3 and argv[0] == "export":
        legalnet.export_torchscript(argv[1], argv[2])
        print(f"legalnet: wrote {argv[2]} (torch.jit.load it; inputs: {legalnet.load_model(argv[1]).inputs})")
        return 0
    if len(argv) in (3, 4) and argv[0] == "score":
        model = legalnet.load_model(argv[1])
        for move, p in legalnet.score_fen(model, argv[2], int(argv[3]) if len(argv) == 4 else 10):
            print(f"{move:<6} {p:.4f}")
        return 0
    print(__doc__.strip(), file=sys.stderr)
    return 2


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except (OSError, ValueError, RuntimeError) as e:
        print(f"legalnet: {e}", file=sys.stderr)
        sys.exit(1)
