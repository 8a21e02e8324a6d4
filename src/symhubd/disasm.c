/*
 * disasm: a function's code decoded with Capstone (disasm.h).  libelf
 * finds the section and the symbols; the bytes are read with pread(), at
 * most DISASM_MAX and an instruction's more.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <capstone/capstone.h>
#include <gelf.h>

#include "disasm.h"

/* Longest instruction of the machines decoded (x86's). */
#define INSN_MAX	15

/* The file's first loadable segment's address: the base of relative
 * addresses.  @return 0; -ENOEXEC. */
static int
load_base(Elf *e, uint64_t *base)
{
	GElf_Phdr	ph;
	size_t		i, n;

	if (elf_getphdrnum(e, &n) != 0)
		return -ENOEXEC;
	for (i = 0; i < n; i++)
		if (gelf_getphdr(e, (int)i, &ph) != NULL &&
		    ph.p_type == PT_LOAD) {
			*base = ph.p_vaddr;
			return 0;
		}
	*base = 0;	/* none: a relocatable file's addresses as they are */
	return 0;
}

static Elf *
open_elf(int fd)
{
	Elf *e;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return NULL;
	if ((e = elf_begin(fd, ELF_C_READ_MMAP, NULL)) == NULL)
		return NULL;
	if (elf_kind(e) != ELF_K_ELF) {
		elf_end(e);
		return NULL;
	}
	return e;
}

/* The end of the sized function symbol of table type that holds addr,
 * or 0. */
static uint64_t
sym_end(Elf *e, Elf64_Word type, uint64_t addr)
{
	Elf_Scn		*scn = NULL;
	GElf_Shdr	 sh;
	GElf_Sym	 sym;
	Elf_Data	*data;
	size_t		 i, n;

	while ((scn = elf_nextscn(e, scn)) != NULL) {
		if (gelf_getshdr(scn, &sh) == NULL || sh.sh_type != type ||
		    sh.sh_entsize == 0 || (data = elf_getdata(scn,
		    NULL)) == NULL)
			continue;
		n = sh.sh_size / sh.sh_entsize;
		for (i = 0; i < n; i++)
			if (gelf_getsym(data, (int)i, &sym) != NULL &&
			    GELF_ST_TYPE(sym.st_info) == STT_FUNC &&
			    sym.st_shndx != SHN_UNDEF && sym.st_size > 0 &&
			    addr >= sym.st_value &&
			    addr - sym.st_value < sym.st_size)
				return sym.st_value + sym.st_size;
	}
	return 0;
}

int
disasm_function_end(int fd, uint64_t rel, uint64_t *end)
{
	Elf		*e;
	uint64_t	 base, addr, fend;
	int		 rc = -ENOENT;

	if ((e = open_elf(fd)) == NULL)
		return -ENOEXEC;
	if (load_base(e, &base) != 0) {
		rc = -ENOEXEC;
		goto out;
	}
	addr = base + rel;
	if ((fend = sym_end(e, SHT_SYMTAB, addr)) == 0)
		fend = sym_end(e, SHT_DYNSYM, addr);
	if (fend != 0) {
		*end = fend - base;
		rc = 0;
	}
out:
	elf_end(e);
	return rc;
}

/* The machine's Capstone mode and names.  @return 0; -ENOTSUP. */
static int
machine(Elf *e, cs_arch *arch, cs_mode *mode, struct disasm *d,
    unsigned *step)
{
	GElf_Ehdr eh;

	if (gelf_getehdr(e, &eh) == NULL)
		return -ENOEXEC;
	switch (eh.e_machine) {
	case EM_X86_64:
		*arch = CS_ARCH_X86;
		*mode = CS_MODE_64;
		d->arch = "x86_64";
		d->syntax = "Intel";
		*step = 1;
		return 0;
	case EM_386:
		*arch = CS_ARCH_X86;
		*mode = CS_MODE_32;
		d->arch = "i686";
		d->syntax = "Intel";
		*step = 1;
		return 0;
	case EM_AARCH64:
		*arch = CS_ARCH_ARM64;
		*mode = eh.e_ident[EI_DATA] == ELFDATA2MSB ? CS_MODE_BIG_ENDIAN :
		    CS_MODE_LITTLE_ENDIAN;
		d->arch = "aarch64";
		d->syntax = "ARM";
		*step = 4;
		return 0;
	default:
		return -ENOTSUP;
	}
}

/* The section of code holding addr: its file bytes from addr, *avail of
 * them.  @return 0; -ERANGE; -ENODATA (NOBITS). */
static int
code_at(Elf *e, uint64_t addr, uint64_t *off, uint64_t *avail)
{
	Elf_Scn		*scn = NULL;
	GElf_Shdr	 sh;

	while ((scn = elf_nextscn(e, scn)) != NULL) {
		if (gelf_getshdr(scn, &sh) == NULL ||
		    (sh.sh_flags & SHF_ALLOC) == 0 ||
		    (sh.sh_flags & SHF_EXECINSTR) == 0 ||
		    addr < sh.sh_addr || addr - sh.sh_addr >= sh.sh_size)
			continue;
		if (sh.sh_type == SHT_NOBITS)
			return -ENODATA;
		*off = sh.sh_offset + (addr - sh.sh_addr);
		*avail = sh.sh_size - (addr - sh.sh_addr);
		return 0;
	}
	return -ERANGE;
}

/* samply's text for bytes that are no instruction. */
static int
invalid(disasm_insn_fn cb, void *ctx, uint64_t at, const unsigned char *p,
    size_t n)
{
	char	text[96];
	size_t	i, l = 0;

	l += (size_t)snprintf(text, sizeof(text), ".byte ");
	for (i = 0; i < n && l < sizeof(text); i++)
		l += (size_t)snprintf(text + l, sizeof(text) - l, "%s0x%02x",
		    i > 0 ? ", " : "", p[i]);
	if (l < sizeof(text))
		(void)snprintf(text + l, sizeof(text) - l,
		    " # Invalid instruction");
	return cb(ctx, at, text);
}

int
disasm_code(int fd, uint64_t rel, uint64_t size, struct disasm *d,
    disasm_insn_fn cb, void *ctx)
{
	Elf			*e;
	csh			 h = 0;
	cs_insn			*insn = NULL;
	cs_arch			 arch;
	cs_mode			 mode;
	unsigned char		*buf = NULL;
	const uint8_t		*code;
	uint64_t		 base, off, avail, addr, want, at;
	size_t			 left;
	ssize_t			 got;
	unsigned		 step;
	int			 rc;

	memset(d, 0, sizeof(*d));
	if (size > DISASM_MAX)
		return -EFBIG;
	if ((e = open_elf(fd)) == NULL)
		return -ENOEXEC;
	if ((rc = machine(e, &arch, &mode, d, &step)) != 0 ||
	    (rc = load_base(e, &base)) != 0)
		goto out;
	if (step == 4)
		rel &= ~(uint64_t)3;
	d->start = rel;
	if ((rc = code_at(e, base + rel, &off, &avail)) != 0)
		goto out;
	want = size + INSN_MAX < avail ? size + INSN_MAX : avail;
	if (size > avail)
		size = avail;
	if ((buf = malloc(want + 1)) == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	for (left = 0; left < want; left += (size_t)got)
		if ((got = pread(fd, buf + left, want - left,
		    (off_t)(off + left))) <= 0) {
			rc = got < 0 ? -errno : -EIO;
			goto out;
		}
	if (cs_open(arch, mode, &h) != CS_ERR_OK ||
	    (insn = cs_malloc(h)) == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	code = buf;
	left = (size_t)want;
	addr = rel;	/* branch targets print relative, as samply's do */
	while ((at = addr - rel) < size) {
		char text[CS_MNEMONIC_SIZE + 1 + sizeof(insn->op_str)];

		if (cs_disasm_iter(h, &code, &left, &addr, insn)) {
			(void)snprintf(text, sizeof(text), "%s%s%s",
			    insn->mnemonic, insn->op_str[0] ? " " : "",
			    insn->op_str);
			if ((rc = cb(ctx, at, text)) != 0)
				goto out;
			continue;
		}
		if (left == 0)
			break;
		/* Not an instruction: step over it as samply does. */
		if ((rc = invalid(cb, ctx, at, code, step < left ? step :
		    left)) != 0)
			goto out;
		at = step < left ? step : left;
		code += at;
		left -= (size_t)at;
		addr += at;
	}
	d->size = addr - rel;
	rc = 0;
out:
	if (insn != NULL)
		cs_free(insn, 1);
	if (h != 0)
		cs_close(&h);
	free(buf);
	elf_end(e);
	return rc;
}
