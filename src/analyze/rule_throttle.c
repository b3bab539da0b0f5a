/*
 * rule_throttle.c - throttling: the SM clock below its maximum while the
 * GPU is busy, thermal or power clock-event reasons, temperature above
 * throttling.temp_c.
 *
 * Metrics are recognised by name (the NVML sampler's names first): the SM
 * clock (sm_clock_mhz; also "clock_sm", "graphics_clock"), its maximum
 * (sm_clock_max_mhz, else the device row), the GPU temperature (temp_c; not
 * memory, slowdown or shutdown temperatures), clock-event reasons
 * (throttle_reasons, "clock_event"; the NVML bit mask).  Gain: over samples taken
 * while the GPU was busy, the mean of (1 - clock / max clock) where the
 * clock is under throttling.clock_ratio of the maximum, times the GPU busy
 * share: kernels that are compute-bound slow down in proportion to the clock.
 */
#include "internal.h"

#include <math.h>
#include <string.h>

/*
 * Was the GPU busy around @t: kernels for at least 80% of the 10 ms around
 * the sample?  A clock read between kernels of a mostly idle GPU is power
 * management, not throttling.
 */
static int busy_at(struct az_ctx *c, uint32_t device, uint64_t t)
{
	uint64_t lo = t > 5000000 ? t - 5000000 : 0, hi = t + 5000000;

	for (size_t i = 0; i < c->nunits; i++) {
		struct az_unit *u = &c->units[i];
		if (u->device != device)
			continue;
		if ((ivset_overlap(&u->compute, lo, hi) + ivset_overlap(&u->comm, lo, hi)) * 10 >= (hi - lo) * 8)
			return 1;
	}
	return 0;
}

/* Does a clock-event-reasons sample at @t (same device) have NVML's "GPU idle" bit (0x1)? */
static int idle_reason_at(const struct az_ctx *c, uint32_t device, uint64_t t)
{
	const struct model *m = c->m;

	for (size_t i = 0; i < m->metrics.n; i++) {
		const struct trace_metric *x = &m->metrics.v[i];
		const char *n;
		if (x->time != t || x->device != device)
			continue;
		n = model_str(m, x->name_id);
		if ((strstr(n, "throttle") || strstr(n, "clock_event")) && x->value >= 0 && x->value < 1e15 &&
		    ((uint64_t)x->value & 0x1))
			return 1;
	}
	return 0;
}

void rule_throttle(struct az_ctx *c, const struct az_rule *self)
{
	const struct model *m = c->m;
	double ratio = az_param(c, self, "clock_ratio"), temp_lim = az_param(c, self, "temp_c");
	double max_clk = 0, deficit = 0, tmax = 0, clk_sum = 0;
	uint64_t nbusy = 0, nlow = 0, reasons = 0;
	struct strbuf ev = STRBUF_INIT;
	struct interval where[3];
	size_t nw = 0;
	double gain, busy_share;

	if (!c->has_gpu || !m->metrics.n)
		return;
	for (size_t i = 0; i < m->devices.n; i++)
		if ((double)m->devices.v[i].core_clock_khz / 1000 > max_clk)
			max_clk = (double)m->devices.v[i].core_clock_khz / 1000;
	for (size_t i = 0; i < m->metrics.n; i++) {
		const struct trace_metric *x = &m->metrics.v[i];
		const char *n = model_str(m, x->name_id);
		if (strstr(n, "max") && strstr(n, "clock") && strstr(n, "sm") && !strstr(n, "mem") &&
		    x->value > max_clk && x->value < 1e5)
			max_clk = x->value; /* sm_clock_max_mhz, not the memory clock */
	}
	for (size_t i = 0; i < m->metrics.n; i++) {
		const struct trace_metric *x = &m->metrics.v[i];
		const char *n = model_str(m, x->name_id);
		if (!az_in_win(c, x->time) || !isfinite(x->value))
			continue;
		if (strstr(n, "temp") && !strstr(n, "mem") && !strstr(n, "slowdown") && !strstr(n, "shutdown") &&
		    !strstr(n, "max") && !strstr(n, "limit")) {
			if (x->value > tmax && x->value < 1000)
				tmax = x->value;
			if (x->value > temp_lim && nw < 3)
				where[nw++] = (struct interval){ x->time, x->time + 1 };
		} else if (strstr(n, "clock_event") || strstr(n, "throttle")) {
			if (x->value >= 0 && x->value < 1e15)
				reasons |= (uint64_t)x->value;
		} else if ((strstr(n, "sm_clock") || strstr(n, "clock_sm") || strstr(n, "graphics_clock")) &&
			   !strstr(n, "max") && max_clk > 0 && busy_at(c, x->device, x->time) &&
			   !idle_reason_at(c, x->device, x->time)) {
			nbusy++;
			clk_sum += x->value;
			if (x->value < ratio * max_clk) {
				nlow++;
				deficit += 1 - x->value / max_clk;
			}
		}
	}
	busy_share = az_div((double)c->busy_ns, (double)c->unit_wall_ns);
	gain = az_div(deficit, (double)nbusy) * busy_share;
	/* thermal (0x20 sw, 0x40 hw), power (0x4 sw cap, 0x80 hw brake), hw slowdown (0x8) */
	if (gain < az_param(c, self, "min_gain") && tmax <= temp_lim && !(reasons & (0x4 | 0x8 | 0x20 | 0x40 | 0x80)))
		return;
	if (nbusy)
		strbuf_addf(&ev, "SM clock while busy: mean %.0f MHz of max %.0f MHz; %llu of %llu busy samples under %.0f%%\n",
			    az_div(clk_sum, (double)nbusy), max_clk, (unsigned long long)nlow,
			    (unsigned long long)nbusy, ratio * 100);
	if (tmax > 0)
		strbuf_addf(&ev, "max temperature %.0f C (limit %.0f C)\n", tmax, temp_lim);
	if (reasons)
		strbuf_addf(&ev, "clock-event reasons seen: 0x%llx%s%s%s%s\n", (unsigned long long)reasons,
			    reasons & 0x60 ? " thermal" : "", reasons & 0x4 ? " power-cap" : "",
			    reasons & 0x80 ? " power-brake" : "", reasons & 0x8 ? " hw-slowdown" : "");
	az_add(c, "throttling", gain > 0 ? az_severity(gain) : SEV_WARNING, gain,
	       "GPU clocks throttled while busy",
	       "mean over busy samples of (1 - SM clock / max clock) where under throttling.clock_ratio, times the GPU "
	       "busy share: compute-bound kernels slow down with the clock",
	       ev.buf,
	       "Check cooling and power: nvidia-smi -q -d PERFORMANCE,TEMPERATURE,POWER shows the active reasons; fix "
	       "airflow or fan policy, raise the power limit if it is below default (nvidia-smi -pl), and do not run "
	       "other heavy jobs on the same GPU",
	       where, nw);
	strbuf_release(&ev);
}
