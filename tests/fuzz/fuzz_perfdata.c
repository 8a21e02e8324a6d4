/* Fuzz the perf.data reader: perfdata_buildids() over any bytes (a
 * profile copied from another machine is foreign input), every module's
 * name read to its end; and perfdata_config_buildid_dir() on the same
 * bytes as a perf config file. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "symhub/perfdata.h"

static int
module(void *ctx, const struct perfdata_module *m)
{
	size_t *n = ctx;

	if (m->idlen == 0 || m->idlen > PERFDATA_BUILDID_MAX)
		abort();
	*n += strlen(m->name) + m->id[m->idlen - 1] + (size_t)m->kernel;
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perfdata_info	 info;
	const char		*why;
	char			 dir[256];
	size_t			 n = 0;
	FILE			*fp;
	int			 fd, rc;

	if ((fd = memfd_create("fuzz", MFD_CLOEXEC)) < 0)
		return 0;
	if (write(fd, data, size) == (ssize_t)size) {
		rc = perfdata_buildids(fd, module, &n, &info, &why);
		if (rc == -ENOEXEC && why == NULL)
			abort();	/* every refusal says why */
	}
	close(fd);
	if (size > 0 && (fp = fmemopen((void *)data, size, "r")) != NULL) {
		if (perfdata_config_buildid_dir(fp, dir, sizeof(dir)) == 1 &&
		    strlen(dir) >= sizeof(dir))
			abort();
		fclose(fp);
	}
	return 0;
}
