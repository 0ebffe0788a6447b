// SPDX-License-Identifier: GPL-2.0-only
/*
 * tw_dlopen LIB MS: after 200 ms, dlopen LIB (as a query engine loads the
 * code it just generated) and run its tw_generated_spin(MS); prints the
 * function's address range so a test can check samples landed inside.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	void (*fn)(uint64_t);
	void *h;

	if (argc != 3) {
		fprintf(stderr, "usage: tw_dlopen LIB MS\n");
		return 2;
	}
	usleep(200000);
	h = dlopen(argv[1], RTLD_NOW);
	if (!h) {
		fprintf(stderr, "tw_dlopen: %s\n", dlerror());
		return 1;
	}
	fn = (void (*)(uint64_t))dlsym(h, "tw_generated_spin");
	if (!fn)
		return 1;
	printf("tw_generated_spin=%p\n", (void *)fn);
	fflush(stdout);
	fn(strtoull(argv[2], NULL, 10));
	dlclose(h);
	return 0;
}
