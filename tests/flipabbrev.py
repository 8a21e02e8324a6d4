#!/usr/bin/env python3
"""flipabbrev.py ELF OUTDIR: write OUTDIR/N, for each abbreviation N of
ELF's .debug_abbrev, a copy of ELF with that abbreviation's DW_CHILDREN
byte flipped (0 <-> 1): DWARF whose DIE tree no longer matches its bytes,
the corruption that once made the GSYM converter walk without end.
Prints how many it wrote.  ELF: 64-bit little-endian, .debug_abbrev not
compressed (gcc -gz=none)."""
import os, struct, sys

def sections(b):
    if b[:4] != b'\x7fELF' or b[4] != 2 or b[5] != 1:
        sys.exit("flipabbrev: not a 64-bit little-endian ELF file")
    shoff, = struct.unpack_from('<Q', b, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from('<HHH', b, 0x3a)
    hdrs = [struct.unpack_from('<IIQQQQIIQQ', b, shoff + i * shentsize)
            for i in range(shnum)]
    stroff = hdrs[shstrndx][4]
    for h in hdrs:
        end = b.index(b'\0', stroff + h[0])
        yield b[stroff + h[0]:end].decode(), h[4], h[5], h[2]

def uleb(b, p):
    v = s = 0
    while True:
        c = b[p]
        p += 1
        v |= (c & 0x7f) << s
        s += 7
        if c < 0x80:
            return v, p

def children_bytes(b, off, size):
    p, end, out = off, off + size, []
    while p < end:
        code, p = uleb(b, p)
        if code == 0:
            continue
        _, p = uleb(b, p)                  # tag
        out.append(p)                      # DW_CHILDREN_*
        p += 1
        while True:
            name, p = uleb(b, p)
            form, p = uleb(b, p)
            if form == 0x21:               # DW_FORM_implicit_const
                _, p = uleb(b, p)
            if name == 0 and form == 0:
                break
    return out

b = bytearray(open(sys.argv[1], 'rb').read())
for name, off, size, flags in sections(b):
    if name == '.debug_abbrev':
        if flags & 0x800:                  # SHF_COMPRESSED
            sys.exit("flipabbrev: .debug_abbrev is compressed")
        pos = children_bytes(b, off, size)
        break
else:
    sys.exit("flipabbrev: no .debug_abbrev")
os.makedirs(sys.argv[2], exist_ok=True)
for n, p in enumerate(pos):
    b[p] ^= 1
    with open(os.path.join(sys.argv[2], str(n)), 'wb') as f:
        f.write(b)
    b[p] ^= 1
print(len(pos))
