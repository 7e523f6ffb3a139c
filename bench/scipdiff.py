"""Compares the references of two SCIP indexes of one project (two builds'
`signpost index` output): how many (file, line, symbol) references the
second adds and removes, with a random sample of each to read by hand.

    python3 bench/scipdiff.py OLD.scip NEW.scip [SEED]

No dependency: the protobuf is walked by hand (Index.documents = 2,
Document.relative_path = 1, Document.occurrences = 2, Occurrence.range = 1,
symbol = 2, symbol_roles = 3; a definition has role bit 1)."""

import random
import sys


def varint(b, i):
    r = s = 0
    while True:
        c = b[i]
        i += 1
        r |= (c & 0x7F) << s
        s += 7
        if c < 0x80:
            return r, i


def fields(b):
    i = 0
    while i < len(b):
        k, i = varint(b, i)
        f, w = k >> 3, k & 7
        if w == 0:
            v, i = varint(b, i)
        elif w == 2:
            n, i = varint(b, i)
            v = b[i : i + n]
            i += n
        elif w == 1:
            v, i = b[i : i + 8], i + 8
        elif w == 5:
            v, i = b[i : i + 4], i + 4
        else:
            raise ValueError(f"wire type {w}")
        yield f, v


def references(path):
    """Every reference (not definition) with a symbol: (file, 1-based line, symbol)."""
    out = set()
    for f, doc in fields(open(path, "rb").read()):
        if f != 2:
            continue
        file, occurrences = None, []
        for f2, v in fields(doc):
            if f2 == 1:
                file = v.decode()
            elif f2 == 2:
                occurrences.append(v)
        for o in occurrences:
            line, symbol, roles = None, "", 0
            for f3, v in fields(o):
                if f3 == 1 and isinstance(v, bytes):
                    line = varint(v, 0)[0] if v else None
                elif f3 == 1 and line is None:
                    line = v
                elif f3 == 2:
                    symbol = v.decode()
                elif f3 == 3:
                    roles = v
            if roles & 1 == 0 and line is not None and symbol:
                out.add((file, line + 1, symbol))
    return out


def main():
    old, new = references(sys.argv[1]), references(sys.argv[2])
    rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 1)
    added, removed = sorted(new - old), sorted(old - new)
    print(f"added {len(added)}, removed {len(removed)}")
    for x in rng.sample(added, min(12, len(added))):
        print("+", *x)
    for x in rng.sample(removed, min(12, len(removed))):
        print("-", *x)


if __name__ == "__main__":
    main()
