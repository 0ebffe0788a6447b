// SPDX-License-Identifier: GPL-2.0-only
/*
 * tailor record: a /dev/tailor session and the side-band, written into a
 * self-describing recording (docs/recording-format.md).
 *
 * The file stays valid whatever happens: records are written whole, a
 * failed write cuts the file back to its last complete record, and an END
 * record says why recording stopped.  In launch mode the command is
 * created stopped, the session and the side-band attach to it, and only
 * then does it exec, so every mapping of the new image is seen.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "cli.h"
#include "collector.h"
#include "tailor/kallsyms.h"
#include "tailor/sample_pack.h"
#include "tailor/symbols.h"
#include "tailor/x86_regs.h"
#include "util/grow.h"
#include "util/hashmap.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open	434	/* x86-64, Linux 5.3; older headers lack it */
#endif

#define DEFAULT_FREQ		4000
#define DEFAULT_OUTPUT		"tailor.rec"
#define POLL_MS			100
#define STATUS_MS		500
#define RINGS_MS		1000	/* how often to look for new CPUs' rings */

enum {
	OPT_SOURCE = OPT_LONG_ONLY, OPT_PRECISE, OPT_REGS, OPT_DATA_ADDR, OPT_FILTER,
	OPT_DURATION, OPT_RING, OPT_TAG_WORD, OPT_NO_CHILDREN, OPT_NO_SWITCHES, OPT_NO_WAKEUPS,
	OPT_CALL_GRAPH, OPT_COLLECTOR,
};


static const struct cli_option record_options[] = {
	{ .id = 'e', .name = "event", .arg = "EVENT",
	  .help = "what to sample on: a PEBS event named as perf or\n"
		  "libpfm4 name it (cycles, instructions,\n"
		  "INST_RETIRED.PREC_DIST, MEM_INST_RETIRED.ALL_LOADS),\n"
		  "a raw encoding (r01c0), or cpu-clock for the\n"
		  "software clock.  Default: cycles where PEBS\n"
		  "exists, else the software clock.",
	  .complete = "cycles instructions cpu-clock INST_RETIRED.PREC_DIST MEM_INST_RETIRED.ALL_LOADS" },
	{ .id = 'c', .name = "period", .arg = "N",
	  .help = "a sample every N events (PEBS) or every N ns\n(software clock)" },
	{ .id = 'F', .name = "freq", .arg = "HZ",
	  .help = "a sample HZ times a second (default 4000;\nat most 100000).  Not with -c." },
	{ .id = OPT_COLLECTOR, .name = "collector", .arg = "WHICH",
	  .help = "module (tailor.ko, /dev/tailor), bpf (a BPF program\n"
		  "on the software clock, for kernels that load no\n"
		  "tailor.ko: needs CAP_BPF and CAP_PERFMON), or auto\n"
		  "(default: the module where /dev/tailor exists, else\n"
		  "BPF).  TAILOR_COLLECTOR in the environment sets the\n"
		  "default.",
	  .complete = "auto module bpf" },
	{ .id = OPT_SOURCE, .name = "source", .arg = "SOURCE",
	  .help = "auto (default: PEBS where the CPU has it, else the\n"
		  "software clock), pebs, or timer",
	  .complete = "auto pebs timer" },
	{ .id = OPT_PRECISE, .name = "precise", .arg = "N",
	  .help = "PEBS precise level, 1..3 (default 2)",
	  .complete = "1 2 3" },
	{ .id = OPT_REGS, .name = "regs", .arg = "LIST",
	  .help = "registers to capture with every sample, comma\n"
		  "separated: rax rbx rcx rdx rsi rdi rbp rsp r8..r15,\n"
		  "rip, or none.  A kernel sample of the software\n"
		  "clock holds the user registers at kernel entry;\n"
		  "its rip is where the thread entered.  Default: r15,\n"
		  "the tag register, and with the software clock and\n"
		  "kernel samples, rip too, which lets report charge\n"
		  "kernel work to the code that entered the kernel.",
	  .complete = "r15 r15,rip none rax rbx rcx rdx rsi rdi rbp rsp r8 r9 r10 r11 r12 r13 r14 rip" },
	{ .id = OPT_CALL_GRAPH, .name = "call-graph", .arg = "MODE",
	  .help = "record each sample's call stack, as perf record\n"
		  "--call-graph fp takes it: the kernel's frames by its\n"
		  "own unwinder, the user's by their frame pointers\n"
		  "(build with -fno-omit-frame-pointer).  MODE: fp,\n"
		  "or fp,N for up to N frames (default 32, at most\n"
		  "127 and perf's kernel.perf_event_max_stack); frames\n"
		  "past N are counted (END: stack_frames_lost).  Each distinct\n"
		  "stack is stored once.  Samples grow by 8(N+3) bytes\n"
		  "in the ring, whose default is then 2 MiB a CPU.\n"
		  "Needs tailor.ko's ABI 6.",
	  .complete = "fp fp,16 fp,64 fp,127" },
	{ .id = OPT_DATA_ADDR, .name = "data-addr",
	  .help = "capture the data address (PEBS memory events)" },
	{ .id = OPT_TAG_WORD, .name = "tag-word", .arg = "WHERE",
	  .help = "with every sample, read the thread's tag word\n"
		  "(libtailor's tailor/tag_word.h): WHERE is the\n"
		  "thread-local symbol in the executable\n"
		  "(tailor_tag_word), or its offset in bytes from the\n"
		  "thread pointer (a word in a shared library: the\n"
		  "number tailor_tag_word_offset() returns).\n"
		  "An unreadable word is counted, never a fault.",
	  .complete = "tailor_tag_word" },
	{ .id = OPT_FILTER, .name = "filter", .arg = "WHAT",
	  .help = "user, kernel or all (default all; kernel samples\nneed root)",
	  .complete = "user kernel all" },
	{ .id = 'p', .name = "pid", .arg = "PID",
	  .help = "attach to a running process and all its threads" },
	{ .id = OPT_NO_CHILDREN, .name = "no-children",
	  .help = "sample only the command's (or -p process's) own\n"
		  "threads.  By default, as with perf record, the\n"
		  "processes it forks after recording starts are\n"
		  "sampled too, each with its own pid and name (an\n"
		  "engine's compiler, its helpers); their tag word is\n"
		  "0, since their TLS is not the target's." },
	{ .id = OPT_NO_SWITCHES, .name = "no-switches",
	  .help = "do not record context switches.  By default every\n"
		  "switch of the target's threads (out, whether\n"
		  "preempted or blocked, and in, with the CPU) is\n"
		  "recorded for report --view parallelism, and so is\n"
		  "every wakeup of them, with the waker: a woken\n"
		  "thread can run from then.  tailor.ko records both\n"
		  "itself, on the samples' TSC (meta\n"
		  "sched_events_from=tailor.ko); a module older than\n"
		  "ABI 5 leaves them to perf's side-band, whose times\n"
		  "a stock kernel converts to TSC, and its wakeups to\n"
		  "sched:sched_waking from tracefs (meta wakeups says\n"
		  "whether)." },
	{ .id = OPT_NO_WAKEUPS, .name = "no-wakeups",
	  .help = "record switches but not wakeups: one record less\n"
		  "per wakeup (bench/switch-overhead.sh measures\n"
		  "both)" },
	{ .id = 'a', .name = "all-cpus",
	  .help = "sample every CPU (needs root)" },
	{ .id = 'o', .name = "output", .arg = "FILE",
	  .help = "the recording (default tailor.rec)",
	  .complete = "@file" },
	{ .id = OPT_DURATION, .name = "duration", .arg = "SEC",
	  .help = "stop after SEC seconds (a launched command then\nruns on unsampled)" },
	{ .id = OPT_RING, .name = "ring-records", .arg = "N",
	  .help = "per-CPU ring size in samples (default 32768)" },
	{ .id = 'q', .name = "quiet",
	  .help = "no live status line, no summary" },
	{ .id = 'h', .name = "help",
	  .help = "this text" },
	{ 0 }
};

static int run_record(const struct cli_command *cmd, int argc, char **argv);

const struct cli_command cmd_record = {
	.name = "record",
	.summary = "profile a command, a process or all CPUs into a recording",
	.synopsis = "usage: tailor record [options] -- COMMAND [ARGS...]\n"
		    "       tailor record [options] -p PID\n"
		    "       tailor record [options] -a",
	.description = "Sample a command (launched, with all its threads), a running process\n"
		       "(-p) or every CPU (-a) through tailor.ko and write a recording.\n"
		       "\n"
		       "Samples are read in place from each CPU's ring, mapped from\n"
		       "/dev/tailor, and written packed: a sample takes what changed since\n"
		       "the one before it, some 3 to 11 bytes in the file instead of 32 to 48\n"
		       "(format 2, which tailor 0.6 and later read; 'tailor dump' shows the\n"
		       "bytes per sample).\n"
		       "\n"
		       "At the end, the files JITs leave for profilers are copied into the\n"
		       "recording, so that a report names JIT code on another host and after\n"
		       "/tmp is cleaned: each jitdump a recorded process mapped (jit-PID.dump,\n"
		       "as perf finds it) and each recorded process's /tmp/perf-PID.map (with\n"
		       "a launched command, only one written since it started).",
	.options = record_options,
	.epilogue = "In launch mode tailor exits with the command's exit status.  Ctrl-C or\n"
		    "SIGTERM stop recording, pass the signal on to a launched command, and\n"
		    "leave a complete file; 'tailor dump' shows what a recording holds.\n"
		    "Other exit status: 1 the device or the output failed, 2 bad options.\n",
	.run = run_record,
	.options_first = true,
	.operands = "@command",
};

struct record_opts {
	enum collector_kind collector;
	const char *event;
	uint64_t period;
	uint64_t freq;
	int source;		/* -1: not given */
	unsigned int precise;
	uint64_t regs_mask;
	bool no_regs;
	bool no_children;
	bool no_switches, no_wakeups;
	bool data_addr;
	const char *tag_word;	/* symbol or offset, as given; NULL: none */
	uint32_t filter_flags;
	pid_t pid;
	bool all_cpus;
	const char *output;
	double duration;
	uint32_t ring_records;
	uint32_t callchain_max;	/* with call_graph; 0: the module's default */
	bool call_graph;
	bool quiet;
	char **command;
};

static volatile sig_atomic_t stop_signal;

static void on_stop_signal(int sig)
{
	stop_signal = sig;
}

static int bad_value(const char *opt, const char *val, const char *expected)
{
	usage_error(&cmd_record, "invalid value '%s' for %s: expected %s", val, opt, expected);
	return -1;
}

static int parse_u64(const char *opt, const char *val, uint64_t min,
		     uint64_t max, uint64_t *out)
{
	char *end;

	errno = 0;
	if (!*val || *val == '-')
		return bad_value(opt, val, "a positive integer");
	*out = strtoull(val, &end, 0);
	if (errno || *end || *out < min || *out > max) {
		char what[96];

		snprintf(what, sizeof(what), "an integer from %" PRIu64 " to %" PRIu64,
			 min, max);
		return bad_value(opt, val, what);
	}
	return 0;
}

static int parse_collector(const char *opt, const char *val, struct record_opts *o)
{
	if (!strcmp(val, "auto"))
		o->collector = COLLECTOR_AUTO;
	else if (!strcmp(val, "module"))
		o->collector = COLLECTOR_KMOD;
	else if (!strcmp(val, "bpf"))
		o->collector = COLLECTOR_BPF;
	else
		return bad_value(opt, val, "auto, module or bpf");
	return 0;
}

static int parse_regs(const char *val, struct record_opts *o)
{
	char buf[256], *tok, *save;
	int reg;

	if (!strcmp(val, "none")) {
		o->no_regs = true;
		o->regs_mask = 0;
		return 0;
	}
	snprintf(buf, sizeof(buf), "%s", val);
	o->regs_mask = 0;
	o->no_regs = false;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		/* The capturable registers, by their full names only. */
		reg = x86_register_number(tok);
		if (reg < 0 || !(TAILOR_REGS_CAPTURABLE >> reg & 1) ||
		    strcmp(tok, x86_register_name(reg))) {
			usage_error(&cmd_record, "unknown register '%s' in --regs: use rax rbx rcx rdx rsi rdi rbp rsp r8..r15, rip, or none",
				    tok);
			return -1;
		}
		o->regs_mask |= 1ull << reg;
	}
	if (!o->regs_mask)
		return bad_value("--regs", val, "a list of registers");
	return 0;
}

/* 0, 1 after --help, -1 on a bad option (reported). */
static int parse_args(int argc, char **argv, struct record_opts *o)
{
	const char *val;
	uint64_t v;
	char *end;
	int c;

	memset(o, 0, sizeof(*o));
	o->source = -1;
	o->output = DEFAULT_OUTPUT;
	val = getenv("TAILOR_COLLECTOR");
	if (val && *val && parse_collector("TAILOR_COLLECTOR", val, o))
		return -1;
	while ((c = usage_next(&cmd_record, argc, argv, &val)) != OPT_END) {
		switch (c) {
		case 'e':
			o->event = val;
			break;
		case 'c':
			if (parse_u64("-c/--period", val, 1, (1ull << 62), &o->period))
				return -1;
			break;
		case 'F':
			if (parse_u64("-F/--freq", val, 1, TAILOR_MAX_FREQ, &o->freq))
				return -1;
			break;
		case OPT_COLLECTOR:
			if (parse_collector("--collector", val, o))
				return -1;
			break;
		case OPT_SOURCE:
			if (!strcmp(val, "auto"))
				o->source = TAILOR_SOURCE_AUTO;
			else if (!strcmp(val, "pebs"))
				o->source = TAILOR_SOURCE_PEBS;
			else if (!strcmp(val, "timer"))
				o->source = TAILOR_SOURCE_TIMER;
			else
				return bad_value("--source", val, "auto, pebs or timer");
			break;
		case OPT_PRECISE:
			if (parse_u64("--precise", val, 1, 3, &v))
				return -1;
			o->precise = v;
			break;
		case OPT_REGS:
			if (parse_regs(val, o))
				return -1;
			break;
		case OPT_DATA_ADDR:
			o->data_addr = true;
			break;
		case OPT_TAG_WORD:
			if (!*val)
				return bad_value("--tag-word", val,
						 "a thread-local symbol or an offset");
			o->tag_word = val;
			break;
		case OPT_FILTER:
			if (!strcmp(val, "user"))
				o->filter_flags = TAILOR_CFG_EXCLUDE_KERNEL;
			else if (!strcmp(val, "kernel"))
				o->filter_flags = TAILOR_CFG_EXCLUDE_USER;
			else if (!strcmp(val, "all"))
				o->filter_flags = 0;
			else
				return bad_value("--filter", val, "user, kernel or all");
			break;
		case 'p':
			if (parse_u64("-p/--pid", val, 1, (1u << 22) - 1, &v))
				return -1;
			o->pid = v;
			break;
		case 'a':
			o->all_cpus = true;
			break;
		case OPT_NO_CHILDREN:
			o->no_children = true;
			break;
		case OPT_NO_WAKEUPS:
			o->no_wakeups = true;
			break;
		case OPT_NO_SWITCHES:
			o->no_switches = true;
			break;
		case 'o':
			if (!*val)
				return bad_value("-o/--output", val, "a file name");
			o->output = val;
			break;
		case OPT_DURATION:
			errno = 0;
			o->duration = strtod(val, &end);
			if (errno || *end || !(o->duration > 0) || o->duration > 1e7)
				return bad_value("--duration", val,
						 "a number of seconds greater than 0");
			break;
		case OPT_RING:
			if (parse_u64("--ring-records", val, 2, 1u << 22, &v))
				return -1;
			o->ring_records = v;
			break;
		case OPT_CALL_GRAPH:
			if (strncmp(val, "fp", 2) || (val[2] && val[2] != ',')) {
				return bad_value("--call-graph", val,
						 "fp or fp,N (dwarf and lbr are perf record's)");
			}
			if (val[2] && parse_u64("--call-graph fp,N", val + 3, 1,
						TAILOR_MAX_CALLCHAIN, &v))
				return -1;
			o->callchain_max = val[2] ? v : 0;
			o->call_graph = true;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'h':
			usage_print(&cmd_record, stdout);
			return 1;
		default:
			return -1;
		}
	}
	if (optind < argc)
		o->command = argv + optind;
	if (o->period && o->freq) {
		usage_error(&cmd_record, "-c/--period and -F/--freq exclude each other");
		return -1;
	}
	if (!!o->command + !!o->pid + o->all_cpus != 1) {
		usage_error(&cmd_record, "say what to profile: a command after '--', -p PID, or -a (exactly one)");
		return -1;
	}
	if (!o->period && !o->freq)
		o->freq = DEFAULT_FREQ;
	return 0;
}

/* ---- launch mode: a child held until the session is in place ---- */

struct launch {
	pid_t pid;
	int go_fd;	/* write end: the child execs when it closes */
	int err_fd;	/* read end: errno of a failed exec */
};

static int launch_prepare(char **command, struct launch *l)
{
	int go[2], errp[2];
	char c;

	if (pipe2(go, O_CLOEXEC)) {
		err_msg("pipe: %s", strerror(errno));
		return -1;
	}
	if (pipe2(errp, O_CLOEXEC)) {
		err_msg("pipe: %s", strerror(errno));
		close(go[0]);
		close(go[1]);
		return -1;
	}
	/* Our waitpid() needs children to stay reapable. */
	signal(SIGCHLD, SIG_DFL);
	l->pid = fork();
	if (l->pid < 0) {
		err_msg("fork: %s", strerror(errno));
		close(go[0]);
		close(go[1]);
		close(errp[0]);
		close(errp[1]);
		return -1;
	}
	if (l->pid == 0) {
		int e;

		close(go[1]);
		close(errp[0]);
		/*
		 * Wait for the parent's go byte; EOF means it gave up or died
		 * during setup, and the command must not run unprofiled.
		 */
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		execvp(command[0], command);
		e = errno;
		if (write(errp[1], &e, sizeof(e)) != sizeof(e))
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(errp[1]);
	l->go_fd = go[1];
	l->err_fd = errp[0];
	return 0;
}

static void launch_abort(struct launch *l)
{
	if (l->pid <= 0)
		return;
	close(l->go_fd);	/* EOF: the child exits without exec */
	close(l->err_fd);
	waitpid(l->pid, NULL, 0);
	l->pid = 0;
}

/* Let the child exec; 0, or -1 if exec failed (reported). */
static int launch_go(struct launch *l, const char *cmd)
{
	ssize_t n;
	char go = 'g';
	int e;

	n = write(l->go_fd, &go, 1);
	close(l->go_fd);
	l->go_fd = -1;
	if (n != 1) {
		err_msg("cannot start '%s': %s", cmd, strerror(errno));
		close(l->err_fd);
		return -1;
	}
	/* The exec closes the pipe (CLOEXEC); a failed exec sends errno. */
	do
		n = read(l->err_fd, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	if (n == sizeof(e)) {
		err_msg("cannot run '%s': %s", cmd, strerror(e));
		close(l->err_fd);
		return -1;
	}
	close(l->err_fd);
	return 0;
}

/*
 * Reap the launched command.  A stop signal that arrives meanwhile goes
 * on to it, so a second Ctrl-C or SIGTERM is never swallowed.
 */
static int wait_command(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			err_msg("waiting for the command: %s", strerror(errno));
			return 1;
		}
		if (stop_signal)
			kill(pid, stop_signal);
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 1;
}

/* ---- the recording ---- */

struct recorder {
	struct record_opts *o;
	struct tailor_config cfg;
	struct collector c;
	struct event_spec ev;
	struct tlr_writer *w;
	struct sideband *sb;
	uint8_t *pack;		/* a batch of samples, packed */
	/* The batch being packed (a CPU's run): its state, bytes and samples. */
	struct tlr_pack_state pack_st;
	size_t packed;
	uint32_t pack_count;
	uint32_t pack_batch;	/* most samples in a batch */
	uint64_t samples;
	uint64_t events;	/* switches and wakeups from tailor.ko */
	uint64_t unknown_events;	/* of unknown kinds, or naming no thread: left out */
	bool module_events;	/* tailor.ko records switches and wakeups */
	int command_fd;		/* pidfd of the launched command, or -1 */
	uint64_t start_ns;
	uint64_t start_wall_ns;	/* CLOCK_REALTIME at META */
	char reason[96];
	char tag_word_from[160];	/* "symbol NAME" or "offset" */
	/* The kernel samples' distinct IPs, for the symbols stored at the end. */
	struct pair_map kernel_ip_seen;
	uint64_t *kernel_ips;
	size_t nr_kernel_ips, cap_kernel_ips;
	bool kernel_ips_dropped;	/* out of memory: some left out */
	/*
	 * Call stacks: the ring's sample ends in callchain_nr and its entries
	 * (chain_at bytes in); the recording's, in the id of its stack, each
	 * distinct stack a STACK record (rec_size bytes a sample).
	 */
	uint32_t chain_at, rec_size;
	uint8_t *scratch;		/* one recording sample */
	struct pair_map stack_ids;	/* (hash, salt) -> id */
	uint64_t *stack_entries;	/* every stack's, one after another */
	size_t nr_stack_entries, cap_stack_entries;
	struct stack_ref {
		uint64_t first;
		uint32_t nr;
	} *stacks;			/* by id - 1 */
	size_t nr_stacks, cap_stacks;
	uint64_t stack_frames_lost, stacks_cut;
};

static int write_text_len(struct tlr_writer *w, uint32_t type, const char *text, size_t len)
{
	const void *parts[] = { text };
	size_t lens[] = { len };

	return tlr_write(w, type, parts, lens, 1);
}

static int write_text(struct tlr_writer *w, uint32_t type, const char *text)
{
	return write_text_len(w, type, text, strlen(text));
}

/* A kernel sample's IP, kept once. */
static void note_kernel_ip(struct recorder *r, uint64_t ip)
{
	uint32_t v;

	if (pair_map_get(&r->kernel_ip_seen, ip, 0, &v))
		return;
	if (array_grow((void **)&r->kernel_ips, &r->cap_kernel_ips, r->nr_kernel_ips + 1,
		       sizeof(*r->kernel_ips)) ||
	    pair_map_put(&r->kernel_ip_seen, ip, 0, 1)) {
		r->kernel_ips_dropped = true;
		return;
	}
	r->kernel_ips[r->nr_kernel_ips++] = ip;
}

/*
 * The kernel functions the samples fell in, from this host's
 * /proc/kallsyms, into the recording: a report names them wherever it
 * runs, whatever kernel that host boots.  Hidden addresses
 * (kptr_restrict, without root) are said, and the recording keeps its
 * samples unnamed.
 */
static void store_kernel_symbols(struct recorder *r)
{
	char err[512];
	struct kallsyms *k;
	size_t len;
	char *text;

	if (!r->nr_kernel_ips)
		return;
	/*
	 * A symbol stored ends where the next one stored begins: with IPs
	 * left out, those would be named after the symbol before them.
	 */
	if (r->kernel_ips_dropped) {
		if (!r->o->quiet)
			fprintf(stderr, "tailor: out of memory for the kernel samples' IPs: kernel functions stay unnamed in the recording\n");
		return;
	}
	k = kallsyms_load("/proc/kallsyms", err, sizeof(err));
	if (!k) {
		if (!r->o->quiet)
			fprintf(stderr, "tailor: kernel functions stay unnamed in the recording: %s\n",
				err);
		return;
	}
	text = kallsyms_subset(k, r->kernel_ips, r->nr_kernel_ips, &len);
	if (text && len)
		write_text_len(r->w, TLR_KALLSYMS, text, len);
	free(text);
	kallsyms_free(k);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static uint64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* The file execvp() will run for @name, as it searches PATH. */
static int command_path(const char *name, char *path, size_t len)
{
	const char *dirs = getenv("PATH");
	const char *p;

	if (strchr(name, '/')) {
		snprintf(path, len, "%s", name);
		return access(path, X_OK);
	}
	for (p = dirs ? dirs : "/usr/local/bin:/usr/bin:/bin"; ; p++) {
		size_t n = strcspn(p, ":");

		snprintf(path, len, "%.*s%s%s", (int)n, n ? p : ".",
			 "/", name);
		if (!access(path, X_OK))
			return 0;
		p += n;
		if (!*p)
			return -1;
	}
}

/*
 * --tag-word: an offset as given, or the TLS symbol's offset in the
 * executable the target runs (the command about to be run, or the
 * process's /proc/PID/exe).  With -a there is no one executable.
 */
static int resolve_tag_word(struct recorder *r, int64_t *offset)
{
	struct record_opts *o = r->o;
	char path[4096], err[512], *end;
	long long v;

	errno = 0;
	v = strtoll(o->tag_word, &end, 0);
	if (!errno && !*end) {
		*offset = v;
		snprintf(r->tag_word_from, sizeof(r->tag_word_from), "offset");
	} else {
		if (o->all_cpus) {
			err_msg("record: --tag-word %s: with -a there is no one executable to find the symbol in; give the offset",
				o->tag_word);
			return -1;
		}
		if (o->command ? command_path(o->command[0], path, sizeof(path)) :
		    (snprintf(path, sizeof(path), "/proc/%d/exe", o->pid), 0)) {
			err_msg("record: --tag-word: cannot find '%s' to read its symbols",
				o->command[0]);
			return -1;
		}
		if (tls_symbol_offset(path, o->tag_word, offset, err, sizeof(err))) {
			err_msg("record: --tag-word: %s", err);
			return -1;
		}
		snprintf(r->tag_word_from, sizeof(r->tag_word_from), "symbol %s", o->tag_word);
	}
	if (*offset % 8 || *offset < -(1LL << 30) || *offset > (1LL << 30)) {
		err_msg("record: --tag-word: offset %" PRId64 " is not a multiple of 8 within 1 GiB of the thread pointer",
			*offset);
		return -1;
	}
	if (r->c.info.abi_version < 2) {
		err_msg("record: --tag-word: the loaded tailor.ko speaks ABI %u, which has no tag word; load the module built with this tailor",
			r->c.info.abi_version);
		return -1;
	}
	return 0;
}

/*
 * OpenTelemetry's thread context (OTEP 4947), where the target defines
 * otel_thread_ctx_v1: the pointer's offset from the thread pointer.  A
 * launched command's executable (before it runs, no library is
 * loaded); a running process's executable or any library it has loaded
 * in static TLS (tls_live.c).  1 found, 0 not (no such symbol, or no
 * one process: -a), -1 said.
 */
static int resolve_otel_ctx(struct recorder *r, int64_t *offset)
{
	struct record_opts *o = r->o;
	char path[4096], err[512] = "", object[4096] = "";
	int rc;

	if (o->all_cpus)
		return 0;
	if (o->command) {
		if (command_path(o->command[0], path, sizeof(path)))
			return 0;	/* launching it will say */
		rc = tls_symbol_offset(path, OTEL_CTX_SYMBOL, offset, err, sizeof(err));
	} else {
		rc = tls_live_offset(o->pid, OTEL_CTX_SYMBOL, offset, object, sizeof(object), err,
				     sizeof(err));
		if (!rc)
			snprintf(path, sizeof(path), "%s", object);
	}
	if (rc == -ENOENT)
		return 0;
	if (rc) {
		/* The profile stands without it: said, not fatal. */
		if (!o->quiet)
			fprintf(stderr, "tailor: OpenTelemetry's thread context not read: %s\n", err);
		return 0;
	}
	/* Static TLS ends at the thread pointer (x86-64's variant II). */
	if (*offset % 8 || *offset >= 0 || *offset < -(1LL << 30)) {
		if (!o->quiet)
			fprintf(stderr, "tailor: OpenTelemetry's thread context not read: %s in '%s' at offset %" PRId64 " from the thread pointer is no aligned pointer in static TLS\n",
				OTEL_CTX_SYMBOL, path, *offset);
		return 0;
	}
	return 1;
}

static int build_config(struct recorder *r, pid_t target)
{
	struct record_opts *o = r->o;
	struct tailor_config *cfg = &r->cfg;
	int source = o->source;
	bool pebs;

	if (r->ev.timer) {
		if (source == TAILOR_SOURCE_PEBS) {
			err_msg("record: '%s' is the software clock; it cannot be a PEBS event",
				r->ev.name);
			return -1;
		}
		source = TAILOR_SOURCE_TIMER;
	}
	if (source < 0)
		source = TAILOR_SOURCE_AUTO;
	pebs = source == TAILOR_SOURCE_PEBS ||
	       (source == TAILOR_SOURCE_AUTO && (r->c.info.caps & TAILOR_CAP_PEBS));

	memset(cfg, 0, sizeof(*cfg));
	cfg->size = sizeof(*cfg);
	/*
	 * An older module records everything but what later ABIs added: ABI 1
	 * no tag word, ABI 2 no child processes.
	 */
	cfg->abi_version = r->c.info.abi_version < TAILOR_ABI_VERSION ? r->c.info.abi_version :
			   TAILOR_ABI_VERSION;
	cfg->source = source;
	cfg->flags = o->filter_flags;
	if (o->tag_word) {
		int64_t offset;

		if (resolve_tag_word(r, &offset))
			return -1;
		cfg->flags |= TAILOR_CFG_TAG_WORD;
		cfg->tag_word_offset = offset;
	}
	{
		int64_t offset;
		int found = resolve_otel_ctx(r, &offset);

		if (found < 0)
			return -1;
		if (found && cfg->abi_version < 9 && !o->quiet)
			fprintf(stderr, "tailor: the loaded tailor.ko speaks ABI %u: the target's OpenTelemetry thread context (%s) is not read (load the module built with this tailor)\n",
				cfg->abi_version, OTEL_CTX_SYMBOL);
		if (found && cfg->abi_version >= 9) {
			cfg->flags |= TAILOR_CFG_OTEL_CTX;
			cfg->otel_ctx_offset = offset;
		}
	}
	if (o->all_cpus)
		cfg->flags |= TAILOR_CFG_ALL_CPUS;
	else
		cfg->target_pid = target;
	if (!o->all_cpus && !o->no_children) {
		if (cfg->abi_version >= 3)
			cfg->flags |= TAILOR_CFG_CHILDREN;
		else if (!o->quiet)
			fprintf(stderr, "tailor: the loaded tailor.ko speaks ABI %u: processes the target forks are not sampled (load the module built with this tailor)\n",
				cfg->abi_version);
	}
	/*
	 * Switches and wakeups from tailor.ko itself where it offers them
	 * (ABI 5): on the samples' clock, and far cheaper than perf's
	 * side-band, which an older module leaves them to.
	 */
	if (cfg->abi_version >= 5 && (r->c.info.caps & TAILOR_CAP_SCHED_EVENTS) && !o->no_switches) {
		cfg->flags |= TAILOR_CFG_SWITCHES;
		if (!o->no_wakeups)
			cfg->flags |= TAILOR_CFG_WAKEUPS;
		r->module_events = true;
	}
	if (o->no_regs)
		cfg->flags |= TAILOR_CFG_NO_REGS;
	cfg->regs_mask = o->regs_mask;
	cfg->ring_records = o->ring_records;
	if (o->call_graph) {
		if (cfg->abi_version < 6) {
			err_msg("record: the loaded tailor.ko speaks ABI %u; call stacks need ABI 6 (load the module built with this tailor)",
				cfg->abi_version);
			return -1;
		}
		/* The ring's default holds 2 MiB of these larger records. */
		cfg->flags |= TAILOR_CFG_CALLCHAIN;
		cfg->callchain_max = o->callchain_max;
	}
	if (o->freq)
		cfg->sample_freq = o->freq;
	if (pebs) {
		cfg->event_type = r->ev.type;
		cfg->event_config = r->ev.config;
		cfg->precise = o->precise;
		cfg->sample_period = o->period;
		if (o->data_addr)
			cfg->flags |= TAILOR_CFG_DATA_ADDR;
		return 0;
	}
	/* The software clock: say so if the user asked for something else. */
	if (o->event && !r->ev.timer && source == TAILOR_SOURCE_AUTO && !o->quiet)
		fprintf(stderr, "tailor: no PEBS on this CPU; sampling with the software clock instead of '%s'\n",
			o->event);
	if (o->data_addr && !o->quiet)
		fprintf(stderr, "tailor: the software clock has no data addresses; --data-addr ignored\n");
	if (o->precise && !o->quiet)
		fprintf(stderr, "tailor: --precise applies to PEBS only; ignored\n");
	if (o->period && (o->period < TAILOR_MIN_TIMER_NS || o->period > TAILOR_MAX_TIMER_NS)) {
		err_msg("record: the software clock's period is from %u ns (10 us) to %llu ns (a minute), not %" PRIu64,
			TAILOR_MIN_TIMER_NS, (unsigned long long)TAILOR_MAX_TIMER_NS, o->period);
		return -1;
	}
	cfg->timer_period_ns = o->period;
	/*
	 * A kernel sample of the software clock carries the user registers at
	 * entry; with the entry IP, report can charge kernel work to the code
	 * that entered the kernel even where no tag was set.
	 */
	if (!o->regs_mask && !o->no_regs && !(cfg->flags & TAILOR_CFG_EXCLUDE_KERNEL) &&
	    (r->c.info.caps & TAILOR_CAP_ENTRY_IP))
		cfg->regs_mask = TAILOR_REGS_DEFAULT | 1ull << TAILOR_REG_IP;
	return 0;
}

static int write_meta(struct recorder *r, pid_t target)
{
	struct record_opts *o = r->o;
	struct tailor_config *c = &r->cfg;
	bool pebs = c->source_used == TAILOR_SOURCE_PEBS;
	char meta[8192], cmd[2048] = "";
	uint64_t tsc, mono;
	size_t n, i;

	for (i = 0; o->command && o->command[i]; i++) {
		n = strlen(cmd);
		snprintf(cmd + n, sizeof(cmd) - n, "%s%s", i ? " " : "",
			 o->command[i]);
	}
	for (i = 0; cmd[i]; i++)
		if (cmd[i] == '\n')
			cmd[i] = ' ';
	/* Read together: a JIT's CLOCK_MONOTONIC times convert through them. */
	tsc = collector_now(&r->c);
	mono = mono_ns();
	r->start_wall_ns = wall_ns();
	n = snprintf(meta, sizeof(meta), "format=tailor-recording %d\ntool=tailor %s\n",
		     TLR_VERSION, TAILOR_VERSION);
	n += hostinfo_meta(meta + n, sizeof(meta) - n);
	n += snprintf(meta + n, sizeof(meta) - n,
		"event=%s\nevent_type=%u\nevent_config=0x%" PRIx64 "\nprecise=%u\n"
		"source_requested=%s\nsource_used=%s\ntsc_source=%s\n"
		"tsc_khz=%u\ntsc_khz_measured=%u\ntsc_mult=%u\ntsc_shift=%u\n"
		"sample_period=%" PRIu64 "\ntimer_period_ns=%" PRIu64 "\nsample_freq=%" PRIu64 "\n"
		"regs_mask=0x%" PRIx64 "\nnr_regs=%u\nrecord_size=%u\nflags_used=0x%x\n"
		"target=%s\npid=%d\ncommand=%s\n"
		"start_wall_ns=%" PRIu64 "\nstart_tsc=%" PRIu64 "\nstart_mono_ns=%" PRIu64 "\n"
		"sideband_clock=%s\n"
		"tag_word_offset=%" PRId64 "\ntag_word_from=%s\nchildren=%s\nswitches=%s\n"
		"wakeups=%s\nsched_events_from=%s\ncallchain_max=%u\n"
		"collector=%s\nclock=%s\notel_ctx=%s\notel_ctx_offset=%" PRId64 "\n",
		pebs ? r->ev.name : "cpu-clock",
		pebs ? c->event_type : 0, pebs ? (uint64_t)c->event_config : 0,
		pebs ? c->precise : 0,
		source_name(c->source), source_name(c->source_used),
		c->tsc_source == TAILOR_TSC_PEBS ? "pebs" : "handler",
		r->c.info.tsc_khz, r->c.info.tsc_khz_measured, r->c.info.tsc_mult,
		r->c.info.tsc_shift, (uint64_t)c->sample_period,
		(uint64_t)c->timer_period_ns, (uint64_t)c->sample_freq,
		(uint64_t)c->regs_used, c->nr_regs, r->rec_size,
		c->flags_used,
		o->all_cpus ? "all-cpus" : o->pid ? "pid" : "command",
		o->all_cpus ? 0 : target, cmd, r->start_wall_ns, tsc, mono,
		r->sb ? sideband_clock_name(r->sb) : "none",
		(int64_t)c->tag_word_offset,
		(c->flags_used & TAILOR_CFG_TAG_WORD) ? r->tag_word_from : "none",
		(c->flags_used & TAILOR_CFG_CHILDREN) ? "followed" : "not followed",
		r->module_events || (r->sb && sideband_switches(r->sb)) ? "recorded" : "not recorded",
		r->module_events ? ((c->flags_used & TAILOR_CFG_WAKEUPS) ? "recorded" :
				    "not recorded (--no-wakeups)") :
		r->sb ? sideband_wakeups(r->sb) : "not recorded (no side-band)",
		r->module_events ? "tailor.ko" :
		r->sb && sideband_switches(r->sb) ? "perf side-band" : "none",
		c->callchain_max, r->c.name, r->c.clock_monotonic ? "monotonic" : "tsc",
		(c->flags_used & TAILOR_CFG_OTEL_CTX) ? "symbol " OTEL_CTX_SYMBOL : "none",
		(int64_t)c->otel_ctx_offset);
	if (n >= sizeof(meta))
		return -ENOSPC;
	return write_text(r->w, TLR_META, meta);
}

/*
 * An event record of tailor.ko (uapi: TAILOR_SF_EVENT) as the recording's
 * SWITCH or WAKEUP record, the same records perf's side-band gives, but
 * on the samples' own TSC.  Kinds of a later module are counted and left.
 */
static int write_event(struct recorder *r, const uint8_t *slot)
{
	uint64_t rec[3], word;
	uint32_t other_tid, other_pid;

	memcpy(rec, slot, sizeof(rec));
	word = rec[1];
	other_tid = tailor_ev_other_tid(word);
	other_pid = tailor_ev_other_pid(word);
	/* The module names the thread; a record that does not is no event. */
	if (!tailor_who_tid(rec[2])) {
		r->unknown_events++;
		return 0;
	}
	switch (tailor_ev_kind(word)) {
	case TAILOR_EV_SWITCH_OUT:
	case TAILOR_EV_SWITCH_IN: {
		struct tlr_switch sw = {
			.tsc = rec[0], .pid = tailor_who_pid(rec[2]), .tid = tailor_who_tid(rec[2]),
			.cpu = tailor_who_cpu(rec[2]),
			/* 0: an idle task, or a thread the session may not name. */
			.other_pid = other_tid ? (int32_t)other_pid : -1,
			.other_tid = other_tid ? (int32_t)other_tid : -1,
			.time_kind = TLR_TIME_TSC,
		};
		const void *parts[1] = { &sw };
		size_t lens[1] = { sizeof(sw) };

		if (tailor_ev_kind(word) == TAILOR_EV_SWITCH_OUT) {
			sw.flags |= TLR_SWITCH_OUT;
			if (tailor_ev_flags(word) & TAILOR_EVF_PREEMPTED)
				sw.flags |= TLR_SWITCH_PREEMPTED;
		}
		r->events++;
		return tlr_write(r->w, TLR_SWITCH, parts, lens, 1);
	}
	case TAILOR_EV_WAKEUP: {
		/* The waker is 0 from interrupt context, or when not ours to name. */
		struct tlr_wakeup wk = {
			.tsc = rec[0], .pid = other_pid, .tid = other_tid,
			.cpu = tailor_who_cpu(rec[2]), .target_tid = tailor_who_tid(rec[2]),
			.target_cpu = -1, .time_kind = TLR_TIME_TSC,
		};
		const void *parts[1] = { &wk };
		size_t lens[1] = { sizeof(wk) };

		r->events++;
		return tlr_write(r->w, TLR_WAKEUP, parts, lens, 1);
	}
	}
	r->unknown_events++;
	return 0;
}

/*
 * Every CPU's ring up to the head it has now, packed straight from the
 * mapping into one batch per CPU: 0 at end of stream, 1 if more may come,
 * -errno.  Each ring is taken once, so a disk slower than the samples
 * cannot starve signals, the time limit and the side-band.  *@drained:
 * every ring was read to the head it had.  Event records among the
 * samples become records of their own, written before the batch they
 * were read with; readers order by time.
 */
static uint64_t stack_hash(const uint64_t *e, uint32_t nr)
{
	uint64_t h = nr;
	uint32_t i;

	for (i = 0; i < nr; i++) {
		h ^= e[i] + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
		h *= 0xff51afd7ed558ccdull;
	}
	return h;
}

/*
 * The id of the stack in ring sample @rec (0: it has none), a STACK
 * record written the first time the stack is seen -- before the batch
 * that holds the sample, as readers need.  A hot loop's samples share a
 * few stacks, so each is stored once; its kernel addresses join the
 * kernel symbols stored at the end.
 */
static int stack_id(struct recorder *r, const uint8_t *rec, uint64_t *id)
{
	uint64_t word, h, salt, entries[TAILOR_MAX_CALLCHAIN + 2];
	uint32_t nr, i, found;
	struct tlr_stack st;
	bool kernel;
	const void *parts[2];
	size_t lens[2];

	memcpy(&word, rec + r->chain_at, 8);
	nr = TAILOR_CALLCHAIN_NR(word);
	if (nr > r->cfg.callchain_max + 2)
		nr = r->cfg.callchain_max + 2;
	r->stack_frames_lost += TAILOR_CALLCHAIN_LOST(word);
	r->stacks_cut += TAILOR_CALLCHAIN_LOST(word) != 0;
	*id = 0;
	if (!nr)
		return 0;
	memcpy(entries, rec + r->chain_at + 8, 8ull * nr);
	h = stack_hash(entries, nr);
	/* A hash met by another stack: the next salt, until one is free or ours. */
	for (salt = 0; pair_map_get(&r->stack_ids, h, salt, &found); salt++) {
		const struct stack_ref *s = &r->stacks[found - 1];

		if (s->nr == nr && !memcmp(r->stack_entries + s->first, entries, 8ull * nr)) {
			*id = found;
			return 0;
		}
	}
	if (array_grow((void **)&r->stacks, &r->cap_stacks, r->nr_stacks + 1, sizeof(*r->stacks)) ||
	    array_grow((void **)&r->stack_entries, &r->cap_stack_entries,
		       r->nr_stack_entries + nr, sizeof(*r->stack_entries)) ||
	    pair_map_put(&r->stack_ids, h, salt, (uint32_t)r->nr_stacks + 1))
		return -ENOMEM;
	memcpy(r->stack_entries + r->nr_stack_entries, entries, 8ull * nr);
	r->stacks[r->nr_stacks++] = (struct stack_ref){ r->nr_stack_entries, nr };
	r->nr_stack_entries += nr;
	*id = r->nr_stacks;
	/* The kernel's frames only: a user frame pointer's garbage is none. */
	for (i = 0, kernel = false; i < nr; i++) {
		if (entries[i] >= PERF_CONTEXT_MAX) {
			kernel = entries[i] == PERF_CONTEXT_KERNEL;
		} else if (kernel) {
			/* A return address's call may end the function before it. */
			note_kernel_ip(r, entries[i]);
			note_kernel_ip(r, entries[i] - 1);
		}
	}
	st = (struct tlr_stack){ .id = (uint32_t)*id, .nr = nr };
	parts[0] = &st;
	lens[0] = sizeof(st);
	parts[1] = entries;
	lens[1] = 8ull * nr;
	return tlr_write(r->w, TLR_STACK, parts, lens, 2);
}

/* The batch packed so far as a SAMPLES_PACKED record, if it has any. */
static int flush_batch(struct recorder *r)
{
	struct tlr_samples_packed hdr = { .record_size = r->rec_size };
	const void *parts[3];
	size_t lens[3];
	int err;

	if (!r->pack_count)
		return 0;
	hdr.count = r->pack_count;
	hdr.packed_size = (uint32_t)r->packed;
	parts[0] = &hdr;
	lens[0] = sizeof(hdr);
	parts[1] = &r->pack_st.sum;
	lens[1] = sizeof(r->pack_st.sum);
	parts[2] = r->pack;
	lens[2] = r->packed;
	err = tlr_write(r->w, TLR_SAMPLES_PACKED, parts, lens, 3);
	r->samples += r->pack_count;
	r->pack_count = 0;
	r->packed = 0;
	tlr_pack_begin(&r->pack_st, r->rec_size);
	return err;
}

/*
 * One record from the collector: an event becomes its record, a sample
 * joins the batch of its CPU's run, which is written when the run ends
 * (@rec NULL; runs are at most pack_batch, the pack buffer's worst case).
 */
static int take_record(void *arg, uint32_t cpu, const uint8_t *rec)
{
	struct recorder *r = arg;
	uint64_t who;
	int err;

	(void)cpu;
	if (!rec)
		return flush_batch(r);
	memcpy(&who, rec + 16, sizeof(who));
	if (r->module_events && tailor_who_is_event(who))
		return write_event(r, rec);
	if (tailor_who_flags(who) & TAILOR_SF_KERNEL) {
		uint64_t ip;

		memcpy(&ip, rec + 8, sizeof(ip));
		note_kernel_ip(r, ip);
	}
	if (r->chain_at) {
		uint64_t id;

		err = stack_id(r, rec, &id);
		if (err)
			return err;
		memcpy(r->scratch, rec, r->chain_at);
		memcpy(r->scratch + r->chain_at, &id, sizeof(id));
		rec = r->scratch;
	}
	/* A run is at most pack_batch records: the collector ends it. */
	r->packed += tlr_pack_one(&r->pack_st, rec, r->pack + r->packed);
	r->pack_count++;
	return 0;
}

static int pull_samples(struct recorder *r, bool *drained)
{
	bool ended;
	long n = r->c.ops->drain(&r->c, take_record, r, r->pack_batch, &ended);

	*drained = true;
	if (n < 0)
		return (int)n;
	return ended ? 0 : 1;
}

static void status_line(struct recorder *r, uint64_t now)
{
	struct tailor_stats st;
	double secs = (now - r->start_ns) / 1e9;

	if (r->c.ops->stats(&r->c, &st))
		return;
	fprintf(stderr, "\r\033[Ktailor: %.1f s, %" PRIu64 " samples (%.0f/s), %" PRIu64 " lost",
		secs, r->samples, secs > 0 ? r->samples / secs : 0.0,
		(uint64_t)st.total.lost);
	fflush(stderr);
}

static const char *signame(int sig)
{
	switch (sig) {
	case SIGINT: return "SIGINT";
	case SIGTERM: return "SIGTERM";
	case SIGHUP: return "SIGHUP";
	}
	return "signal";
}

/* Poll until the stream ends, a signal arrives, or time is up. */
static int record_loop(struct recorder *r)
{
	bool tty = isatty(STDERR_FILENO) && !r->o->quiet;
	uint64_t deadline = r->o->duration ?
		r->start_ns + (uint64_t)(r->o->duration * 1e9) : 0;
	uint64_t next_status = r->start_ns + STATUS_MS * 1000000ull;
	uint64_t next_rings = r->start_ns + RINGS_MS * 1000000ull;
	struct pollfd pfd[66];
	int nfd, i, more, err;
	bool drained, exited;
	int sbfds[64];

	nfd = r->sb ? sideband_fds(r->sb, sbfds, 64) : 0;
	pfd[0] = (struct pollfd){ .fd = r->c.ops->poll_fd(&r->c), .events = POLLIN };
	for (i = 0; i < nfd; i++)
		pfd[i + 1] = (struct pollfd){ .fd = sbfds[i], .events = POLLIN };
	/* Polled last and never taken for a side-band fd; -1 is passed over. */
	pfd[nfd + 1] = (struct pollfd){ .fd = r->command_fd, .events = POLLIN };

	for (;;) {
		uint64_t now;

		poll(pfd, nfd + 2, POLL_MS);
		/*
		 * A side-band event whose thread exited reports POLLHUP for
		 * good; stop polling it (its ring is still drained) or poll
		 * would never sleep again.
		 */
		for (i = 1; i <= nfd; i++)
			if (pfd[i].revents & (POLLHUP | POLLERR | POLLNVAL))
				pfd[i].fd = -1;
		/*
		 * The command's last thread is gone: tailor.ko would see it at
		 * its next check, up to 100 ms on, and end the session then
		 * (followed children that outlive the command included), so
		 * the recording ends as soon as the command instead.
		 */
		exited = pfd[nfd + 1].revents & POLLIN;
		more = pull_samples(r, &drained);
		if (more < 0)
			return more;
		if (r->sb) {
			err = sideband_drain(r->sb, r->w);
			if (err)
				return err;
		}
		/*
		 * Every source read to empty: nothing after the next round mark
		 * can be older than what came before this one, and a reader may
		 * deliver it in order without holding more (perf's FINISHED_ROUND).
		 */
		if (drained) {
			err = tlr_write(r->w, TLR_ROUND, NULL, NULL, 0);
			if (err)
				return err;
		}
		/* A killed collector then loses at most one poll interval. */
		err = tlr_write_flush(r->w);
		if (err)
			return err;
		/* A Ctrl-C ends the command too: the signal is the reason. */
		if (stop_signal) {
			snprintf(r->reason, sizeof(r->reason), "signal %s",
				 signame(stop_signal));
			return 0;
		}
		if (!more || exited) {
			snprintf(r->reason, sizeof(r->reason), "target-exited");
			return 0;
		}
		now = mono_ns();
		/* A CPU that came up has a ring now (CPU hotplug). */
		if (now >= next_rings) {
			if (r->c.ops->refresh(&r->c))
				return -1;
			next_rings = now + RINGS_MS * 1000000ull;
		}
		if (deadline && now >= deadline) {
			snprintf(r->reason, sizeof(r->reason), "duration");
			return 0;
		}
		if (tty && now >= next_status) {
			status_line(r, now);
			next_status = now + STATUS_MS * 1000000ull;
		}
	}
}

/*
 * The writer stops at its first failed write, leaving the file cut back to
 * its last complete record; that freed the partial record's space, so
 * appending END by hand usually still fits and tells the reader why.
 */
static void append_end_after_error(const char *path, const char *text)
{
	struct tlr_record_header h = { .type = TLR_END };
	size_t len = strlen(text), padded = (len + 7) & ~7ul;
	char *rec;
	int fd;

	h.size = sizeof(h) + padded;
	rec = calloc(1, h.size);
	fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (rec && fd >= 0) {
		struct stat st;

		memcpy(rec, &h, sizeof(h));
		memcpy(rec + sizeof(h), text, len);
		/*
		 * All or nothing: a short write is cut off again.  A file with
		 * not even its header is left empty: END there would be junk.
		 */
		if (!fstat(fd, &st) && st.st_size &&
		    write(fd, rec, h.size) != (ssize_t)h.size &&
		    ftruncate(fd, st.st_size))
			err_msg("cannot cut '%s' back to its last record: %s", path,
				strerror(errno));
	}
	if (fd >= 0)
		close(fd);
	free(rec);
}

static int finish(struct recorder *r, int exit_code)
{
	struct tailor_stats st = {};
	char end[1024];
	int err, werr, more;
	bool drained;

	r->c.ops->stop(&r->c);
	/* Stopped: the next pass takes the rest and sees the hang-up. */
	while ((more = pull_samples(r, &drained)) > 0)
		;
	err = more < 0;
	if (r->sb)
		err |= sideband_drain(r->sb, r->w) != 0;
	r->c.ops->stats(&r->c, &st);
	if (!tlr_writer_error(r->w))
		err |= jit_files_carry(r->o->output, r->w,
				       r->o->command ? r->start_wall_ns : 0, r->o->quiet) != 0;
	store_kernel_symbols(r);
	if (!tlr_writer_error(r->w) && build_ids_store(r->o->output, r->w) == -EIO && !r->o->quiet)
		fprintf(stderr, "tailor: could not read '%s' back for its files' build-ids\n",
			r->o->output);
	if (tlr_writer_error(r->w))
		snprintf(r->reason, sizeof(r->reason), "write-error %s",
			 strerror(-tlr_writer_error(r->w)));
	snprintf(end, sizeof(end),
		 "stop_wall_ns=%" PRIu64 "\nstop_tsc=%" PRIu64 "\nreason=%s\n"
		 "samples=%" PRIu64 "\nevents=%" PRIu64 "\nunknown_events=%" PRIu64 "\n"
		 "produced=%llu\ndelivered=%llu\nlost=%llu\n"
		 "throttled=%llu\nkernel_ip_dropped=%llu\nsideband_lost=%" PRIu64 "\n"
		 "stacks=%zu\nstacks_cut=%" PRIu64 "\nstack_frames_lost=%" PRIu64 "\n",
		 wall_ns(), collector_now(&r->c), r->reason, r->samples, r->events, r->unknown_events,
		 (unsigned long long)st.total.produced,
		 (unsigned long long)st.total.delivered,
		 (unsigned long long)st.total.lost,
		 (unsigned long long)st.total.throttled,
		 (unsigned long long)st.kernel_ip_dropped,
		 r->sb ? sideband_lost(r->sb) : 0, r->nr_stacks, r->stacks_cut,
		 r->stack_frames_lost);
	if (exit_code >= 0) {
		size_t n = strlen(end);

		snprintf(end + n, sizeof(end) - n, "exit_status=%d\n", exit_code);
	}
	write_text(r->w, TLR_END, end);
	werr = tlr_writer_error(r->w);
	if (tlr_writer_close(r->w)) {
		err = 1;
		append_end_after_error(r->o->output, end);
		err_msg("writing '%s' failed (%s); it holds everything up to the failure",
			r->o->output, strerror(werr ? -werr : EIO));
	}
	r->w = NULL;

	if (!r->o->quiet) {
		double secs = (mono_ns() - r->start_ns) / 1e9;
		struct stat sb;
		uint64_t size = stat(r->o->output, &sb) ? 0 : (uint64_t)sb.st_size;

		if (isatty(STDERR_FILENO))
			fputs("\r\033[K", stderr);
		fprintf(stderr,
			"tailor: %" PRIu64 " samples in %.2f s from the %s, %llu lost, %llu throttled (%s)\n"
			"tailor: wrote %s: %.1f KiB, %.1f bytes per sample\n",
			r->samples, secs,
			r->cfg.source_used == TAILOR_SOURCE_PEBS ? "PEBS event" : "software clock",
			(unsigned long long)st.total.lost,
			(unsigned long long)st.total.throttled, r->reason,
			r->o->output, size / 1024.0,
			r->samples ? (double)size / r->samples : 0.0);
		if (r->chain_at)
			fprintf(stderr, "tailor: %zu distinct call stacks; %" PRIu64 " cut at %u frames (%" PRIu64 " frames past it)\n",
				r->nr_stacks, r->stacks_cut, r->cfg.callchain_max,
				r->stack_frames_lost);
	}
	if (st.kernel_ip_dropped)
		fprintf(stderr, "tailor: %llu samples with a kernel IP dropped: the session excludes the kernel, and PEBS reported the instruction after the sampled one (past a SYSCALL)\n",
			(unsigned long long)st.kernel_ip_dropped);
	if (st.total.lost)
		fprintf(stderr, "tailor: %llu records were lost (the reader fell behind): try a lower -F or a larger --ring-records\n",
			(unsigned long long)st.total.lost);
	return err ? -1 : 0;
}

/* Side-band needs an event per thread and CPU: allow what we may. */
static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static void install_stop_handlers(void)
{
	struct sigaction sa = { .sa_handler = on_stop_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

static int run_record(const struct cli_command *cmd, int argc, char **argv)
{
	struct record_opts o;
	struct recorder r = { .o = &o, .command_fd = -1 };
	struct launch l = { .pid = 0, .go_fd = -1, .err_fd = -1 };
	pid_t target;
	int exit_code = -1, ret = 1, loop_err;

	(void)cmd;
	ret = parse_args(argc, argv, &o);
	if (ret)
		return ret > 0 ? EXIT_OK : EXIT_USAGE;
	ret = EXIT_FAIL;
	if (event_resolve(o.event, &r.ev))
		return EXIT_FAIL;
	if (collector_open(&r.c, o.collector, o.quiet))
		return EXIT_FAIL;

	target = o.pid;
	if (o.command) {
		if (launch_prepare(o.command, &l))
			goto out;
		target = l.pid;
		/*
		 * Readable once the command's last thread exits.  Our unreaped
		 * child, so its pid names no other process meanwhile; without
		 * pidfds (before Linux 5.3) tailor.ko's tick ends the session.
		 */
		r.command_fd = (int)syscall(SYS_pidfd_open, l.pid, 0);
	}
	r.c.launched = o.command != NULL;
	if (build_config(&r, target) || r.c.ops->configure(&r.c, &r.cfg, r.ev.name))
		goto out_child;
	r.rec_size = r.cfg.record_size;
	/* The module's word on the layout, held to what it may say. */
	if ((r.cfg.flags_used & TAILOR_CFG_CALLCHAIN) &&
	    (!r.cfg.callchain_max || r.cfg.callchain_max > TAILOR_MAX_CALLCHAIN ||
	     r.cfg.record_size < TAILOR_SAMPLE_BASE_SIZE + 8 * (r.cfg.callchain_max + 3))) {
		err_msg("tailor.ko answered a stack of %u frames in %u-byte samples: not ABI 6's layout",
			r.cfg.callchain_max, r.cfg.record_size);
		goto out_child;
	}
	if (r.cfg.flags_used & TAILOR_CFG_CALLCHAIN) {
		/* The stack's words in the ring, one word (its id) in the recording. */
		r.chain_at = r.cfg.record_size - 8 * (1 + r.cfg.callchain_max + 2);
		r.rec_size = r.chain_at + 8;
		r.scratch = malloc(r.rec_size);
		if (!r.scratch) {
			err_msg("out of memory");
			goto out_child;
		}
	}
	if (tlr_pack_begin(&(struct tlr_pack_state){ 0 }, r.rec_size)) {
		err_msg("%u-byte samples are too large to pack: capture fewer registers",
			r.rec_size);
		goto out_child;
	}
	/* A batch in the worst case must fit a record: most are far smaller. */
	r.pack_batch = (TLR_MAX_RECORD_SIZE / 2) / tlr_pack_bound(1, r.rec_size);
	if (r.pack_batch > r.cfg.ring_capacity)
		r.pack_batch = r.cfg.ring_capacity;
	r.pack = malloc(tlr_pack_bound(r.pack_batch, r.rec_size));
	if (!r.pack) {
		err_msg("out of memory");
		goto out_child;
	}
	r.w = tlr_writer_create(o.output);
	if (!r.w) {
		err_msg("cannot create '%s': %s", o.output, strerror(errno));
		goto out_child;
	}
	raise_fd_limit();
	r.sb = sideband_open(o.all_cpus ? SB_ALL_CPUS : SB_PROCESS, target,
			     !o.no_switches && !r.module_events,
			     !o.no_switches && !o.no_wakeups && !r.module_events,
			     r.c.clock_monotonic);
	if (!r.sb)
		err_msg(o.command ? "recording without mappings: samples will not map to code" :
			"recording only the mappings that exist now: code mapped later will not map");
	if (write_meta(&r, target))
		goto out_write;
	if (!o.command && sideband_snapshot(r.w, o.all_cpus ? 0 : target, collector_now(&r.c)))
		goto out_write;
	/* The command, held before its exec, is a tailor: so its samples then are named. */
	if (o.command && sideband_snapshot_comms(r.w, target, collector_now(&r.c)))
		goto out_write;

	install_stop_handlers();
	tlr_pack_begin(&r.pack_st, r.rec_size);
	if (r.c.ops->start(&r.c))
		goto out_write;
	r.start_ns = mono_ns();
	if (o.command && launch_go(&l, o.command[0])) {
		exit_code = 127;
		snprintf(r.reason, sizeof(r.reason), "exec-failed");
		waitpid(l.pid, NULL, 0);
		l.pid = 0;
		finish(&r, exit_code);
		ret = 127;
		goto out;
	}

	loop_err = record_loop(&r);
	if (loop_err)
		snprintf(r.reason, sizeof(r.reason), "error");
	/* Nobody reads the rings while we wait: stop sampling first. */
	r.c.ops->stop(&r.c);
	if (l.pid > 0) {
		/* Pass a stop signal on, as perf record does; then reap. */
		if (stop_signal)
			kill(l.pid, stop_signal);
		if (!strcmp(r.reason, "duration")) {
			if (!o.quiet)
				fprintf(stderr, "tailor: recording stopped after %g s; waiting for '%s' to finish\n",
					o.duration, o.command[0]);
		} else {
			exit_code = wait_command(l.pid);
			l.pid = 0;
		}
	}
	ret = finish(&r, exit_code) || loop_err ? EXIT_FAIL : EXIT_OK;
	/* After --duration the command ran on; its status is still ours. */
	if (l.pid > 0) {
		exit_code = wait_command(l.pid);
		l.pid = 0;
	}
	if (o.command && !ret)
		ret = exit_code;
	goto out;

out_write:
	tlr_writer_close(r.w);
	r.w = NULL;
out_child:
	launch_abort(&l);
out:
	if (r.w)
		tlr_writer_close(r.w);
	sideband_close(r.sb);
	free(r.pack);
	free(r.scratch);
	free(r.stacks);
	free(r.stack_entries);
	pair_map_free(&r.stack_ids);
	free(r.kernel_ips);
	pair_map_free(&r.kernel_ip_seen);
	if (r.command_fd >= 0)
		close(r.command_fd);
	if (r.c.ops)
		r.c.ops->close(&r.c);
	return ret;
}
