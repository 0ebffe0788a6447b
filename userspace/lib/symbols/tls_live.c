// SPDX-License-Identifier: GPL-2.0-only
/*
 * Where a thread-local variable lives in a running process, as an offset
 * from the thread pointer, wherever it is defined: the executable (its
 * offset is fixed, tls_offset.c; found as /proc/PID/exe) or a shared
 * library the process has loaded.  A library's TLS block is placed by the dynamic loader, so its
 * offset is read from the process itself, from the GOT entry its own
 * code reads the variable through (the relocation that names it):
 *
 *   R_X86_64_TLSDESC   a descriptor {function, argument}; for a block in
 *                      static TLS (every library loaded at start, and a
 *                      dlopen'ed one while the surplus lasts) glibc's
 *                      function returns the argument, the variable's
 *                      offset from the thread pointer (negative on
 *                      x86-64); for one in dynamic TLS the argument
 *                      points to the loader's own data instead
 *   R_X86_64_TPOFF64   initial-exec: the slot holds the offset itself
 *   R_X86_64_DTPMOD64  general-dynamic through __tls_get_addr: the
 *                      block is found per thread through the DTV only
 *
 * The last, and dynamic TLS, have no offset that holds for every thread:
 * they are named, not guessed at.  This is what OpenTelemetry's thread
 * context asks of a reader (OTEP 4947: "readers MUST support" TLSDESC,
 * the GNU dialect and static access); tailor reads the static ones.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <unistd.h>
#include "tailor/symbols.h"
#include "symbols/internal.h"

/*
 * The address, page-aligned, of the PT_LOAD that maps the file's first
 * page: the mapping at file offset 0 starts there plus the load bias.
 */
static int first_load(Elf *elf, uint64_t *vaddr)
{
	size_t i, n;

	if (elf_getphdrnum(elf, &n))
		return -1;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
		    ph.p_offset < 4096) {
			*vaddr = (ph.p_vaddr - ph.p_offset) & ~(uint64_t)4095;
			return 0;
		}
	}
	return -1;
}

/*
 * The relocation of the GOT entry through which the library reads symbol
 * @idx: its type, the entry's address in the file and its addend; an
 * entry with a static offset (TLSDESC, TPOFF64) before a DTPMOD64 one.
 * 0, or -ENOENT.
 */
static int tls_reloc(Elf *elf, Elf_Scn *dynsym, size_t idx, uint32_t *type, uint64_t *where,
		     int64_t *addend)
{
	size_t dynsym_ndx = elf_ndxscn(dynsym);
	Elf_Scn *scn = NULL;
	int found = -ENOENT;

	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		Elf_Data *data;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || sh.sh_link != dynsym_ndx ||
		    !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		n = sh.sh_size / sh.sh_entsize;
		for (i = 0; i < n; i++) {
			GElf_Rela r;
			uint32_t t;

			if (!gelf_getrela(data, (int)i, &r) || GELF_R_SYM(r.r_info) != idx)
				continue;
			t = (uint32_t)GELF_R_TYPE(r.r_info);
			if (t == R_X86_64_TLSDESC || t == R_X86_64_TPOFF64) {
				*type = t;
				*where = r.r_offset;
				*addend = r.r_addend;
				return 0;
			}
			if (t == R_X86_64_DTPMOD64 && found) {
				*type = t;
				*where = r.r_offset;
				*addend = 0;
				found = 0;
			}
		}
	}
	return found;
}

/* @len bytes of process @pid's memory at @addr. */
static int read_mem(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = pread(fd, buf, len, (off_t)addr);
	close(fd);
	return n == (ssize_t)len ? 0 : -EIO;
}

int tls_object_offset(pid_t pid, const char *path, const char *shown, uint64_t start,
		      const char *name, int64_t *offset, char *err, size_t errlen)
{
	Elf_Scn *dynsym = NULL;
	GElf_Ehdr eh;
	uint64_t vaddr, got, slot[2];
	int64_t addend;
	uint32_t type;
	GElf_Sym sym;
	size_t idx;
	Elf *elf;
	int fd, rc = -ENOENT;

	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -ENOENT;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64)
		goto out;
	/* The GOT's relocations name .dynsym's symbols. */
	if (tls_find_symbol(elf, name, SHT_DYNSYM, &sym, &dynsym, &idx))
		goto out;
	rc = -EOPNOTSUPP;
	if (tls_reloc(elf, dynsym, idx, &type, &got, &addend) || first_load(elf, &vaddr)) {
		snprintf(err, errlen, "'%s' defines '%s' but no GOT entry reads it (no TLSDESC, TPOFF64 or DTPMOD64 relocation)",
			 shown, name);
		goto out;
	}
	if (type == R_X86_64_DTPMOD64) {
		snprintf(err, errlen, "'%s' reads '%s' through __tls_get_addr (general-dynamic, the GNU dialect): its place is each thread's own, not read (build with -mtls-dialect=gnu2)",
			 shown, name);
		goto out;
	}
	got += start - vaddr;
	if (read_mem(pid, got, slot, sizeof(slot))) {
		snprintf(err, errlen, "cannot read the GOT entry of '%s' in '%s' (process %d)", name,
			 shown, (int)pid);
		goto out;
	}
	/* The entry's offset is the symbol's plus the relocation's addend. */
	*offset = (int64_t)((type == R_X86_64_TLSDESC ? slot[1] : slot[0]) - (uint64_t)addend);
	/* Static TLS ends at the thread pointer; a descriptor's pointer is no offset. */
	if (*offset >= 0 || *offset < -(1LL << 30)) {
		snprintf(err, errlen, "'%s' in '%s' is in dynamic TLS (the library was loaded past the static TLS surplus): its place is each thread's own, not read",
			 name, shown);
		goto out;
	}
	rc = 0;
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return rc;
}

int tls_live_offset(pid_t pid, const char *name, int64_t *offset, char *object, size_t objlen,
		    char *err, size_t errlen)
{
	char path[4200], line[4608], seen[64][256];
	size_t nseen = 0, i;
	struct stat exe;
	int rc = -ENOENT;
	FILE *maps;

	elf_version(EV_CURRENT);
	/*
	 * The executable first, by its own file (its .symtab too, a
	 * static PIE too): its block's offset is fixed (tls_offset.c).
	 */
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	if (stat(path, &exe)) {
		snprintf(err, errlen, "cannot find the executable of process %d: %s", (int)pid,
			 strerror(errno));
		return -errno;
	}
	rc = tls_symbol_offset(path, name, offset, err, errlen);
	if (rc != -ENOENT) {
		if (!rc && readlink(path, object, objlen - 1) < 0)
			snprintf(object, objlen, "%s", path);
		return rc;
	}
	err[0] = 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	maps = fopen(path, "re");
	if (!maps) {
		snprintf(err, errlen, "cannot read the mappings of process %d: %s", (int)pid,
			 strerror(errno));
		return -errno;
	}
	while (rc == -ENOENT && fgets(line, sizeof(line), maps)) {
		unsigned long long start, end, off, inode;
		unsigned int maj, min;
		char perms[8], *file;
		int n = 0;

		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &off, &maj,
			   &min, &inode, &n) < 7 || !n || off)
			continue;
		/* The executable's mappings: read above. */
		if (inode == (unsigned long long)exe.st_ino && maj == major(exe.st_dev) &&
		    min == minor(exe.st_dev))
			continue;
		file = line + n;
		file[strcspn(file, "\n")] = 0;
		if (file[0] != '/')
			continue;
		for (i = 0; i < nseen && strncmp(seen[i], file, sizeof(seen[i]) - 1); i++)
			;
		if (i < nseen)
			continue;
		if (nseen < 64)
			snprintf(seen[nseen++], sizeof(seen[0]), "%s", file);
		/* Through the process's root: the file it mapped, in a container too. */
		snprintf(path, sizeof(path), "/proc/%d/root%s", (int)pid, file);
		rc = tls_object_offset(pid, path, file, start, name, offset, err, errlen);
		if (!rc)
			snprintf(object, objlen, "%s", file);
	}
	fclose(maps);
	return rc;
}
