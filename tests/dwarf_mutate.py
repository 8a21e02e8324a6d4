#!/usr/bin/env python3
"""Mutate the DWARF of an ELF file, for the converter's tests.

Mostly: flip the DW_CHILDREN byte of abbreviations in .debug_abbrev.

The mutation of issue 11: one abbreviation said to have children (or not)
when its DIEs were written the other way makes a naive DIE walk revisit the
same DIEs without end.  Used by tests/test_gsym.sh and
tests/test_gsym_server.sh on debug files built at test time.

  dwarf_mutate.py list FILE            one line per abbreviation:
                                      index offset code tag children uses
  dwarf_mutate.py flip FILE OUT N...   write FILE to OUT with the children
                                      byte of abbreviations N... flipped
  dwarf_mutate.py pick FILE            the index of the DW_CHILDREN_no
                                      abbreviation used by the most DIEs
  dwarf_mutate.py each FILE DIR        DIR/flip.N.debug for every N, each
                                      with abbreviation N flipped; prints
                                      how many
  dwarf_mutate.py deep D L INFO ABBREV  write a sound DWARF 5 unit, for
                                      objcopy --update-section: D nested
                                      lexical blocks, L variables in the
                                      innermost: each dwarf_siblingof() of
                                      a block skips the L variables, so a
                                      libdw walk costs D * L
  dwarf_mutate.py wide R N LO INFO ABBREV RANGES
                                      write a sound DWARF 4 unit and its
                                      .debug_ranges: one function of R
                                      ranges (LO + 2i, one byte each: LO
                                      must begin 2R bytes of .text) over
                                      N inlined calls, each at LO: the
                                      inlined calls are looked at once per
                                      range (as LLVM does), R * N in all,
                                      within the converter's budget for
                                      R <= 200, and that takes minutes

"uses" counts the DIEs of .debug_info that name the abbreviation (units of
DWARF 2 to 5, 32-bit format, uncompressed sections only: what
`gcc -g` writes).
"""
import struct
import sys


def uleb(b, p):
    v = shift = 0
    while True:
        c = b[p]
        p += 1
        v |= (c & 0x7f) << shift
        shift += 7
        if not c & 0x80:
            return v, p


def sections(b):
    if b[:4] != b"\x7fELF":
        sys.exit("not ELF")
    is64 = b[4] == 2
    end = "<" if b[5] == 1 else ">"
    if is64:
        shoff, = struct.unpack_from(end + "Q", b, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from(end + "HHH", b, 0x3a)
        fmt, size_at = end + "IIQQQQ", (24, 32)
    else:
        shoff, = struct.unpack_from(end + "I", b, 0x20)
        shentsize, shnum, shstrndx = struct.unpack_from(end + "HHH", b, 0x2e)
        fmt, size_at = end + "IIIIII", (16, 20)
    hdrs = []
    for i in range(shnum):
        o = shoff + i * shentsize
        name, typ, flags = struct.unpack_from(end + ("IIQ" if is64 else "III"), b, o)
        off, = struct.unpack_from(end + ("Q" if is64 else "I"), b, o + size_at[0])
        size, = struct.unpack_from(end + ("Q" if is64 else "I"), b, o + size_at[1])
        hdrs.append((name, typ, flags, off, size))
    stro = hdrs[shstrndx][3]
    out = {}
    for name, typ, flags, off, size in hdrs:
        n = b[stro + name:b.index(b"\0", stro + name)].decode()
        if flags & 0x800:           # SHF_COMPRESSED
            continue
        out.setdefault(n, (off, size))
    return out, end


def abbrevs(b, off, size):
    """{set offset: [(code, tag, children byte offset, attr forms)]}"""
    sets, p, end = {}, off, off + size
    while p < end:
        start = p - off
        lst = []
        while p < end:
            code, p = uleb(b, p)
            if code == 0:
                break
            tag, p = uleb(b, p)
            ch = p
            p += 1
            forms = []
            while True:
                name, p = uleb(b, p)
                form, p = uleb(b, p)
                if form == 0x21:    # DW_FORM_implicit_const
                    _, p = uleb(b, p)
                if name == 0 and form == 0:
                    break
                forms.append(form)
            lst.append((code, tag, ch, forms))
        sets[start] = lst
    return sets


def count_uses(b, secs, end, sets):
    """How many DIEs use each abbreviation (by children byte offset).
    Only counts what can be skipped without a full DWARF reader: the first
    DIE of each unit and a linear scan where every form has a known size."""
    uses = {}
    if ".debug_info" not in secs:
        return uses
    off, size = secs[".debug_info"]
    p, stop = off, off + size
    fixed = {0x0b: 1, 0x05: 2, 0x06: 4, 0x07: 8, 0x0c: 1,
             0x11: 1, 0x12: 2, 0x13: 4, 0x14: 8, 0x10: 4, 0x0e: 4,
             0x17: 4, 0x19: 0, 0x1f: 4, 0x20: 8, 0x21: 0, 0x25: 1,
             0x26: 2, 0x27: 3, 0x28: 4, 0x29: 1, 0x2a: 2, 0x2b: 3,
             0x2c: 4, 0x1e: 16, 0x1c: 4, 0x1d: 4}
    while p + 11 <= stop:
        ulen, = struct.unpack_from(end + "I", b, p)
        if ulen >= 0xfffffff0:
            break
        unit_end = p + 4 + ulen
        ver, = struct.unpack_from(end + "H", b, p + 4)
        if ver >= 5:
            ut = b[p + 6]
            asize = b[p + 7]
            aoff, = struct.unpack_from(end + "I", b, p + 8)
            q = p + 12 + (8 if ut in (2, 6, 4, 5) else 0)
        else:
            aoff, = struct.unpack_from(end + "I", b, p + 6)
            asize = b[p + 10]
            q = p + 11
        table = {c: (ch, forms) for c, _, ch, forms in sets.get(aoff, [])}
        try:
            while q < unit_end:
                code, q = uleb(b, q)
                if code == 0:
                    continue
                ch, forms = table[code]
                uses[ch] = uses.get(ch, 0) + 1
                for f in forms:
                    if f in fixed:
                        q += fixed[f]
                    elif f == 0x01:
                        q += asize
                    elif f in (0x08,):          # string
                        q = b.index(b"\0", q) + 1
                    elif f in (0x0f, 0x15, 0x1a, 0x1b, 0x22, 0x23, 0x0d):
                        _, q = uleb(b, q)
                    elif f == 0x18 or f == 0x09:    # exprloc, block
                        n, q = uleb(b, q)
                        q += n
                    elif f == 0x0a:
                        q += 1 + b[q]
                    elif f == 0x03:
                        q += 2 + struct.unpack_from(end + "H", b, q)[0]
                    elif f == 0x04:
                        q += 4 + struct.unpack_from(end + "I", b, q)[0]
                    else:
                        raise KeyError(f)
        except (KeyError, IndexError):
            pass
        p = unit_end
    return uses


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    cmd, path = sys.argv[1], sys.argv[2]
    if cmd == "deep" and len(sys.argv) == 6:
        d, n = int(sys.argv[2]), int(sys.argv[3])
        # 1 compile_unit, 2 lexical_block (both with children), 3 variable
        ab = bytes([1, 0x11, 1, 0, 0, 2, 0x0b, 1, 0, 0, 3, 0x34, 0, 0, 0, 0])
        body = (bytes([5, 0, 1, 8]) + struct.pack("<I", 0) + b"\x01" +
                b"\x02" * d + b"\x03" * n + b"\x00" * (d + 1))
        open(sys.argv[4], "wb").write(struct.pack("<I", len(body)) + body)
        open(sys.argv[5], "wb").write(ab)
        return
    if cmd == "wide" and len(sys.argv) == 8:
        r, n, lo = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4], 0)
        # 1 compile_unit (low_pc addr), 2 subprogram (name string, ranges
        # sec_offset), 3 inlined_subroutine (low_pc addr, high_pc data4)
        ab = bytes([1, 0x11, 1, 0x11, 0x01, 0, 0,
                    2, 0x2e, 1, 0x03, 0x08, 0x55, 0x17, 0, 0,
                    3, 0x1d, 0, 0x11, 0x01, 0x12, 0x06, 0, 0, 0])
        inl = b"\x03" + struct.pack("<QI", lo, 1)
        body = (struct.pack("<HIB", 4, 0, 8) +
                b"\x01" + struct.pack("<Q", 0) +
                b"\x02" + b"wide\0" + struct.pack("<I", 0) +
                inl * n + b"\x00\x00")
        rng = b"".join(struct.pack("<QQ", lo + 2 * i, lo + 2 * i + 1)
                       for i in range(r)) + struct.pack("<QQ", 0, 0)
        open(sys.argv[5], "wb").write(struct.pack("<I", len(body)) + body)
        open(sys.argv[6], "wb").write(ab)
        open(sys.argv[7], "wb").write(rng)
        return
    b = bytearray(open(path, "rb").read())
    secs, end = sections(b)
    if ".debug_abbrev" not in secs:
        sys.exit("%s: no uncompressed .debug_abbrev" % path)
    sets = abbrevs(b, *secs[".debug_abbrev"])
    flat = [a for s in sorted(sets) for a in sets[s]]
    if cmd == "list" or cmd == "pick":
        uses = count_uses(b, secs, end, sets)
        best = None
        for i, (code, tag, ch, _) in enumerate(flat):
            n = uses.get(ch, 0)
            if cmd == "list":
                print(i, ch, code, hex(tag), b[ch], n)
            elif b[ch] == 0 and (best is None or n > best[1]):
                best = (i, n)
        if cmd == "pick":
            if best is None:
                sys.exit("no DW_CHILDREN_no abbreviation")
            print(best[0])
    elif cmd == "each" and len(sys.argv) == 4:
        for i, a in enumerate(flat):
            b[a[2]] ^= 1
            open("%s/flip.%d.debug" % (sys.argv[3], i), "wb").write(b)
            b[a[2]] ^= 1
        print(len(flat))
    elif cmd == "flip" and len(sys.argv) >= 5:
        for n in sys.argv[4:]:
            ch = flat[int(n)][2]
            b[ch] ^= 1
        open(sys.argv[3], "wb").write(b)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
