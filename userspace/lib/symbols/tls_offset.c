// SPDX-License-Identifier: GPL-2.0-only
/*
 * Where a thread-local variable of an executable lives, as an offset
 * from the thread pointer: what tailor record hands tailor.ko for the
 * tag word (--tag-word SYMBOL).
 *
 * On x86-64 (TLS variant II) the executable's TLS block is the first in
 * static TLS and ends at the thread pointer; its variables have fixed,
 * negative offsets that the static linker bakes into local-exec code and
 * the dynamic loader must honour: the block of size p_memsz and
 * alignment p_align starts at
 *
 *     tp - (round_up(p_memsz - firstbyte, p_align) + firstbyte),
 *     firstbyte = -(p_vaddr mod p_align) mod p_align
 *
 * (glibc's _dl_determine_tlsoffset for the first module, and the ELF
 * TLS ABI), and the variable is st_value bytes into the block.  A shared
 * library's TLS is placed by the loader at run time, and a dlopen'ed
 * one's per thread on demand: no fixed offset exists for those, which is
 * why only the executable is read here.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "tailor/symbols.h"
#include "symbols/internal.h"

int tls_find_symbol(Elf *elf, const char *name, Elf64_Word only, GElf_Sym *out,
		    Elf_Scn **table, size_t *index)
{
	Elf_Scn *scn = NULL;

	/* .symtab if not stripped, else .dynsym (an exported variable). */
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		Elf_Data *data;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    (only && sh.sh_type != only) || !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		n = sh.sh_size / sh.sh_entsize;
		for (i = 0; i < n; i++) {
			GElf_Sym sym;
			const char *sname;

			if (!gelf_getsym(data, (int)i, &sym) ||
			    GELF_ST_TYPE(sym.st_info) != STT_TLS ||
			    sym.st_shndx == SHN_UNDEF)
				continue;
			sname = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (sname && !strcmp(sname, name)) {
				*out = sym;
				if (table)
					*table = scn;
				if (index)
					*index = i;
				return 0;
			}
		}
	}
	return -ENOENT;
}

int tls_symbol_offset(const char *path, const char *name, int64_t *offset,
		      char *err, size_t errlen)
{
	GElf_Ehdr eh;
	GElf_Phdr tls = { 0 };
	GElf_Sym sym;
	bool have_tls = false;
	uint64_t align, firstbyte, block;
	size_t i, nphdr;
	Elf *elf;
	int fd, rc = -EINVAL;

	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "cannot open '%s': %s", path, strerror(errno));
		return -errno;
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64) {
		snprintf(err, errlen, "'%s' is not an x86-64 ELF executable", path);
		goto out;
	}
	if (elf_getphdrnum(elf, &nphdr))
		nphdr = 0;
	for (i = 0; i < nphdr; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_TLS) {
			tls = ph;
			have_tls = true;
		}
	}
	if (!have_tls) {
		snprintf(err, errlen, "'%s' has no thread-local storage (no PT_TLS), so no '%s'",
			 path, name);
		rc = -ENOENT;
		goto out;
	}
	if (tls_find_symbol(elf, name, 0, &sym, NULL, NULL)) {
		snprintf(err, errlen, "'%s' defines no thread-local symbol '%s' (stripped, or the word is in a shared library: give the offset instead)",
			 path, name);
		rc = -ENOENT;
		goto out;
	}
	align = tls.p_align ? tls.p_align : 1;
	/*
	 * Without wrapping: a symbol near 2^64 passed "st_value + 8 >
	 * p_memsz" and gave a positive offset (fuzz_tls found it).  A
	 * TLS block is far below a GiB; so is its alignment.
	 */
	if (align & (align - 1) || align > (1u << 30) || tls.p_memsz > (1u << 30) ||
	    sym.st_value > tls.p_memsz || tls.p_memsz - sym.st_value < 8) {
		snprintf(err, errlen, "'%s': damaged TLS segment (align %" PRIu64 ", size %" PRIu64 ", '%s' at %" PRIu64 ")",
			 path, align, (uint64_t)tls.p_memsz, name, (uint64_t)sym.st_value);
		goto out;
	}
	firstbyte = (align - (tls.p_vaddr & (align - 1))) & (align - 1);
	block = ((tls.p_memsz - firstbyte + align - 1) & ~(align - 1)) + firstbyte;
	*offset = (int64_t)sym.st_value - (int64_t)block;
	rc = 0;
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return rc;
}
