/* Long-poll fetches in front of librdkafka's mock cluster: see kafka-long-poll.h and ADR 0260. */
#include "kafka-long-poll.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>

enum { API_PRODUCE = 0, API_FETCH = 1, API_METADATA = 3, API_FIND_COORDINATOR = 10 };
/* Non-flexible versions only (the mock of librdkafka 2.0 answers Fetch up to v11). */
enum { FETCH_MIN_VERSION = 4, FETCH_MAX_VERSION = 11, METADATA_MAX_VERSION = 8, FIND_COORDINATOR_MAX_VERSION = 2 };
/* Produce v0-v8 are not flexible: their batch sizes are checked (v9+ pass through unchecked). */
enum { PRODUCE_MAX_CHECKED_VERSION = 8, ERR_MESSAGE_TOO_LARGE = 10 };
#define MOCK_CLUSTER_PREFIX "mockCluster"
#define LONG_POLL_CLUSTER_PREFIX "meldLongPoll"
#define MAX_FRAME (512 * 1024 * 1024)

struct buf {
  unsigned char *data;
  size_t len, off; /* bytes [off, len) are pending */
  size_t cap;
};

enum entry_state { WAITING, HELD, DONE };

/* One request the client sent that expects an answer, in the order it was sent. */
struct entry {
  struct entry *next;
  int32_t correlation_id;
  int16_t api_key, api_version;
  enum entry_state state;
  /* Fetches only: the request as sent to the mock (MaxWait 0), when the client's wait ends,
   * and the Produce generation the last ask saw. */
  unsigned char *request;
  size_t request_len;
  int64_t deadline_ms;
  uint64_t generation;
  unsigned char *answer;
  size_t answer_len;
};

struct conn {
  struct conn *next;
  int client, upstream;
  struct buf from_client, from_upstream, to_client, to_upstream;
  struct entry *head, *tail;
};

static struct conn *conns;
static int listen_port, upstream_port;
/* Incremented whenever a Produce is answered: records may have arrived for any held fetch. */
static uint64_t produce_generation;
static int produced_since_wake;
/* Kafka's `message.max.bytes` (ADR 0346): a partition's record batch above it is refused. 0: no limit. */
static int32_t message_max_bytes = 1048588;

void long_poll_set_message_max_bytes(int32_t max) { message_max_bytes = max; }

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void *xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) {
    fprintf(stderr, "kafka-dev-broker: out of memory\n");
    exit(2);
  }
  return p;
}

static void buf_append(struct buf *b, const void *data, size_t n) {
  if (b->off > 0 && b->off == b->len) b->off = b->len = 0;
  if (b->len + n > b->cap) {
    if (b->off > 0) { /* compact before growing */
      memmove(b->data, b->data + b->off, b->len - b->off);
      b->len -= b->off;
      b->off = 0;
    }
    if (b->len + n > b->cap) {
      size_t cap = b->cap ? b->cap : 4096;
      while (cap < b->len + n) cap *= 2;
      unsigned char *p = realloc(b->data, cap);
      if (!p) {
        fprintf(stderr, "kafka-dev-broker: out of memory\n");
        exit(2);
      }
      b->data = p;
      b->cap = cap;
    }
  }
  memcpy(b->data + b->len, data, n);
  b->len += n;
}

static size_t buf_pending(const struct buf *b) { return b->len - b->off; }

static int32_t rd32(const unsigned char *p) { return (int32_t)((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]); }
static int16_t rd16(const unsigned char *p) { return (int16_t)((uint16_t)p[0] << 8 | p[1]); }
static void wr16(unsigned char *p, int16_t v) {
  p[0] = (unsigned char)((uint16_t)v >> 8);
  p[1] = (unsigned char)v;
}
static void wr32(unsigned char *p, int32_t v) {
  p[0] = (unsigned char)((uint32_t)v >> 24);
  p[1] = (unsigned char)((uint32_t)v >> 16);
  p[2] = (unsigned char)((uint32_t)v >> 8);
  p[3] = (unsigned char)v;
}

/* A bounds-checked reader over one frame; `ok` turns 0 at the first read past the end. */
struct reader {
  const unsigned char *p;
  size_t len, pos;
  int ok;
};
static int skip(struct reader *r, size_t n) {
  if (!r->ok || r->len - r->pos < n) return r->ok = 0;
  r->pos += n;
  return 1;
}
static int32_t read32(struct reader *r) {
  size_t at = r->pos;
  return skip(r, 4) ? rd32(r->p + at) : 0;
}
static int16_t read16(struct reader *r) {
  size_t at = r->pos;
  return skip(r, 2) ? rd16(r->p + at) : 0;
}
/* Skips a (nullable) string and returns its length, -1 for null. */
static int skip_string(struct reader *r) {
  int16_t n = read16(r);
  if (n > 0) skip(r, (size_t)n);
  return n;
}

/* --- requests ------------------------------------------------------------------------------ */

/* Frame = size(4) api_key(2) api_version(2) correlation_id(4) client_id(string) body. Returns
 * the offset of the body, or 0 when the header does not parse. */
static size_t request_body(const unsigned char *frame, size_t len) {
  struct reader r = {frame, len, 12, 1};
  skip_string(&r);
  return r.ok ? r.pos : 0;
}

/* A Produce with acks 0 gets no answer; every other request gets one. */
static int expects_answer(const unsigned char *frame, size_t len, int16_t key, int16_t version) {
  if (key != API_PRODUCE) return 1;
  size_t body = request_body(frame, len);
  if (!body) return 1;
  struct reader r = {frame, len, body, 1};
  if (version >= 3) skip_string(&r); /* transactional_id */
  int16_t acks = read16(&r);
  return !r.ok || acks != 0;
}

/*
 * Kafka refuses a partition's record batch larger than its `message.max.bytes` with
 * MESSAGE_TOO_LARGE; librdkafka's mock takes any size. Returns the refusal of a Produce (v0-v8)
 * that carries such a batch, as a complete answer frame (*answer_len bytes), else NULL. Kafka
 * appends the request's other batches and refuses only the big one; here the whole request is
 * refused (every partition answers MESSAGE_TOO_LARGE and nothing is appended): the client sees
 * the same error, and retrying what Kafka had appended only duplicates it.
 */
static unsigned char *refuse_oversized_produce(const unsigned char *frame, size_t len, int16_t version, size_t *answer_len) {
  if (message_max_bytes <= 0 || version > PRODUCE_MAX_CHECKED_VERSION) return NULL;
  size_t body = request_body(frame, len);
  if (!body) return NULL;
  struct reader r = {frame, len, body, 1};
  if (version >= 3) skip_string(&r); /* transactional_id */
  read16(&r); /* acks */
  read32(&r); /* timeout */
  size_t topics_at = r.pos;
  int32_t topics = read32(&r);
  int32_t largest = 0, partitions_total = 0;
  size_t names_len = 0;
  for (int32_t t = 0; r.ok && t < topics; t++) {
    int n = skip_string(&r);
    names_len += n > 0 ? (size_t)n : 0;
    int32_t partitions = read32(&r);
    for (int32_t p = 0; r.ok && p < partitions; p++) {
      read32(&r); /* partition index */
      int32_t records = read32(&r);
      if (records > 0) skip(&r, (size_t)records);
      if (records > largest) largest = records;
      partitions_total++;
    }
  }
  if (!r.ok || largest <= message_max_bytes) return NULL;
  /* partition(4) error(2) base_offset(8) [v2+ log_append_time(8)] [v5+ log_start_offset(8)]
   * [v8 record_errors(4) error_message(2)] */
  size_t per_partition = 4 + 2 + 8 + (version >= 2 ? 8 : 0) + (version >= 5 ? 8 : 0) + (version >= 8 ? 6 : 0);
  size_t size = 8 + 4 + (size_t)topics * (2 + 4) + names_len + (size_t)partitions_total * per_partition + (version >= 1 ? 4 : 0);
  unsigned char *out = xmalloc(size);
  unsigned char *w = out;
  wr32(w, (int32_t)(size - 4)), w += 4;
  memcpy(w, frame + 8, 4), w += 4; /* correlation id */
  r = (struct reader){frame, len, topics_at, 1};
  wr32(w, read32(&r)), w += 4;
  for (int32_t t = 0; t < topics; t++) {
    size_t name_at = r.pos;
    int n = skip_string(&r);
    size_t name_len = 2 + (n > 0 ? (size_t)n : 0);
    memcpy(w, frame + name_at, name_len), w += name_len;
    int32_t partitions = read32(&r);
    wr32(w, partitions), w += 4;
    for (int32_t p = 0; p < partitions; p++) {
      wr32(w, read32(&r)), w += 4;
      int32_t records = read32(&r);
      if (records > 0) skip(&r, (size_t)records);
      if (records > message_max_bytes) fprintf(stderr, "kafka-dev-broker: refused a Produce: a batch of %d bytes for %.*s (message.max.bytes %d)\n", records, n > 0 ? n : 0, (const char *)frame + name_at + 2, message_max_bytes);
      wr16(w, ERR_MESSAGE_TOO_LARGE), w += 2;
      memset(w, 0xff, 8), w += 8; /* base_offset -1 */
      if (version >= 2) memset(w, 0xff, 8), w += 8; /* log_append_time -1 */
      if (version >= 5) memset(w, 0xff, 8), w += 8; /* log_start_offset -1 */
      if (version >= 8) {
        wr32(w, 0), w += 4; /* record_errors: none */
        wr16(w, -1), w += 2; /* error_message: null */
      }
    }
  }
  if (version >= 1) wr32(w, 0), w += 4; /* throttle_time_ms */
  *answer_len = size;
  return out;
}

/* --- answers ------------------------------------------------------------------------------- */

/* True when a Fetch answer has no records and no error: the one answer worth holding. */
static int fetch_answer_empty(const unsigned char *frame, size_t len, int16_t version) {
  struct reader r = {frame, len, 8, 1}; /* size, correlation id */
  read32(&r); /* throttle_time_ms */
  if (version >= 7) {
    if (read16(&r) != 0) return 0; /* error_code */
    read32(&r); /* session_id */
  }
  int32_t topics = read32(&r);
  for (int32_t t = 0; r.ok && t < topics; t++) {
    skip_string(&r);
    int32_t partitions = read32(&r);
    for (int32_t p = 0; r.ok && p < partitions; p++) {
      read32(&r); /* partition */
      if (read16(&r) != 0) return 0;
      skip(&r, 8 + 8); /* high watermark, last stable offset */
      if (version >= 5) skip(&r, 8); /* log start offset */
      int32_t aborted = read32(&r);
      if (aborted > 0) skip(&r, (size_t)aborted * 16);
      if (version >= 11) read32(&r); /* preferred read replica */
      int32_t records = read32(&r);
      if (records > 0) return 0;
    }
  }
  return r.ok && r.pos == r.len;
}

/* Points a broker entry (host string, then port) at the proxy when it names the mock's port. */
static void rewrite_port(struct reader *r, unsigned char *frame) {
  skip_string(r); /* host */
  size_t at = r->pos;
  int32_t port = read32(r);
  if (r->ok && port == upstream_port) wr32(frame + at, listen_port);
}

/* Metadata: every broker's port, then the cluster id, which is returned as a new frame when its
 * length changes (NULL: rewritten in place or left alone). */
static unsigned char *rewrite_metadata(unsigned char *frame, size_t len, int16_t version, size_t *new_len) {
  if (version > METADATA_MAX_VERSION) return NULL;
  struct reader r = {frame, len, 8, 1};
  if (version >= 3) read32(&r); /* throttle_time_ms */
  int32_t brokers = read32(&r);
  for (int32_t b = 0; r.ok && b < brokers; b++) {
    read32(&r); /* node id */
    rewrite_port(&r, frame);
    if (version >= 1) skip_string(&r); /* rack */
  }
  if (version < 2 || !r.ok) return NULL;
  size_t at = r.pos;
  int n = skip_string(&r);
  size_t prefix = sizeof MOCK_CLUSTER_PREFIX - 1, replacement = sizeof LONG_POLL_CLUSTER_PREFIX - 1;
  if (!r.ok || n < (int)prefix || memcmp(frame + at + 2, MOCK_CLUSTER_PREFIX, prefix) != 0) return NULL;
  size_t grown = len - prefix + replacement;
  unsigned char *out = xmalloc(grown);
  memcpy(out, frame, at);
  out[at] = (unsigned char)((n - prefix + replacement) >> 8);
  out[at + 1] = (unsigned char)(n - prefix + replacement);
  memcpy(out + at + 2, LONG_POLL_CLUSTER_PREFIX, replacement);
  memcpy(out + at + 2 + replacement, frame + at + 2 + prefix, len - (at + 2 + prefix));
  wr32(out, (int32_t)(grown - 4));
  *new_len = grown;
  return out;
}

static void rewrite_find_coordinator(unsigned char *frame, size_t len, int16_t version) {
  if (version > FIND_COORDINATOR_MAX_VERSION) return;
  struct reader r = {frame, len, 8, 1};
  if (version >= 1) read32(&r); /* throttle_time_ms */
  read16(&r); /* error_code */
  if (version >= 1) skip_string(&r); /* error_message */
  read32(&r); /* node id */
  rewrite_port(&r, frame);
}

/* --- connections --------------------------------------------------------------------------- */

static void entry_free(struct entry *e) {
  free(e->request);
  free(e->answer);
  free(e);
}

static void conn_close(struct conn *c) {
  struct conn **pp = &conns;
  while (*pp && *pp != c) pp = &(*pp)->next;
  if (*pp) *pp = c->next;
  close(c->client);
  close(c->upstream);
  for (struct entry *e = c->head, *next; e; e = next) {
    next = e->next;
    entry_free(e);
  }
  free(c->from_client.data);
  free(c->from_upstream.data);
  free(c->to_client.data);
  free(c->to_upstream.data);
  free(c);
}

static void close_all(void) {
  while (conns) conn_close(conns);
}

/* Answers go back in request order, as Kafka sends them: a held fetch holds those behind it. */
static void flush_answers(struct conn *c) {
  while (c->head && c->head->state == DONE) {
    struct entry *e = c->head;
    buf_append(&c->to_client, e->answer, e->answer_len);
    c->head = e->next;
    if (!c->head) c->tail = NULL;
    entry_free(e);
  }
}

static void ask_mock(struct conn *c, struct entry *e) {
  e->state = WAITING;
  e->generation = produce_generation;
  buf_append(&c->to_upstream, e->request, e->request_len);
}

static void on_request(struct conn *c, unsigned char *frame, size_t len) {
  if (len < 12) {
    buf_append(&c->to_upstream, frame, len);
    return;
  }
  int16_t key = rd16(frame + 4), version = rd16(frame + 6);
  if (!expects_answer(frame, len, key, version)) {
    buf_append(&c->to_upstream, frame, len);
    return;
  }
  struct entry *e = xmalloc(sizeof *e);
  memset(e, 0, sizeof *e);
  e->correlation_id = rd32(frame + 8);
  e->api_key = key;
  e->api_version = version;
  if (c->tail) c->tail->next = e;
  else c->head = e;
  c->tail = e;
  if (key == API_PRODUCE && (e->answer = refuse_oversized_produce(frame, len, version, &e->answer_len))) {
    e->state = DONE; /* answered here, in its turn: the mock never sees it */
    flush_answers(c);
    return;
  }
  size_t body = key == API_FETCH && version >= FETCH_MIN_VERSION && version <= FETCH_MAX_VERSION ? request_body(frame, len) : 0;
  if (body && len >= body + 8) {
    /* replica_id, then max_wait_ms: the mock answers at once, the proxy does the waiting. */
    e->deadline_ms = now_ms() + rd32(frame + body + 4);
    wr32(frame + body + 4, 0);
    e->request = xmalloc(len);
    memcpy(e->request, frame, len);
    e->request_len = len;
  }
  e->state = WAITING;
  e->generation = produce_generation;
  buf_append(&c->to_upstream, frame, len);
}

static void on_answer(struct conn *c, unsigned char *frame, size_t len) {
  int32_t id = len >= 8 ? rd32(frame + 4) : 0;
  struct entry *e = c->head;
  while (e && !(e->state == WAITING && e->correlation_id == id)) e = e->next;
  if (!e) { /* not ours to reorder (should not happen): pass it on */
    buf_append(&c->to_client, frame, len);
    return;
  }
  unsigned char *rewritten = NULL;
  size_t rewritten_len = 0;
  if (e->api_key == API_METADATA) rewritten = rewrite_metadata(frame, len, e->api_version, &rewritten_len);
  else if (e->api_key == API_FIND_COORDINATOR) rewrite_find_coordinator(frame, len, e->api_version);
  else if (e->api_key == API_PRODUCE) {
    produce_generation++;
    produced_since_wake = 1;
  }
  if (e->request && fetch_answer_empty(frame, len, e->api_version) && now_ms() < e->deadline_ms) {
    if (e->generation != produce_generation) { /* a Produce was answered while this one was asked */
      ask_mock(c, e);
      return;
    }
    e->state = HELD;
  } else {
    e->state = DONE;
  }
  free(e->answer);
  if (rewritten) {
    e->answer = rewritten;
    e->answer_len = rewritten_len;
  } else {
    e->answer = xmalloc(len);
    memcpy(e->answer, frame, len);
    e->answer_len = len;
  }
  flush_answers(c);
}

/* Calls `on_frame` for every complete frame in `b`; returns 0 when a frame size is absurd. */
static int drain_frames(struct conn *c, struct buf *b, void (*on_frame)(struct conn *, unsigned char *, size_t)) {
  while (buf_pending(b) >= 4) {
    unsigned char *p = b->data + b->off;
    int32_t size = rd32(p);
    if (size < 0 || size > MAX_FRAME) return 0;
    if (buf_pending(b) < (size_t)size + 4) break;
    b->off += (size_t)size + 4;
    on_frame(c, p, (size_t)size + 4);
  }
  return 1;
}

/* Reads what is there; returns 0 at EOF or on an error. */
static int read_into(int fd, struct buf *b) {
  unsigned char chunk[65536];
  for (;;) {
    ssize_t n = read(fd, chunk, sizeof chunk);
    if (n > 0) {
      buf_append(b, chunk, (size_t)n);
      if ((size_t)n < sizeof chunk) return 1;
    } else if (n == 0) {
      return 0;
    } else {
      return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
    }
  }
}

static int write_from(int fd, struct buf *b) {
  while (buf_pending(b) > 0) {
    ssize_t n = write(fd, b->data + b->off, buf_pending(b));
    if (n > 0) b->off += (size_t)n;
    else return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR);
  }
  b->off = b->len = 0;
  return 1;
}

static void set_socket_options(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

static void accept_client(int listener, int down) {
  int client = accept(listener, NULL, NULL);
  if (client < 0) return;
  if (down) { /* a broker that is down refuses the connection */
    close(client);
    return;
  }
  int upstream = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)upstream_port)};
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (upstream < 0 || connect(upstream, (struct sockaddr *)&addr, sizeof addr) != 0) {
    if (upstream >= 0) close(upstream);
    close(client);
    return;
  }
  set_socket_options(client);
  set_socket_options(upstream);
  struct conn *c = xmalloc(sizeof *c);
  memset(c, 0, sizeof *c);
  c->client = client;
  c->upstream = upstream;
  c->next = conns;
  conns = c;
}

/* After a Produce was answered, every held fetch asks the mock again. */
static void wake_held_fetches(void) {
  produced_since_wake = 0;
  for (struct conn *c = conns; c; c = c->next)
    for (struct entry *e = c->head; e; e = e->next)
      if (e->state == HELD) ask_mock(c, e);
}

/* Held fetches whose wait is over are answered empty, as Kafka does. Returns the next deadline. */
static int64_t expire_held_fetches(int64_t now) {
  int64_t next = -1;
  for (struct conn *c = conns; c; c = c->next) {
    for (struct entry *e = c->head; e; e = e->next) {
      if (e->state != HELD) continue;
      if (e->deadline_ms <= now) e->state = DONE;
      else if (next < 0 || e->deadline_ms < next) next = e->deadline_ms;
    }
    flush_answers(c);
  }
  return next;
}

static int listen_loopback(void) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = 0};
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t alen = sizeof addr;
  if (bind(fd, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(fd, 128) != 0 ||
      getsockname(fd, (struct sockaddr *)&addr, &alen) != 0) {
    close(fd);
    return -1;
  }
  listen_port = ntohs(addr.sin_port);
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  return fd;
}

int long_poll_proxy_run(int upstream, const sigset_t *sigs, void (*on_listening)(int, void *), void (*on_down)(int, void *), void *ctx) {
  upstream_port = upstream;
  int listener = listen_loopback();
  int signals = signalfd(-1, sigs, SFD_CLOEXEC);
  if (listener < 0 || signals < 0) {
    perror("kafka-dev-broker: proxy");
    return 2;
  }
  on_listening(listen_port, ctx);
  int down = 0;
  struct pollfd *fds = NULL;
  size_t fds_cap = 0;
  for (;;) {
    int64_t next = expire_held_fetches(now_ms());
    size_t n = 2;
    for (struct conn *c = conns; c; c = c->next) n += 2;
    if (n > fds_cap) {
      fds_cap = n * 2;
      free(fds);
      fds = xmalloc(fds_cap * sizeof *fds);
    }
    fds[0] = (struct pollfd){.fd = signals, .events = POLLIN};
    fds[1] = (struct pollfd){.fd = listener, .events = POLLIN};
    size_t i = 2;
    for (struct conn *c = conns; c; c = c->next) {
      fds[i++] = (struct pollfd){.fd = c->client, .events = (short)(POLLIN | (buf_pending(&c->to_client) ? POLLOUT : 0))};
      fds[i++] = (struct pollfd){.fd = c->upstream, .events = (short)(POLLIN | (buf_pending(&c->to_upstream) ? POLLOUT : 0))};
    }
    int timeout = next < 0 ? -1 : (int)(next - now_ms() > 0 ? next - now_ms() : 0);
    if (poll(fds, n, timeout) < 0) {
      if (errno == EINTR) continue;
      perror("kafka-dev-broker: poll");
      return 2;
    }
    if (fds[0].revents & POLLIN) {
      struct signalfd_siginfo si;
      if (read(signals, &si, sizeof si) == sizeof si) {
        if (si.ssi_signo == SIGUSR1 || si.ssi_signo == SIGUSR2) {
          down = si.ssi_signo == SIGUSR1;
          if (down) close_all();
          on_down(!down, ctx);
          continue;
        }
        if (si.ssi_signo != SIGHUP) break; /* detached: a closed terminal must not stop the broker */
      }
    }
    if (fds[1].revents & POLLIN) accept_client(listener, down);
    /* Walk the connections polled above (new ones from accept are at the head, not polled yet). */
    i = 2;
    struct conn *c = conns;
    while (c && i < n && c->client != fds[i].fd) c = c->next;
    for (; c && i < n; i += 2) {
      struct conn *next = c->next;
      short cr = fds[i].revents, ur = fds[i + 1].revents;
      int ok = 1;
      if (cr & (POLLIN | POLLHUP | POLLERR)) ok = read_into(c->client, &c->from_client) && drain_frames(c, &c->from_client, on_request);
      if (ok && (ur & (POLLIN | POLLHUP | POLLERR))) ok = read_into(c->upstream, &c->from_upstream) && drain_frames(c, &c->from_upstream, on_answer);
      if (ok) ok = write_from(c->upstream, &c->to_upstream) && write_from(c->client, &c->to_client);
      if (!ok) conn_close(c);
      c = next;
    }
    /* The fetches asked again are written at the next turn, when their sockets poll writable. */
    if (produced_since_wake) wake_held_fetches();
  }
  close_all();
  close(listener);
  close(signals);
  free(fds);
  return 0;
}
