#!/usr/bin/env python3
"""png_check.py FILE.png - exit 1 unless the PNG decodes and is not blank.

Decodes the PNG with zlib (8-bit RGB/RGBA, the filters of the spec) and
requires at least 8 distinct colours and at least 2% of the pixels differing
from the most common colour (the background).
"""
import struct
import sys
import zlib
from collections import Counter


def fail(msg):
    print("png_check: FAIL: " + msg)
    sys.exit(1)


def main():
    data = open(sys.argv[1], "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail("not a PNG")
    pos, idat, hdr = 8, b"", None
    while pos < len(data):
        n, typ = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if typ == b"IHDR":
            hdr = struct.unpack(">IIBBBBB", body)
        elif typ == b"IDAT":
            idat += body
        pos += 12 + n
    w, h, depth, ctype = hdr[0], hdr[1], hdr[2], hdr[3]
    if depth != 8 or ctype not in (2, 6):
        fail("unsupported PNG type %d/%d" % (depth, ctype))
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(idat)
    stride = w * bpp
    prev = bytearray(stride)
    colours = Counter()
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        prev = line
        if y % 2 == 0:
            for x in range(0, stride, bpp * 2):
                colours[bytes(line[x:x + 3])] += 1
    total = sum(colours.values())
    bg = colours.most_common(1)[0][1]
    if len(colours) < 8:
        fail("only %d colours: blank page" % len(colours))
    if (total - bg) / total < 0.02:
        fail("%.2f%% of pixels differ from the background" % (100.0 * (total - bg) / total))
    print("png_check: ok: %dx%d, %d colours, %.1f%% non-background" % (w, h, len(colours),
                                                                      100.0 * (total - bg) / total))


main()
