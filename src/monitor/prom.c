/*
 * prom.c - the Prometheus endpoint: the /metrics body in text format 0.0.4
 * with dcgm-exporter's names and labels, served by libmicrohttpd on its own
 * thread while the monitor keeps sampling.
 *
 * Hostile or slow clients (docs/monitor.md, "Prometheus"): the daemon's
 * thread polls (epoll or poll, never a blocking read), so a slow client
 * holds a connection, not the thread; a connection idle for
 * PROM_TIMEOUT_S is closed; one client address may hold PROM_PER_CLIENT
 * connections and all clients together PROM_MAX_CONNECTIONS, beyond which
 * new connections are closed at once.  It binds 127.0.0.1 unless an
 * address is given: exporting to the network is a choice
 * (`--prometheus 0.0.0.0:9400`).
 */
#include "monitor.h"

#include <arpa/inet.h>
#include <math.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static void label_value(struct strbuf *sb, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			strbuf_addstr(sb, "\\\\");
		else if (*s == '"')
			strbuf_addstr(sb, "\\\"");
		else if (*s == '\n')
			strbuf_addstr(sb, "\\n");
		else
			strbuf_addch(sb, *s);
	}
}

static void labels(struct strbuf *sb, const struct nvml *n, unsigned gpu)
{
	const struct nvml_gpu_info *g = &n->gpu[gpu];

	strbuf_addf(sb, "gpu=\"%u\",UUID=\"", gpu);
	label_value(sb, g->uuid);
	strbuf_addstr(sb, "\",pci_bus_id=\"");
	label_value(sb, g->bus_id);
	strbuf_addf(sb, "\",device=\"nvidia%u\",modelName=\"", gpu);
	label_value(sb, g->name);
	strbuf_addstr(sb, "\",hostname=\"");
	label_value(sb, n->sys.hostname);
	strbuf_addstr(sb, "\",DCGM_FI_DRIVER_VERSION=\"");
	label_value(sb, n->sys.driver_version);
	strbuf_addch(sb, '"');
}

static void value(struct strbuf *sb, double v)
{
	if (isnan(v))
		strbuf_addstr(sb, "NaN");
	else if (v == floor(v) && fabs(v) < 9.0e15)
		strbuf_addf(sb, "%.0f", v);
	else
		strbuf_addf(sb, "%.10g", v);
}

static void help_text(struct strbuf *sb, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			strbuf_addstr(sb, "\\\\");
		else if (*s == '\n')
			strbuf_addstr(sb, "\\n");
		else
			strbuf_addch(sb, *s);
	}
}

void mon_prom_render(struct strbuf *sb, const struct nvml *n, const struct nvml_sample *s)
{
	unsigned ngpus = n->sys.ngpus;
	int any;

	for (unsigned m = 0; m < NVML_M__COUNT; m++) {
		const struct nvml_metric_info *mi = nvml_metric_info(m);
		char name[96];
		double v;

		any = 0;
		for (unsigned g = 0; g < ngpus; g++)
			any |= s[g].valid[m];
		if (!any)
			continue; /* unsupported everywhere: no family, never a 0 */
		if (mi->dcgm)
			snprintf(name, sizeof(name), "%s", mi->dcgm);
		else
			snprintf(name, sizeof(name), "gpuscope_%s", mi->name);
		strbuf_addf(sb, "# HELP %s ", name);
		help_text(sb, mi->help);
		strbuf_addf(sb, "\n# TYPE %s %s\n", name, mi->counter ? "counter" : "gauge");
		for (unsigned g = 0; g < ngpus; g++) {
			if (!s[g].valid[m])
				continue;
			strbuf_addf(sb, "%s{", name);
			labels(sb, n, g);
			strbuf_addstr(sb, "} ");
			v = s[g].v[m] * (mi->dcgm ? mi->dcgm_scale : 1.0);
			/* DCGM's memory fields are whole MiB */
			if (mi->dcgm && !strcmp(mi->unit, "bytes"))
				v = floor(v + 0.5);
			value(sb, v);
			strbuf_addch(sb, '\n');
		}
	}
	any = 0;
	for (unsigned g = 0; g < ngpus; g++)
		any |= s[g].valid[NVML_M_THROTTLE];
	if (any) {
		strbuf_addstr(sb, "# HELP gpuscope_clocks_event_reason 1 when this clock-event "
				  "(throttle) reason is active (nvmlDeviceGetCurrentClocksEventReasons)\n"
				  "# TYPE gpuscope_clocks_event_reason gauge\n");
		for (unsigned g = 0; g < ngpus; g++) {
			uint64_t mask;
			if (!s[g].valid[NVML_M_THROTTLE])
				continue;
			mask = (uint64_t)s[g].v[NVML_M_THROTTLE];
			for (unsigned b = 0; nvml_throttle_name(b); b++) {
				strbuf_addstr(sb, "gpuscope_clocks_event_reason{");
				labels(sb, n, g);
				strbuf_addf(sb, ",reason=\"%s\"} %d\n", nvml_throttle_name(b),
					    (mask >> b) & 1 ? 1 : 0);
			}
		}
	}
	any = 0;
	for (unsigned g = 0; g < ngpus; g++)
		any |= s[g].valid[NVML_M_PROCESSES] && s[g].nproc;
	if (any) {
		strbuf_addstr(sb, "# HELP gpuscope_process_used_bytes device memory used by a "
				  "compute process (nvmlDeviceGetComputeRunningProcesses)\n"
				  "# TYPE gpuscope_process_used_bytes gauge\n");
		for (unsigned g = 0; g < ngpus; g++) {
			if (!s[g].valid[NVML_M_PROCESSES])
				continue;
			for (unsigned k = 0; k < s[g].nproc; k++) {
				if (s[g].proc[k].used_bytes == UINT64_MAX)
					continue;
				strbuf_addstr(sb, "gpuscope_process_used_bytes{");
				labels(sb, n, g);
				strbuf_addf(sb, ",pid=\"%u\"} %llu\n", s[g].proc[k].pid,
					    (unsigned long long)s[g].proc[k].used_bytes);
			}
		}
	}
}

struct mon_prom {
	struct MHD_Daemon *d;
	pthread_mutex_t lock;
	char *body;
	size_t len;
};

static enum MHD_Result answer(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_size, void **con_cls)
{
	static const char not_found[] = "not found: gpuscope serves /metrics\n";
	static const char bad_method[] = "method not allowed\n";
	struct mon_prom *p = cls;
	struct MHD_Response *r;
	enum MHD_Result ret;
	unsigned status = MHD_HTTP_OK;

	GS_UNUSED(version);
	GS_UNUSED(upload);
	GS_UNUSED(upload_size);
	GS_UNUSED(con_cls);
	if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
		status = MHD_HTTP_METHOD_NOT_ALLOWED;
		r = MHD_create_response_from_buffer(sizeof(bad_method) - 1, (void *)bad_method,
						    MHD_RESPMEM_PERSISTENT);
	} else if (strcmp(url, "/metrics")) {
		status = MHD_HTTP_NOT_FOUND;
		r = MHD_create_response_from_buffer(sizeof(not_found) - 1, (void *)not_found,
						    MHD_RESPMEM_PERSISTENT);
	} else {
		pthread_mutex_lock(&p->lock);
		r = MHD_create_response_from_buffer(p->len, p->body ? p->body : (void *)"",
						    MHD_RESPMEM_MUST_COPY);
		pthread_mutex_unlock(&p->lock);
	}
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				status == MHD_HTTP_OK ? "text/plain; version=0.0.4; charset=utf-8"
						      : "text/plain; charset=utf-8");
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

/*
 * A scrape is one request of a few hundred bytes on one (keep-alive)
 * connection; 5 s idle is far beyond what a scraper needs between its
 * request's bytes and ends a slow-loris connection soon.  Prometheus'
 * default scrape interval is 15 s, so a kept-alive connection is closed
 * between scrapes and opened again (cheap).
 */
#define PROM_TIMEOUT_S 5u
/*
 * Connections per client address: a scraper uses one; a few scrapers
 * behind one address (NAT, an HA pair) fit in 16.  Past it one client's
 * connections are closed as they come, so 2,000 slow connections from one
 * address cannot crowd out the others.
 */
#define PROM_PER_CLIENT 16u
/* All clients together: well below the descriptors a process gets (1024). */
#define PROM_MAX_CONNECTIONS 256u

struct mon_prom *mon_prom_start(const char *listen, unsigned *port)
{
	struct sockaddr_in sa;
	const char *colon = strrchr(listen, ':');
	const char *ps = colon ? colon + 1 : listen;
	const union MHD_DaemonInfo *info;
	struct mon_prom *p;
	char *end;
	long pn;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK); /* "PORT" alone: this host only */
	pn = strtol(ps, &end, 10);
	if (!*ps || *end || pn < 0 || pn > 65535) {
		error("bad --prometheus '%s': expected [ADDR:]PORT, e.g. 9400 or 127.0.0.1:9400", listen);
		return NULL;
	}
	if (colon) {
		char addr[64];
		size_t len = (size_t)(colon - listen);
		if (len >= sizeof(addr)) {
			error("bad --prometheus address in '%s'", listen);
			return NULL;
		}
		memcpy(addr, listen, len);
		addr[len] = '\0';
		if (len && inet_pton(AF_INET, addr, &sa.sin_addr) != 1) {
			error("bad --prometheus address '%s': expected an IPv4 address", addr);
			return NULL;
		}
	}
	sa.sin_port = htons((uint16_t)pn);
	p = xcalloc(1, sizeof(*p));
	pthread_mutex_init(&p->lock, NULL);
	/* AUTO: epoll where the system has it, else poll (select only as the last resort) */
	p->d = MHD_start_daemon(MHD_USE_AUTO_INTERNAL_THREAD, (uint16_t)pn, NULL, NULL, answer, p,
				MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
				MHD_OPTION_CONNECTION_TIMEOUT, PROM_TIMEOUT_S,
				MHD_OPTION_PER_IP_CONNECTION_LIMIT, PROM_PER_CLIENT,
				MHD_OPTION_CONNECTION_LIMIT, PROM_MAX_CONNECTIONS, MHD_OPTION_END);
	if (!p->d) {
		error("cannot serve Prometheus metrics on '%s': address in use or not available", listen);
		pthread_mutex_destroy(&p->lock);
		free(p);
		return NULL;
	}
	info = MHD_get_daemon_info(p->d, MHD_DAEMON_INFO_BIND_PORT);
	*port = info ? info->port : (unsigned)pn;
	return p;
}

void mon_prom_update(struct mon_prom *p, const char *body, size_t len)
{
	char *copy = xmalloc(len + 1);

	memcpy(copy, body, len);
	copy[len] = '\0';
	pthread_mutex_lock(&p->lock);
	free(p->body);
	p->body = copy;
	p->len = len;
	pthread_mutex_unlock(&p->lock);
}

void mon_prom_stop(struct mon_prom *p)
{
	if (!p)
		return;
	MHD_stop_daemon(p->d);
	pthread_mutex_destroy(&p->lock);
	free(p->body);
	free(p);
}
