// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unwinding perf record --call-graph dwarf samples: code built without
 * frame pointers leaves no chain for the kernel to follow, so perf copies
 * the user registers and the top of the user stack into each sample, and
 * the caller of each frame is found afterwards through the call frame
 * information (CFI: .eh_frame, else .debug_frame) of the file mapped at
 * its IP -- what perf's util/unwind-libdw.c does through libdwfl.
 *
 * Why libdw's CFI calls (dwarf_cfi_addrframe, dwarf_frame_cfa,
 * dwarf_frame_register) rather than libdwfl's thread unwinder
 * (dwfl_attach_state, dwfl_getthread_frames): the latter wants one Dwfl
 * with every module of the process reported at its run-time address, and
 * the process's maps change over the profile (dlopen, exec), so perf
 * builds one per sample.  The symbolizer already knows which file was
 * mapped where at the sample's time and keeps one Dwfl per file; an
 * address there is one lookup away from that file's CFI, and the rules
 * found for an address are kept, so that a sample costs a few hash
 * lookups and register evaluations per frame.  The walk itself follows
 * libdwfl's (frame_unwind.c), so that its stacks are perf's: the same CFI
 * preference, the same rules for registers (the ABI's defaults come with
 * the CFI libdwfl gives a module), the return address looked up one byte
 * back except after a signal frame, the outermost frame where the return
 * address is undefined, and, where no CFI covers an address, the frame
 * pointer followed as elfutils' x86-64 backend follows it.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdlib.h>
#include <string.h>
#include "symbols/internal.h"
#include "symbols/unwind_dwarf.h"
#include "util/grow.h"
#include "util/hashmap.h"

/* DWARF's x86-64 registers: rax rdx rcx rbx rsi rdi rbp rsp r8..r15, and the return address. */
#define NR_DWARF_REGS	17
#define DWARF_RBP	6
#define DWARF_RSP	7
#define DWARF_RA	16

/*
 * perf's x86-64 register numbers (asm/perf_regs.h: AX BX CX DX SI DI BP
 * SP IP FLAGS CS SS DS ES FS GS R8..R15) as DWARF's; -1: none there.
 */
static const int8_t dwarf_of_perf[24] = {
	0, 3, 2, 1, 4, 5, DWARF_RBP, DWARF_RSP, DWARF_RA,
	-1, -1, -1, -1, -1, -1, -1,
	8, 9, 10, 11, 12, 13, 14, 15,
};

/* Bounds on a DWARF expression's work (libdwfl's are 0x100 and 0x1000). */
#define EXPR_STACK	64
#define EXPR_STEPS	0x1000

/*
 * The rules CFI gives for one address of one file: found once, kept, as
 * a hot loop's samples are at a few addresses.  (Not for the range
 * dwarf_frame_info() gives: at an FDE's first row libdw 0.188 gives the
 * whole FDE, though later rows differ.)
 */
struct cfi_rules {
	Dwarf_Frame *frame;
	Dwarf_Addr bias;	/* of the CFI it came from: for DW_OP_addr */
	int ra;			/* the return address's register */
	bool signal;		/* a signal trampoline's ('S' augmentation) */
};

/*
 * A file's CFI, asked of libdwfl once; .debug_frame only where .eh_frame
 * fails an address, as it may mean reading a separate debug file.
 */
struct file_cfi {
	Dwarf_CFI *eh, *debug;
	Dwarf_Addr eh_bias, debug_bias;
	bool debug_asked;
};

/* Addresses whose rules are kept (some 350 bytes each); past them, found anew. */
#define MAX_KEPT	(1u << 17)

struct unwinder {
	struct symbolizer *sym;
	struct pair_map file_index;	/* (sym_file, 0) -> cfis */
	struct file_cfi *cfis;
	size_t nr_cfis, cap_cfis;
	struct pair_map kept_index;	/* (cfis index, module address) -> kept */
	struct cfi_rules *kept;
	size_t nr_kept, cap_kept;
};

/* A frame's registers: the ones known, by DWARF number. */
struct regs {
	uint64_t r[NR_DWARF_REGS];
	uint32_t known;
};

/* The sampled stack: @size bytes from @sp up. */
struct stack {
	const uint8_t *bytes;
	uint64_t sp, size;
};

struct unwinder *unwind_new(struct symbolizer *sym)
{
	struct unwinder *u = calloc(1, sizeof(*u));

	if (u)
		u->sym = sym;
	return u;
}

void unwind_free(struct unwinder *u)
{
	size_t i;

	if (!u)
		return;
	for (i = 0; i < u->nr_kept; i++)
		free(u->kept[i].frame);
	free(u->kept);
	free(u->cfis);
	pair_map_free(&u->file_index);
	pair_map_free(&u->kept_index);
	free(u);
}

static bool reg_get(const struct regs *rs, uint64_t regno, uint64_t *val)
{
	if (regno >= NR_DWARF_REGS || !(rs->known >> regno & 1))
		return false;
	*val = rs->r[regno];
	return true;
}

static void reg_set(struct regs *rs, unsigned int regno, uint64_t val)
{
	rs->r[regno] = val;
	rs->known |= 1u << regno;
}

/* @len (1 to 8) bytes of the sampled stack; false outside it: the walk ends there. */
static bool stack_read_size(const struct stack *st, uint64_t addr, uint64_t len, uint64_t *val)
{
	if (addr < st->sp || st->size < len || addr - st->sp > st->size - len)
		return false;
	*val = 0;
	/* x86-64 is little-endian: the low bytes first. */
	memcpy(val, st->bytes + (addr - st->sp), len);
	return true;
}

static bool stack_read(const struct stack *st, uint64_t addr, uint64_t *val)
{
	return stack_read_size(st, addr, 8, val);
}

static bool push(uint64_t *stack, size_t *n, uint64_t v)
{
	if (*n == EXPR_STACK)
		return false;
	stack[(*n)++] = v;
	return true;
}

static bool pop(uint64_t *stack, size_t *n, uint64_t *v)
{
	if (!*n)
		return false;
	*v = stack[--*n];
	return true;
}

/* The op at byte offset @offset of the expression, for DW_OP_bra and DW_OP_skip. */
static const Dwarf_Op *op_at(const Dwarf_Op *ops, size_t nops, uint64_t offset)
{
	size_t i;

	for (i = 0; i < nops; i++)
		if (ops[i].offset == offset)
			return &ops[i];
	return NULL;
}

static bool eval_cfa(const struct regs *rs, const struct stack *st, Dwarf_Frame *frame,
		     Dwarf_Addr bias, uint64_t *cfa);

/*
 * A DWARF expression of CFI, as libdwfl evaluates it (frame_unwind.c's
 * expr_eval): a value, or, where it pushed the CFA
 * (DW_OP_call_frame_cfa, as a register's "offset(N)" and "expression"
 * rules begin) and no DW_OP_stack_value followed, the address of the
 * value, read from the stack.  @frame: NULL in the CFA's own expression.
 */
static bool eval(const struct regs *rs, const struct stack *st, Dwarf_Frame *frame,
		 Dwarf_Addr bias, const Dwarf_Op *ops, size_t nops, uint64_t *result)
{
	uint64_t stack[EXPR_STACK], a, b, c;
	size_t n = 0, steps = 0;
	bool location = false;
	const Dwarf_Op *op;

	if (!nops)
		return false;
	for (op = ops; op < ops + nops; op++) {
		if (++steps > EXPR_STEPS)
			return false;
		switch (op->atom) {
		case DW_OP_lit0 ... DW_OP_lit31:
			if (!push(stack, &n, op->atom - DW_OP_lit0))
				return false;
			break;
		case DW_OP_addr:
			if (!push(stack, &n, op->number + bias))
				return false;
			break;
		case DW_OP_const1u: case DW_OP_const1s: case DW_OP_const2u:
		case DW_OP_const2s: case DW_OP_const4u: case DW_OP_const4s:
		case DW_OP_const8u: case DW_OP_const8s: case DW_OP_constu:
		case DW_OP_consts:
			if (!push(stack, &n, op->number))
				return false;
			break;
		case DW_OP_reg0 ... DW_OP_reg31:
			if (!reg_get(rs, op->atom - DW_OP_reg0, &a) || !push(stack, &n, a))
				return false;
			break;
		case DW_OP_regx:
			if (!reg_get(rs, op->number, &a) || !push(stack, &n, a))
				return false;
			break;
		case DW_OP_breg0 ... DW_OP_breg31:
			if (!reg_get(rs, op->atom - DW_OP_breg0, &a) ||
			    !push(stack, &n, a + op->number))
				return false;
			break;
		case DW_OP_bregx:
			if (!reg_get(rs, op->number, &a) || !push(stack, &n, a + op->number2))
				return false;
			break;
		case DW_OP_dup:
			if (!pop(stack, &n, &a) || !push(stack, &n, a) || !push(stack, &n, a))
				return false;
			break;
		case DW_OP_drop:
			if (!pop(stack, &n, &a))
				return false;
			break;
		case DW_OP_pick:
			if (op->number >= n || !push(stack, &n, stack[n - 1 - op->number]))
				return false;
			break;
		case DW_OP_over:
			if (n < 2 || !push(stack, &n, stack[n - 2]))
				return false;
			break;
		case DW_OP_swap:
			if (!pop(stack, &n, &a) || !pop(stack, &n, &b) ||
			    !push(stack, &n, a) || !push(stack, &n, b))
				return false;
			break;
		case DW_OP_rot:
			if (!pop(stack, &n, &a) || !pop(stack, &n, &b) || !pop(stack, &n, &c) ||
			    !push(stack, &n, a) || !push(stack, &n, c) || !push(stack, &n, b))
				return false;
			break;
		case DW_OP_deref:
		case DW_OP_deref_size:
			/* deref_size reads only its bytes: 4 at the copy's top are there. */
			if (!pop(stack, &n, &a) ||
			    (op->atom == DW_OP_deref_size ?
			     op->number > 8 || !op->number || !stack_read_size(st, a, op->number, &a) :
			     !stack_read(st, a, &a)))
				return false;
			if (!push(stack, &n, a))
				return false;
			break;
		case DW_OP_abs:
		case DW_OP_neg:
		case DW_OP_not:
			if (!pop(stack, &n, &a))
				return false;
			if (op->atom == DW_OP_abs)
				a = (int64_t)a < 0 ? -a : a;
			else
				a = op->atom == DW_OP_neg ? -a : ~a;
			if (!push(stack, &n, a))
				return false;
			break;
		case DW_OP_plus_uconst:
			if (!pop(stack, &n, &a) || !push(stack, &n, a + op->number))
				return false;
			break;
		case DW_OP_and: case DW_OP_div: case DW_OP_minus: case DW_OP_mod:
		case DW_OP_mul: case DW_OP_or: case DW_OP_plus: case DW_OP_shl:
		case DW_OP_shr: case DW_OP_shra: case DW_OP_xor: case DW_OP_le:
		case DW_OP_ge: case DW_OP_eq: case DW_OP_lt: case DW_OP_gt:
		case DW_OP_ne:
			if (!pop(stack, &n, &b) || !pop(stack, &n, &a))
				return false;
			switch (op->atom) {
			case DW_OP_and: a &= b; break;
			case DW_OP_div:
				/* INT64_MIN / -1 would trap: no CFI means it. */
				if (!b || (b == UINT64_MAX && a == 1ull << 63))
					return false;
				a = (uint64_t)((int64_t)a / (int64_t)b);
				break;
			case DW_OP_minus: a -= b; break;
			case DW_OP_mod:
				if (!b)
					return false;
				a %= b;
				break;
			case DW_OP_mul: a *= b; break;
			case DW_OP_or: a |= b; break;
			case DW_OP_plus: a += b; break;
			case DW_OP_shl: a = b < 64 ? a << b : 0; break;
			case DW_OP_shr: a = b < 64 ? a >> b : 0; break;
			case DW_OP_shra:
				a = (uint64_t)((int64_t)a >> (b < 64 ? b : 63));
				break;
			case DW_OP_xor: a ^= b; break;
			case DW_OP_le: a = (int64_t)a <= (int64_t)b; break;
			case DW_OP_ge: a = (int64_t)a >= (int64_t)b; break;
			case DW_OP_eq: a = a == b; break;
			case DW_OP_lt: a = (int64_t)a < (int64_t)b; break;
			case DW_OP_gt: a = (int64_t)a > (int64_t)b; break;
			case DW_OP_ne: a = a != b; break;
			}
			if (!push(stack, &n, a))
				return false;
			break;
		case DW_OP_bra:
			if (!pop(stack, &n, &a))
				return false;
			if (!a)
				break;
			/* fall through */
		case DW_OP_skip:
			/* The target: after this op (1 byte, a 2-byte operand), plus its offset. */
			op = op_at(ops, nops, op->offset + 3 + (uint64_t)(int64_t)(int16_t)op->number);
			if (!op)
				return false;
			op--;
			break;
		case DW_OP_nop:
			break;
		case DW_OP_call_frame_cfa:
			if (!frame || !eval_cfa(rs, st, frame, bias, &a) || !push(stack, &n, a))
				return false;
			location = true;
			break;
		case DW_OP_stack_value:
			location = false;
			break;
		default:
			return false;
		}
	}
	if (!pop(stack, &n, result))
		return false;
	return !location || stack_read(st, *result, result);
}

static bool eval_cfa(const struct regs *rs, const struct stack *st, Dwarf_Frame *frame,
		     Dwarf_Addr bias, uint64_t *cfa)
{
	Dwarf_Op *ops;
	size_t nops;

	if (dwarf_frame_cfa(frame, &ops, &nops) || !nops)
		return false;
	return eval(rs, st, NULL, bias, ops, nops, cfa);
}

/* @f's CFI (cfis index), asked of libdwfl on first sight; -1 without memory. */
static long file_cfi(struct unwinder *u, struct sym_file *f)
{
	struct file_cfi *c;
	uint32_t idx;

	if (pair_map_get(&u->file_index, (uintptr_t)f, 0, &idx))
		return idx;
	if (array_grow((void **)&u->cfis, &u->cap_cfis, u->nr_cfis + 1, sizeof(*u->cfis)) ||
	    pair_map_put(&u->file_index, (uintptr_t)f, 0, (uint32_t)u->nr_cfis))
		return -1;
	c = &u->cfis[u->nr_cfis];
	/* Owned by the module (freed with its Dwfl); the ABI's default rules come with them. */
	c->eh = dwfl_module_eh_cfi(f->mod, &c->eh_bias);
	return (long)u->nr_cfis++;
}

/*
 * The rules for module address @addr of @f into *@r: from .eh_frame,
 * else from .debug_frame, as libdwfl prefers them.  false where none
 * covers it.  *@owned: r->frame is the caller's to free (not kept).
 */
static bool rules_at(struct unwinder *u, struct sym_file *f, uint64_t addr,
		     struct cfi_rules *r, bool *owned)
{
	struct file_cfi *c;
	long ci = file_cfi(u, f);
	bool signal = false;
	uint32_t idx;

	*owned = false;
	if (ci < 0)
		return false;
	if (pair_map_get(&u->kept_index, (uint64_t)ci, addr, &idx)) {
		*r = u->kept[idx];
		return true;
	}
	c = &u->cfis[ci];
	r->frame = NULL;
	if (c->eh && !dwarf_cfi_addrframe(c->eh, addr - c->eh_bias, &r->frame)) {
		r->bias = c->eh_bias;
	} else {
		if (!c->debug_asked) {
			c->debug_asked = true;
			c->debug = dwfl_module_dwarf_cfi(f->mod, &c->debug_bias);
		}
		if (c->debug && !dwarf_cfi_addrframe(c->debug, addr - c->debug_bias, &r->frame))
			r->bias = c->debug_bias;
		else
			return false;
	}
	r->ra = dwarf_frame_info(r->frame, NULL, NULL, &signal);
	r->signal = signal;
	if (u->nr_kept >= MAX_KEPT ||
	    array_grow((void **)&u->kept, &u->cap_kept, u->nr_kept + 1, sizeof(*u->kept)) ||
	    pair_map_put(&u->kept_index, (uint64_t)ci, addr, (uint32_t)u->nr_kept)) {
		*owned = true;
		return true;
	}
	u->kept[u->nr_kept++] = *r;
	return true;
}

/*
 * The caller's registers by @cf's rules (libdwfl's handle_cfi): a register
 * without a rule the CFI can evaluate here is unknown to the caller.  The
 * caller's IP in *@pc; false at the outermost frame (the return address
 * undefined, or 0) or where it cannot be found.
 */
static bool step_cfi(const struct cfi_rules *cf, const struct regs *rs,
		     const struct stack *st, struct regs *caller, uint64_t *pc)
{
	unsigned int regno;

	caller->known = 0;
	for (regno = 0; regno < NR_DWARF_REGS; regno++) {
		Dwarf_Op ops_mem[3], *ops;
		size_t nops;
		uint64_t val;

		if (dwarf_frame_register(cf->frame, (int)regno, ops_mem, &ops, &nops))
			continue;
		if (!nops) {
			if (ops == ops_mem) {
				/* Undefined: at the return address, the outermost frame. */
				if ((int)regno == cf->ra)
					return false;
				continue;
			}
			if (ops || !reg_get(rs, regno, &val))
				continue;	/* same value, of a register not known */
		} else if (!eval(rs, st, cf->frame, cf->bias, ops, nops, &val)) {
			continue;
		}
		reg_set(caller, regno, val);
	}
	return cf->ra >= 0 && reg_get(caller, (unsigned int)cf->ra, pc) && *pc;
}

/*
 * No CFI for the address: the frame pointer, as elfutils' x86-64 backend
 * follows it (x86_64_unwind.c) -- the saved rbp at [rbp], the return
 * address above it.
 */
static bool step_frame_pointer(const struct regs *rs, const struct stack *st,
			       struct regs *caller, uint64_t *pc)
{
	uint64_t fp, sp, saved_fp;

	caller->known = 0;
	/* Both known, as elfutils asks, though only rbp leads. */
	if (!reg_get(rs, DWARF_RBP, &fp) || !fp || !reg_get(rs, DWARF_RSP, &sp))
		return false;
	if (!stack_read(st, fp, &saved_fp))
		saved_fp = 0;
	if (!stack_read(st, fp + 8, pc) || !*pc)
		return false;
	reg_set(caller, DWARF_RBP, saved_fp);
	reg_set(caller, DWARF_RSP, fp + 16);
	return true;
}

uint32_t unwind_user(struct unwinder *u, const struct tev_sample *s,
		     struct unwound_frame *frames, uint32_t max)
{
	struct regs rs = { .known = 0 }, caller;
	struct stack st;
	uint64_t mask = s->user_regs_mask, pc;
	uint32_t n = 0, k = 0;
	bool from_signal = false;
	int reg;

	if (!s->user_regs || !s->user_stack || !s->user_stack_size)
		return 0;
	/* The sampled registers, u64 each in the mask's bit order. */
	for (reg = 0; reg < 64; reg++) {
		uint64_t v;

		if (!(mask >> reg & 1))
			continue;
		memcpy(&v, (const uint8_t *)s->user_regs + 8ull * k++, 8);
		if (reg < (int)sizeof(dwarf_of_perf) && dwarf_of_perf[reg] >= 0)
			reg_set(&rs, (unsigned int)dwarf_of_perf[reg], v);
	}
	if (!reg_get(&rs, DWARF_RA, &pc) || !reg_get(&rs, DWARF_RSP, &st.sp))
		return 0;
	st.bytes = s->user_stack;
	st.size = s->user_stack_size;
	while (n < max) {
		/*
		 * A return address is looked up one byte back, in the call;
		 * the sampled IP, and one a signal interrupted, as they are.
		 */
		bool exact = !n || from_signal, found = false, owned = false, stepped;
		struct cfi_rules rules = { .frame = NULL };
		struct sym_file *f;
		uint64_t vaddr;

		f = sym_file_at(u->sym, s->pid, exact ? pc : pc - 1, s->time, &vaddr);
		if (f)
			found = rules_at(u, f, vaddr + f->bias, &rules, &owned);
		/* A signal trampoline is entered, not called: its address is exact too. */
		frames[n++] = (struct unwound_frame){ pc, exact || (found && rules.signal) };
		if (n == max) {
			if (owned)
				free(rules.frame);
			break;
		}
		stepped = found ? step_cfi(&rules, &rs, &st, &caller, &pc) :
				  step_frame_pointer(&rs, &st, &caller, &pc);
		if (owned)
			free(rules.frame);
		if (!stepped)
			break;
		/*
		 * A caller's frame lies above its callee's: a step that does
		 * not climb the stack (a frame pointer pointing at itself)
		 * would repeat the frame to the limit.  A signal frame's
		 * interrupted context may lie anywhere.
		 */
		if (!(found && rules.signal) && (caller.known & (1u << DWARF_RSP)) &&
		    (rs.known & (1u << DWARF_RSP)) && caller.r[DWARF_RSP] <= rs.r[DWARF_RSP])
			break;
		from_signal = found && rules.signal;
		rs = caller;
	}
	return n;
}
