/*
 * Kafka-protocol development broker on librdkafka's mock cluster (Debian librdkafka-dev).
 * No JVM, no ZooKeeper: one in-memory broker on 127.0.0.1, a random port.
 *
 *   kafka-dev-broker --bootstrap-file PATH [--partitions N] [--message-max-bytes N] [--no-long-poll] topic[:partitions] ...
 *
 * Creates every topic, writes the bootstrap address to PATH (atomically, so readers never
 * see a half-written file), prints it, then runs until SIGTERM/SIGINT. SIGUSR1 takes broker 1
 * down and SIGUSR2 brings it back, so tests can simulate a Kafka outage.
 * Clients talk to the long-poll proxy of kafka-long-poll.c (ADR 0260), which answers a waiting
 * fetch as soon as records arrive, as Kafka does; `--no-long-poll` hands out the mock's own
 * address instead (it holds every empty fetch for the client's whole wait), for comparisons.
 * The proxy also refuses, as Kafka does, a partition's record batch larger than
 * `--message-max-bytes` (default 1048588, Kafka's `message.max.bytes`; 0: no limit; ADR 0346):
 * the mock itself takes any size, so an oversized message would pass here and fail on Kafka.
 * Built by tools/stack/kafka.js: cc -O2 -pthread -o .stack/bin/kafka-dev-broker kafka-dev-broker.c kafka-long-poll.c -lrdkafka
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include "kafka-long-poll.h"

struct topic_job {
  rd_kafka_mock_cluster_t *mc;
  char name[256];
  int partitions;
  rd_kafka_resp_err_t err;
  pthread_t thread;
};

static void *create_topic(void *arg) {
  struct topic_job *job = arg;
  job->err = rd_kafka_mock_topic_create(job->mc, job->name, job->partitions, 1);
  return NULL;
}

static void die(const char *msg) {
  fprintf(stderr, "kafka-dev-broker: %s\n", msg);
  exit(2);
}

static int parse_count(const char *s, const char *what) {
  char *end;
  long n = strtol(s, &end, 10);
  if (*s == '\0' || *end != '\0' || n < 1 || n > 10000) {
    fprintf(stderr, "kafka-dev-broker: bad %s: %s\n", what, s);
    exit(2);
  }
  return (int)n;
}

/* Write to PATH.tmp.<pid>, fsync, rename: the file appears complete or not at all. */
static void write_atomically(const char *path, const char *text) {
  char tmp[4096];
  if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof tmp)
    die("bootstrap file path too long");
  FILE *f = fopen(tmp, "w");
  if (!f) { perror(tmp); exit(2); }
  if (fprintf(f, "%s\n", text) < 0 || fflush(f) != 0 || fsync(fileno(f)) != 0 || fclose(f) != 0) {
    perror(tmp);
    exit(2);
  }
  if (rename(tmp, path) != 0) { perror(path); exit(2); }
}

struct broker {
  rd_kafka_mock_cluster_t *mc;
  const char *bootstrap_file;
};

static void publish_address(const char *bootstraps, const char *bootstrap_file) {
  write_atomically(bootstrap_file, bootstraps);
  printf("%s\n", bootstraps);
  fflush(stdout);
}

static void on_proxy_listening(int port, void *ctx) {
  struct broker *b = ctx;
  char address[64];
  snprintf(address, sizeof address, "127.0.0.1:%d", port);
  publish_address(address, b->bootstrap_file);
}

static void on_proxy_down(int up, void *ctx) {
  struct broker *b = ctx;
  if (up) rd_kafka_mock_broker_set_up(b->mc, 1);
  else rd_kafka_mock_broker_set_down(b->mc, 1);
  fprintf(stderr, "kafka-dev-broker: broker 1 %s\n", up ? "up (SIGUSR2)" : "down (SIGUSR1)");
}

/* Without the proxy: clients talk to the mock itself; this thread only takes the signals. */
static void wait_for_signals(rd_kafka_mock_cluster_t *mc, const sigset_t *sigs) {
  for (;;) {
    siginfo_t info;
    int sig = sigwaitinfo(sigs, &info);
    if (sig < 0) {
      if (errno == EINTR) continue;
      perror("sigwaitinfo");
      return;
    }
    if (sig == SIGUSR1) {
      rd_kafka_mock_broker_set_down(mc, 1);
      fprintf(stderr, "kafka-dev-broker: broker 1 down (SIGUSR1)\n");
    } else if (sig == SIGUSR2) {
      rd_kafka_mock_broker_set_up(mc, 1);
      fprintf(stderr, "kafka-dev-broker: broker 1 up (SIGUSR2)\n");
    } else if (sig != SIGHUP) { /* detached: a closed terminal must not kill the broker */
      return;
    }
  }
}

int main(int argc, char **argv) {
  const char *bootstrap_file = NULL;
  int partitions = 8;
  const char *topics[1024];
  int ntopics = 0;
  int long_poll = 1;
  long message_max_bytes = 1048588;

  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--bootstrap-file") && i + 1 < argc) bootstrap_file = argv[++i];
    else if (!strcmp(argv[i], "--partitions") && i + 1 < argc) partitions = parse_count(argv[++i], "--partitions");
    else if (!strcmp(argv[i], "--message-max-bytes") && i + 1 < argc) {
      char *end;
      const char *v = argv[++i];
      message_max_bytes = strtol(v, &end, 10);
      if (*v == '\0' || *end != '\0' || message_max_bytes < 0 || message_max_bytes > 1000000000) die("bad --message-max-bytes");
    }
    else if (!strcmp(argv[i], "--no-long-poll")) long_poll = 0;
    else if (argv[i][0] == '-') die("usage: kafka-dev-broker --bootstrap-file PATH [--partitions N] [--message-max-bytes N] [--no-long-poll] topic[:partitions] ...");
    else if (ntopics < (int)(sizeof topics / sizeof topics[0])) topics[ntopics++] = argv[i];
    else die("too many topics");
  }
  if (!bootstrap_file) die("--bootstrap-file is required");
  long_poll_set_message_max_bytes((int32_t)message_max_bytes);

  /* Block the signals before librdkafka starts its threads (they inherit the mask), then take
   * them synchronously with sigwaitinfo: no async-signal-safety concerns, no stray thread
   * receiving SIGTERM. */
  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGTERM);
  sigaddset(&sigs, SIGINT);
  sigaddset(&sigs, SIGUSR1);
  sigaddset(&sigs, SIGUSR2);
  sigaddset(&sigs, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &sigs, NULL);

  char errstr[512];
  rd_kafka_conf_t *conf = rd_kafka_conf_new();
  /* The handle only hosts the mock cluster; hide its "no bootstrap.servers" notice (level 5). */
  if (rd_kafka_conf_set(conf, "log_level", "4", errstr, sizeof errstr) != RD_KAFKA_CONF_OK) die(errstr);
  rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof errstr);
  if (!rk) die(errstr);

  rd_kafka_mock_cluster_t *mc = rd_kafka_mock_cluster_new(rk, 1);
  if (!mc) die("rd_kafka_mock_cluster_new failed");

  /* One thread per topic: each rd_kafka_mock_topic_create() waits for the mock thread, which in
   * librdkafka 2.0.2 sometimes misses its wake-up and serves the request only at its next 1 s
   * poll timeout. Sequential calls could add up to seconds; concurrent ones share one wait. */
  struct topic_job *jobs = calloc((size_t)ntopics, sizeof *jobs);
  if (ntopics && !jobs) die("out of memory");
  for (int i = 0; i < ntopics; i++) {
    /* "name:N" gives one topic its own partition count (':' is not legal in topic names). */
    const char *colon = strchr(topics[i], ':');
    size_t len = colon ? (size_t)(colon - topics[i]) : strlen(topics[i]);
    if (len == 0 || len >= sizeof jobs[i].name) die("bad topic name");
    memcpy(jobs[i].name, topics[i], len);
    jobs[i].partitions = colon ? parse_count(colon + 1, "topic partitions") : partitions;
    jobs[i].mc = mc;
    if (pthread_create(&jobs[i].thread, NULL, create_topic, &jobs[i]) != 0) die("pthread_create failed");
  }
  for (int i = 0; i < ntopics; i++) {
    pthread_join(jobs[i].thread, NULL);
    if (jobs[i].err) {
      fprintf(stderr, "kafka-dev-broker: topic %s: %s\n", jobs[i].name, rd_kafka_err2str(jobs[i].err));
      exit(2);
    }
  }
  free(jobs);

  const char *bootstraps = rd_kafka_mock_cluster_bootstraps(mc);
  int status = 0;
  if (long_poll) {
    /* One broker: its bootstraps are "127.0.0.1:PORT". */
    const char *colon = strrchr(bootstraps, ':');
    if (!colon || strchr(bootstraps, ',')) die("unexpected mock bootstraps");
    struct broker b = {mc, bootstrap_file};
    status = long_poll_proxy_run(atoi(colon + 1), &sigs, on_proxy_listening, on_proxy_down, &b);
  } else {
    publish_address(bootstraps, bootstrap_file);
    wait_for_signals(mc, &sigs);
  }

  /* Remove the address first so nobody connects to a broker that is going away. */
  unlink(bootstrap_file);
  rd_kafka_mock_cluster_destroy(mc);
  rd_kafka_destroy(rk);
  fprintf(stderr, "kafka-dev-broker: stopped\n");
  return status;
}
