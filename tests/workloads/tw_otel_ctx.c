// SPDX-License-Identifier: GPL-2.0-only
/*
 * libtw_otel_ctx.so: OpenTelemetry's thread-context pointer (OTEP 4947)
 * defined in a shared library, as a tracer's library defines it, for
 * tw_otel_lib.  Built with -mtls-dialect=gnu2 its own code reaches it
 * through a TLSDESC GOT entry, as the OTEP recommends; with the GNU
 * dialect through __tls_get_addr.
 */
__attribute__((visibility("default"))) __thread void *otel_thread_ctx_v1;

void tw_otel_publish(void *record);
void *tw_otel_pointer_address(void);

void tw_otel_publish(void *record)
{
	otel_thread_ctx_v1 = record;
}

void *tw_otel_pointer_address(void)
{
	return &otel_thread_ctx_v1;
}
