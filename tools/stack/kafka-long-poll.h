/*
 * Long-poll fetches in front of librdkafka's mock cluster (ADR 0260), used by kafka-dev-broker.c.
 *
 * The mock holds an empty Fetch for its whole MaxWait even when records arrive meanwhile, so a
 * consumer had to choose between latency (a long wait) and idle CPU (a short one, ten empty
 * fetches a second per consumer). Real Kafka answers a waiting fetch as soon as a record
 * arrives. This proxy gives the development broker the same behaviour: clients connect to it,
 * it forwards every request to the mock with Fetch's MaxWait set to 0, holds an empty answer
 * until a Produce is answered on any connection (then asks the mock again) or the client's
 * MaxWait runs out, and keeps each connection's answers in request order, as Kafka does.
 *
 * It rewrites what points clients past it: the broker port in Metadata and FindCoordinator
 * answers, and the cluster id (`mockCluster<hex>` becomes `meldLongPoll<hex>`, so clients can
 * tell this broker from one without the proxy). Versions it cannot parse pass through as the
 * mock wrote them: such a client then talks to the mock directly and still works.
 */
#ifndef KAFKA_LONG_POLL_H
#define KAFKA_LONG_POLL_H

#include <signal.h>
#include <stdint.h>

/*
 * Kafka's `message.max.bytes` for the proxy to enforce (ADR 0346; default 1048588, Kafka's own
 * default; 0: no limit): a Produce carrying a partition's record batch larger than this is
 * answered MESSAGE_TOO_LARGE without reaching the mock, which takes any size.
 */
void long_poll_set_message_max_bytes(int32_t max);

/*
 * Listens on 127.0.0.1 (a free port), forwards to 127.0.0.1:upstream_port, and runs until a
 * signal of `sigs` other than SIGUSR1/SIGUSR2/SIGHUP arrives. SIGUSR1 drops every connection and
 * refuses new ones (the broker is down), SIGUSR2 accepts again; `on_down(up)` is called for
 * both. `on_listening(port)` is called once the port is bound, before any client can connect.
 * Returns 0 on a clean stop.
 */
int long_poll_proxy_run(int upstream_port, const sigset_t *sigs, void (*on_listening)(int port, void *ctx),
                        void (*on_down)(int up, void *ctx), void *ctx);

#endif
