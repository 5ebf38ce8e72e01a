"""Reads an 8-bit RGB PNG (what difgames writes) without libraries, for the viewer's and models' tests.

    python3 viewer_png.py FILE.png stats          -> "W H distinct_colours"
    python3 viewer_png.py FILE.png pixel X Y      -> "RRGGBB" of the pixel at (X, Y)
    python3 viewer_png.py FILE.png near X Y RGB R -> the least colour distance (max over channels)
                                                     to RGB within R pixels of (X, Y)
    python3 viewer_png.py FILE.png words X0 X1 RGB -> one line a line of text in columns [X0, X1)
                                                     on background RGB, top to bottom: "Y0 Y1 W",
                                                     W the width of its last word (the columns
                                                     after its last gap of 3 or more)
    python3 viewer_png.py FILE.png box X Y W H    -> a hash of the box's pixels (equal boxes, equal hashes)
"""
import hashlib
import struct
import sys
import zlib


def read_png(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, w = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and ctype == 2, "want 8-bit RGB"
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw, bpp, stride = zlib.decompress(idat), 3, w * 3
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1: line[i] = (line[i] + a) & 255
            elif f == 2: line[i] = (line[i] + b) & 255
            elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return w, h, rows


def main():
    w, h, rows = read_png(sys.argv[1])
    cmd = sys.argv[2]
    px = lambda x, y: tuple(rows[y][3 * x:3 * x + 3])
    if cmd == "stats":
        print(w, h, len({bytes(r[i:i + 3]) for r in rows for i in range(0, 3 * w, 3)}))
    elif cmd == "pixel":
        print("%02x%02x%02x" % px(int(sys.argv[3]), int(sys.argv[4])))
    elif cmd == "near":
        x0, y0, rgb, r = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5], 16), int(sys.argv[6])
        want = ((rgb >> 16) & 255, (rgb >> 8) & 255, rgb & 255)
        best = 255
        for y in range(max(0, y0 - r), min(h, y0 + r + 1)):
            for x in range(max(0, x0 - r), min(w, x0 + r + 1)):
                best = min(best, max(abs(a - b) for a, b in zip(px(x, y), want)))
        print(best)
    elif cmd == "words":
        x0, x1, rgb = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5], 16)
        bg = ((rgb >> 16) & 255, (rgb >> 8) & 255, rgb & 255)
        ink = lambda x, y: max(abs(a - b) for a, b in zip(px(x, y), bg)) > 60
        y = 0
        while y < h:
            if not any(ink(x, y) for x in range(x0, x1)):
                y += 1
                continue
            top = y
            while y < h and any(ink(x, y) for x in range(x0, x1)):
                y += 1
            cols = [x for x in range(x0, x1) if any(ink(x, r) for r in range(top, y))]
            start = cols[0]
            for a, b in zip(cols, cols[1:]):
                if b - a > 3:
                    start = b
            print(top, y, cols[-1] - start + 1)
    elif cmd == "box":
        x0, y0, bw, bh = (int(a) for a in sys.argv[3:7])
        assert 0 <= x0 and 0 <= y0 and x0 + bw <= w and y0 + bh <= h, "box outside the image"
        print(hashlib.sha256(b"".join(bytes(rows[y][3 * x0:3 * (x0 + bw)]) for y in range(y0, y0 + bh))).hexdigest())


main()
