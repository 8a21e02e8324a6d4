/*
 * xzseek: see xzseek.h.
 *
 * The .xz format: a 12-byte stream header, blocks (each a header, the
 * compressed data, padding to 4 and a check), the index (each block's
 * unpadded and uncompressed size), a 12-byte footer holding the index's
 * size.  So the index is found from the end, and from it every block's
 * offsets, compressed and not.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lzma.h>

#include "xzseek.h"

/* Bounds on what a file may make us allocate: a 1 GB package in 1 MiB
 * blocks has an index of a few KiB; xz -9 decodes in 65 MiB. */
#define INDEX_MAX	((uint64_t)16 << 20)
#define INDEX_MEM	((uint64_t)64 << 20)
#define DECODER_MEM	((uint64_t)256 << 20)
#define CHUNK		65536

struct xzseek {
	int		 fd;
	uint64_t	 start;		/* of the stream, in the file */
	lzma_index	*idx;
	lzma_stream_flags flags;
	/* The block being decoded: its decoder writes the sizes it saw back
	 * here when it ends, so this lives as long as the decoder. */
	lzma_block	 blk;
	unsigned char	 in[CHUNK], out[CHUNK];
};

static int
readat(int fd, void *buf, size_t len, uint64_t off)
{
	ssize_t n;

	while ((n = pread(fd, buf, len, (off_t)off)) < 0 && errno == EINTR)
		;
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EBADMSG;
}

int
xzseek_open(int fd, uint64_t end, struct xzseek **out, const char **why)
{
	struct xzseek		*x;
	lzma_stream_flags	 hf;
	unsigned char		 fb[LZMA_STREAM_HEADER_SIZE], *ib = NULL;
	uint64_t		 memlimit = INDEX_MEM, isize, ssize;
	size_t			 ipos = 0;
	int			 rc = -EBADMSG;

	*out = NULL;
	*why = "no xz stream";
	if ((x = calloc(1, sizeof(*x))) == NULL)
		return -ENOMEM;
	x->fd = fd;
	if (end < 2 * LZMA_STREAM_HEADER_SIZE)
		goto out;
	if ((rc = readat(fd, fb, sizeof(fb), end - sizeof(fb))) < 0 ||
	    lzma_stream_footer_decode(&x->flags, fb) != LZMA_OK) {
		*why = "no xz stream footer";
		if (rc == 0)
			rc = -EBADMSG;
		goto out;
	}
	rc = -EBADMSG;
	*why = "a corrupt xz index";
	isize = x->flags.backward_size;
	if (isize > INDEX_MAX || isize > end - 2 * LZMA_STREAM_HEADER_SIZE)
		goto out;
	if ((ib = malloc(isize)) == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	if ((rc = readat(fd, ib, isize, end - LZMA_STREAM_HEADER_SIZE -
	    isize)) < 0)
		goto out;
	rc = -EBADMSG;
	if (lzma_index_buffer_decode(&x->idx, &memlimit, NULL, ib, &ipos,
	    isize) != LZMA_OK || ipos != isize) {
		x->idx = NULL;
		goto out;
	}
	if (lzma_index_stream_flags(x->idx, &x->flags) != LZMA_OK)
		goto out;
	ssize = lzma_index_stream_size(x->idx);
	if (ssize > end || ssize < 2 * LZMA_STREAM_HEADER_SIZE + isize)
		goto out;
	x->start = end - ssize;
	*why = "no xz stream header where the index puts it";
	if ((rc = readat(fd, fb, sizeof(fb), x->start)) < 0)
		goto out;
	rc = -EBADMSG;
	if (lzma_stream_header_decode(&hf, fb) != LZMA_OK ||
	    lzma_stream_flags_compare(&hf, &x->flags) != LZMA_OK)
		goto out;
	rc = 0;
out:
	free(ib);
	if (rc < 0)
		xzseek_free(x);
	else
		*out = x;
	return rc;
}

void
xzseek_free(struct xzseek *x)
{
	if (x == NULL)
		return;
	if (x->idx != NULL)
		lzma_index_end(x->idx, NULL);
	free(x);
}

uint64_t
xzseek_start(const struct xzseek *x)
{
	return x->start;
}

uint64_t
xzseek_blocks(const struct xzseek *x)
{
	return lzma_index_block_count(x->idx);
}

uint64_t
xzseek_size(const struct xzseek *x)
{
	return lzma_index_uncompressed_size(x->idx);
}

static void
filters_free(lzma_filter *f)
{
	size_t i;

	for (i = 0; i < LZMA_FILTERS_MAX && f[i].id != LZMA_VLI_UNKNOWN; i++) {
		free(f[i].options);
		f[i].options = NULL;
	}
}

/* A decoder of the block it points at, its compressed bytes at *in. */
static int
block_start(struct xzseek *x, const lzma_index_iter *it, lzma_stream *s,
    uint64_t *in, uint64_t *inleft, const char **why)
{
	lzma_filter	 f[LZMA_FILTERS_MAX + 1];
	lzma_block	*b = &x->blk;
	unsigned char	 h[LZMA_BLOCK_HEADER_SIZE_MAX];
	uint64_t	 at = x->start + it->block.compressed_file_offset;
	int		 rc;

	*why = "a corrupt xz block header";
	if ((rc = readat(x->fd, h, 1, at)) < 0)
		return rc;
	if (h[0] == 0)		/* the index indicator, not a block */
		return -EBADMSG;
	memset(b, 0, sizeof(*b));
	memset(f, 0, sizeof(f));
	f[0].id = LZMA_VLI_UNKNOWN;
	b->version = 1;
	b->check = x->flags.check;
	b->filters = f;
	b->header_size = lzma_block_header_size_decode(h[0]);
	if (b->header_size > it->block.total_size ||
	    (rc = readat(x->fd, h, b->header_size, at)) < 0)
		return rc < 0 ? rc : -EBADMSG;
	if (lzma_block_header_decode(b, NULL, h) != LZMA_OK)
		return -EBADMSG;
	rc = -EBADMSG;
	if (lzma_block_compressed_size(b, it->block.unpadded_size) !=
	    LZMA_OK)
		goto out;
	if (b->uncompressed_size != LZMA_VLI_UNKNOWN &&
	    b->uncompressed_size != it->block.uncompressed_size)
		goto out;
	b->uncompressed_size = it->block.uncompressed_size;
	*why = "an xz block that needs too much memory to decode";
	if (lzma_raw_decoder_memusage(f) > DECODER_MEM)
		goto out;
	*why = "an xz block with filters liblzma does not know";
	if (lzma_block_decoder(s, b) != LZMA_OK)
		goto out;
	b->filters = NULL;	/* copied by the decoder; f is freed below */
	*in = at + b->header_size;
	*inleft = it->block.total_size - b->header_size;
	rc = 0;
out:
	filters_free(f);
	return rc;
}

int
xzseek_read(struct xzseek *x, uint64_t off, uint64_t len, xzseek_fn fn,
    void *ctx, uint64_t *unpacked, const char **why)
{
	lzma_stream	 s = LZMA_STREAM_INIT;
	lzma_index_iter	 it;
	lzma_ret	 lr;
	uint64_t	 pos, in = 0, inleft = 0, stop, a, b;
	size_t		 n;
	int		 rc, started = 0;

	*why = "a range past the xz stream's end";
	if (off > xzseek_size(x) || len > xzseek_size(x) - off)
		return -EBADMSG;
	if (len == 0)
		return 0;
	stop = off + len;
	lzma_index_iter_init(&it, x->idx);
	if (lzma_index_iter_locate(&it, off))
		return -EBADMSG;
	pos = it.block.uncompressed_file_offset;
	for (;;) {
		if (!started) {
			if ((rc = block_start(x, &it, &s, &in, &inleft,
			    why)) < 0)
				goto out;
			started = 1;
		}
		if (s.avail_in == 0 && inleft > 0) {
			n = inleft < sizeof(x->in) ? (size_t)inleft :
			    sizeof(x->in);
			if ((rc = readat(x->fd, x->in, n, in)) < 0)
				goto out;
			s.next_in = x->in;
			s.avail_in = n;
			in += n;
			inleft -= n;
		}
		s.next_out = x->out;
		s.avail_out = sizeof(x->out);
		lr = lzma_code(&s, LZMA_RUN);
		n = sizeof(x->out) - s.avail_out;
		*unpacked += n;
		/* The part of [pos, pos + n) in [off, stop). */
		a = pos > off ? pos : off;
		b = pos + n < stop ? pos + n : stop;
		if (a < b && (rc = fn(ctx, x->out + (a - pos), b - a)) < 0)
			goto out;
		pos += n;
		if (pos >= stop) {
			rc = 0;
			goto out;
		}
		if (lr == LZMA_STREAM_END) {
			/* On to the next block, which must follow on. */
			*why = "a corrupt xz block";
			rc = -EBADMSG;
			if (pos != it.block.uncompressed_file_offset +
			    it.block.uncompressed_size ||
			    lzma_index_iter_next(&it, LZMA_INDEX_ITER_BLOCK) ||
			    it.block.uncompressed_file_offset != pos)
				goto out;
			started = 0;
			continue;
		}
		if (lr != LZMA_OK || (n == 0 && s.avail_in == 0 &&
		    inleft == 0)) {
			*why = lr == LZMA_MEM_ERROR ? "out of memory" :
			    "a corrupt xz block";
			rc = lr == LZMA_MEM_ERROR ? -ENOMEM : -EBADMSG;
			goto out;
		}
	}
out:
	lzma_end(&s);
	return rc;
}
