/*
 * crelay: bench/relay's byte copy without Go's runtime. A thread blocks in
 * read() on each direction of each connection and write()s what it got, so
 * a message costs one wake-up of one thread and two system calls: the
 * least any process in the middle can cost. bench/relay runs it as its
 * copier (relay -copier bin/crelay); bench/proxy.py reads the guarded
 * kernel's figures against both.
 *
 *     cc -O2 -pthread -o bin/crelay bench/crelay/crelay.c
 *     crelay IP FRONT_PORT BACK_PORT [FRONT_PORT BACK_PORT ...]
 *
 * It listens on IP:FRONT_PORT and copies each connection made there to a
 * new one to IP:BACK_PORT, both ways, until either side closes.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static struct in_addr ip;

/* A connection to Jupyter and the one made for it to the kernel: two
 * threads copy between them, and the one that ends last closes both. */
struct link {
	int front, kernel;
	atomic_int running;
};

struct copy {
	int from, to;
	struct link *link;
};

struct port {
	int listener, back;
};

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void nodelay(int fd)
{
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

static void *copy(void *arg)
{
	struct copy p = *(struct copy *)arg;
	free(arg);
	char buf[1 << 16];
	for (;;) {
		ssize_t n = read(p.from, buf, sizeof buf);
		if (n <= 0)
			break;
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(p.to, buf + off, n - off);
			if (w <= 0)
				goto out;
			off += w;
		}
	}
out:
	/* Let the other direction's read end too. */
	shutdown(p.from, SHUT_RDWR);
	shutdown(p.to, SHUT_RDWR);
	if (atomic_fetch_sub(&p.link->running, 1) == 1) {
		close(p.link->front);
		close(p.link->kernel);
		free(p.link);
	}
	return NULL;
}

static void spawn(struct link *l, int from, int to)
{
	struct copy *p = malloc(sizeof *p);
	pthread_t t;
	p->from = from;
	p->to = to;
	p->link = l;
	if (pthread_create(&t, NULL, copy, p) != 0)
		die("pthread_create");
	pthread_detach(t);
}

/* dial connects to the kernel's port, waiting up to 30 s for it to listen. */
static int dial(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port), .sin_addr = ip };
	for (int i = 0; i < 3000; i++) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd < 0)
			die("socket");
		if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0)
			return fd;
		close(fd);
		nanosleep(&(struct timespec){ .tv_nsec = 10 * 1000 * 1000 }, NULL);
	}
	return -1;
}

static void *serve(void *arg)
{
	struct port *pt = arg;
	for (;;) {
		int c = accept(pt->listener, NULL, NULL);
		if (c < 0)
			die("accept");
		int k = dial(pt->back);
		if (k < 0) {
			close(c);
			continue;
		}
		nodelay(c);
		nodelay(k);
		struct link *l = malloc(sizeof *l);
		l->front = c;
		l->kernel = k;
		atomic_init(&l->running, 2);
		spawn(l, c, k);
		spawn(l, k, c);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 4 || argc % 2 != 0 || inet_pton(AF_INET, argv[1], &ip) != 1) {
		fprintf(stderr, "usage: crelay IP FRONT_PORT BACK_PORT [FRONT_PORT BACK_PORT ...]\n");
		return 2;
	}
	pthread_t last;
	for (int i = 2; i < argc; i += 2) {
		struct port *pt = malloc(sizeof *pt);
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(atoi(argv[i])), .sin_addr = ip };
		int one = 1;
		pt->back = atoi(argv[i + 1]);
		pt->listener = socket(AF_INET, SOCK_STREAM, 0);
		if (pt->listener < 0)
			die("socket");
		setsockopt(pt->listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
		if (bind(pt->listener, (struct sockaddr *)&a, sizeof a) != 0)
			die("bind");
		if (listen(pt->listener, 16) != 0)
			die("listen");
		if (pthread_create(&last, NULL, serve, pt) != 0)
			die("pthread_create");
	}
	pthread_join(last, NULL); /* serve never returns: relay kills us */
	return 0;
}
