package dev.synapsehub.net.protocol;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.SpecConstants;
import dev.synapsehub.core.actor.ActorMetrics;
import dev.synapsehub.core.actor.CoordinationActor;
import dev.synapsehub.net.wire.HubFrames;
import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import java.util.function.DoubleSupplier;
import java.util.function.LongSupplier;

/**
 * Renders {@code /health} (contract §10, with a truthful status) and {@code /metrics} (Prometheus
 * text exposition through the Prometheus Java client, over a registry of this hub's own).
 */
public final class HubMetricsText {
    /**
     * The writer counts as behind when the oldest submission waiting for it has waited this long,
     * or when it has not answered the health read within this time.
     */
    public static final Duration BEHIND = Duration.ofSeconds(1);
    /** The Content-Type of {@link #prometheus}. */
    public static final String PROMETHEUS_CONTENT_TYPE = PrometheusTextFormatWriter.CONTENT_TYPE;

    private final MetricsSources hub;
    private final PrometheusRegistry registry = new PrometheusRegistry();
    private final PrometheusTextFormatWriter writer = PrometheusTextFormatWriter.create();
    /** The state's sizes read for the scrape in progress; null when the writer did not answer. */
    private StateCounts scraped;

    public HubMetricsText(MetricsSources hub) {
        this.hub = hub;
        register();
    }

    /**
     * The hub's health now. {@code claimsReadFailed}: the writer did not answer the health read
     * (in time, or at all).
     */
    public HubHealth verdict(boolean claimsReadFailed) {
        CoordinationActor actor = hub.actor();
        List<String> failed = new ArrayList<>();
        List<String> degraded = new ArrayList<>();
        if (actor.failure().isPresent()) {
            failed.add("writer_failed");
        } else if (claimsReadFailed || actor.oldestQueuedNanos() >= BEHIND.toNanos()) {
            degraded.add("actor_behind");
        }
        if (actor.metrics().journalInDoubt()) {
            failed.add("journal_in_doubt");
        } else if (!actor.metrics().journalWriting()) {
            failed.add("journal_failing");
        }
        failed.addAll(hub.extensionFailed().get()); // e.g. a mesh node that stopped applying its group's records
        if (skippedRows() > 0) {
            degraded.add("journal_rows_skipped");
        }
        if (hub.metrics().fanoutBacklogBytes.get() > hub.maxFanoutBacklogBytes()) {
            degraded.add("fanout_backlogged");
        }
        if (hub.outbox().writesOwed() > hub.maxFanoutWrites()) {
            degraded.add("fanout_writes_backlogged");
        }
        if (hub.outbox().fanoutOverdue(hub.maxFanoutDelayNanos())) {
            degraded.add("fanout_delayed");
        }
        if (hub.outbox().overloaded()) {
            degraded.add("outbox_backlogged");
        }
        degraded.addAll(hub.extensionDegraded().get()); // e.g. a mesh node whose settings differ from the leader's
        if (!failed.isEmpty()) {
            failed.addAll(degraded);
            return new HubHealth(HubHealth.Status.FAILED, failed);
        }
        return new HubHealth(degraded.isEmpty() ? HubHealth.Status.OK : HubHealth.Status.DEGRADED, degraded);
    }

    /** The {@code /health} JSON object; {@code activeClaims} is empty when the writer did not answer. */
    public String health(HubHealth verdict, OptionalInt activeClaims, double now) {
        ObjectNode o = hub.json().object();
        o.put("status", verdict.status().word());
        HubFrames.putStrings(o, "reasons", verdict.reasons());
        o.put("writer", hub.actor().failure().isPresent() ? "failed" : "running");
        o.put("journal_corrupt_rows", skippedRows());
        o.put("version", hub.hubVersion());
        o.put("protocol_version", SpecConstants.WIRE_PROTOCOL_VERSION);
        o.put("hub_id", hub.hubId());
        o.put("config_epoch", hub.configEpoch());
        HubFrames.putFloat(o, "uptime_seconds", Math.round((now - hub.startedAt()) * 1000.0) / 1000.0);
        o.put("online_agents", hub.registry().online().size());
        if (activeClaims.isPresent()) {
            o.put("active_claims", activeClaims.getAsInt());
        } else {
            o.putNull("active_claims"); // unknown, not zero
        }
        o.put("actor_queue_depth", hub.actor().queueDepth());
        HubFrames.putFloat(o, "actor_oldest_queued_seconds", hub.actor().oldestQueuedNanos() / 1e9);
        o.put("operation_outbox_pending", 0); // this hub keeps no operation outbox (contract field)
        return hub.json().write(o);
    }

    /** Prometheus text exposition; {@code counts} is null when the writer did not answer. */
    public synchronized String prometheus(StateCounts counts) {
        scraped = counts;
        ByteArrayOutputStream out = new ByteArrayOutputStream(8192);
        try {
            writer.write(out, registry.scrape());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        StringBuilder text = new StringBuilder(out.toString(StandardCharsets.UTF_8));
        hub.extensionMetrics().accept(text); // plugged-in modules' families follow the hub's own
        return IntegralSamples.rewrite(text);
    }

    private long skippedRows() {
        return hub.journal() == null ? 0 : hub.journal().corruptRows();
    }

    private void register() {
        ActorMetrics a = hub.actor().metrics();
        HubMetrics m = hub.metrics();
        gauge("synapse_up", "1 while the hub answers HTTP.", () -> 1);
        gauge("synapse_writer_up", "1 while the writer thread (the coordination actor) runs, 0 once it failed.",
                () -> hub.actor().failure().isPresent() ? 0 : 1);
        GaugeWithCallback.builder().name("synapse_health_status")
                .help("1 for the status /health reports (ok, degraded, failed), 0 for the others.")
                .labelNames("status")
                .callback(cb -> {
                    HubHealth.Status now = verdict(scraped == null).status();
                    for (HubHealth.Status s : HubHealth.Status.values()) {
                        cb.call(s == now ? 1 : 0, s.word());
                    }
                })
                .register(registry);
        gauge("synapse_journal_corrupt_rows", "Journal rows skipped at start-up because they could not be used.",
                this::skippedRows);
        gauge("synapse_connected_clients", "Open WebSocket connections.", () -> hub.registry().connectedClients());
        gauge("synapse_online_agents", "Bound agent names.", () -> hub.registry().online().size());
        stateGauge("synapse_active_claims", "Live claims.", StateCounts::activeClaims);
        stateGauge("synapse_resource_offers", "Live resource offers.", StateCounts::resourceOffers);
        stateGauge("synapse_chat_history_messages", "Chats the history keeps.", StateCounts::historyMessages);
        stateGauge("synapse_blackboard_tasks", "Tasks on the board.", StateCounts::boardTasks);
        stateGauge("synapse_dead_letter_targets", "Targets with dead letters.", StateCounts::deadLetterTargets);
        stateGauge("synapse_dead_letters", "Dead letters over all targets.", c -> c.deadLetters());
        stateGauge("synapse_mailbox_dropped_with_pending", "Mailbox identities dropped by the mailbox's bound while"
                + " directed chats to them were still pending (their chats no longer hold journal rows), in the events"
                + " applied since this hub's state was built (a start from a snapshot counts from the snapshot).",
                StateCounts::mailboxDroppedWithPending);
        gauge("synapse_live_waiters", "Agents with advisory wait edges.", () -> hub.registry().waitGraph().size());
        gauge("synapse_fanout_backlog_bytes",
                "Broadcast bytes queued on the I/O loops for sockets that have not had them yet (a batch counts once).",
                m.fanoutBacklogBytes::get);
        gauge("synapse_fanout_oldest_undelivered_seconds",
                "How long ago the oldest broadcast still waiting on an I/O loop was published (until the pass"
                        + " that gives it to the loop's last socket ends; 0 when none waits); above"
                        + " --max-fanout-delay-ms requests are answered busy.",
                () -> hub.outbox().oldestUndeliveredNanos(System.nanoTime()) / 1e9);
        gauge("synapse_fanout_writes_owed",
                "The most socket writes one I/O loop owes for the broadcasts waiting there (a batch once per socket"
                        + " it is for); above --max-fanout-writes requests are answered busy.",
                () -> hub.outbox().writesOwed());
        gauge("synapse_mailbox_replays_deferred_waiting", "Mailbox replays the hub could not serve at once (busy,"
                + " or their journal read refused or failed) that still wait to be retried (on the connection's loop).",
                m.mailboxReplaysWaiting::get);
        gauge("synapse_outbox_queued_tasks", "Tasks (replies, broadcasts) waiting for the outbox thread.",
                () -> hub.outbox().queuedTasks());
        gauge("synapse_actor_queue_depth", "Submissions waiting for the coordination actor.",
                () -> hub.actor().queueDepth());
        gauge("synapse_actor_queue_oldest_seconds", "How long the oldest submission still waiting has waited.",
                () -> hub.actor().oldestQueuedNanos() / 1e9);
        gauge("synapse_operation_outbox_pending", "Operation outbox rows pending (this hub keeps none).", () -> 0);

        counter("synapse_claims_granted_total", "Claims granted.", m.claimsGranted::get);
        counter("synapse_claims_denied_total", "Claims denied.", m.claimsDenied::get);
        counter("synapse_releases_granted_total", "Releases granted.", m.releasesGranted::get);
        counter("synapse_messages_total", "Chats committed (directed, to everyone and on channels).", m.chats::get);
        counter("synapse_chat_directed_total", "Chats committed to a name, role or pattern.", m.chatsDirected::get);
        counter("synapse_chat_broadcast_total", "Chats committed to everyone.", m.chatsBroadcast::get);
        counter("synapse_durable_ingress_refused_total", "Chats refused by a durable-ingress quota: this hub has"
                + " none (the contract's --durable-ingress-* flags are not taken), so none is refused.", () -> 0);
        counter("synapse_auth_failures_total", "Token and per-message authentication failures.", m.authFailures::get);
        counter("synapse_auth_failures_throttled_total", "Authentication attempts refused unchecked: their remote host"
                + " was in a back-off after repeated failures (--auth-fail-limit).", m.authFailuresThrottled::get);
        counter("synapse_sockets_refused_before_upgrade_total", "Sockets closed at the TCP accept: as many that had"
                + " sent no complete request yet from their host or in all (twice the session caps, at least 64 and"
                + " 1,024).",
                m.socketsRefusedBeforeUpgrade::get);
        counter("synapse_upgrade_timeouts_total", "Sockets closed for sending no complete HTTP request (the WebSocket"
                + " upgrade or an HTTP endpoint's) within --auth-timeout.", m.upgradeTimeouts::get);
        counter("synapse_identity_proofs_unpinned_total", "Valid first-use identity proofs admitted without a pin:"
                + " the first-use replay pool (or the remote host's share of it) was full.", m.identityProofsUnpinned::get);
        counter("synapse_rate_limited_total", "Frames refused by a rate limit (--rate or --host-rate).",
                m.rateLimited::get);
        counter("synapse_host_rate_limited_total", "Frames refused by the per-host rate limit (--host-rate).",
                m.hostRateLimited::get);
        counter("synapse_takeovers_total", "Name takeovers.", m.takeovers::get);
        counter("synapse_name_leases_refused_total", "Name leases asked for and not granted: 65,536 leases were"
                + " held (the name bound without one).", () -> hub.registry().leasesRefused());
        counter("synapse_takeover_quarantines_total", "Names pinned to their holder after repeated takeovers.",
                () -> hub.registry().takeoverQuarantines());
        counter("synapse_atomic_operations_inserted_total", "Idempotency records committed (keyed mutations applied once).",
                m.idempotencyRecords::get);
        counter("synapse_atomic_operations_replayed_total", "Idempotent retries answered from the store.",
                m.idempotentReplays::get);
        counter("synapse_atomic_operations_conflicts_total", "Idempotency key conflicts.",
                m.idempotencyConflicts::get);
        counter("synapse_slow_readers_disconnected_total", "Connections dropped for not reading (once per connection).",
                m.slowReadersDisconnected::get);
        counter("synapse_fanout_busy_refusals_total",
                "Requests answered busy because delivery was behind (broadcast backlog over --max-fanout-backlog-mb,"
                        + " writes owed over --max-fanout-writes, a broadcast older than --max-fanout-delay-ms,"
                        + " or the outbox thread's queue over its threshold).",
                m.fanoutBusyRefusals::get);
        CounterWithCallback.builder().name("synapse_admission_busy_refusals_total")
                .help("synapse_fanout_busy_refusals_total by the reason that held: fanout_backlog (bytes over"
                        + " --max-fanout-backlog-mb), fanout_writes (a loop owing more writes than"
                        + " --max-fanout-writes), fanout_delay (a broadcast older than --max-fanout-delay-ms"
                        + " still waiting for a socket), outbox_queue (the outbox thread's queue over its threshold).")
                .labelNames("reason")
                .callback(cb -> {
                    for (BusyReason reason : BusyReason.values()) {
                        cb.call(m.busyRefusals(reason), reason.label());
                    }
                })
                .register(registry);
        counter("synapse_mailbox_replays_deferred_total", "Mailbox replays deferred: registrations with mailbox: true"
                + " made while the hub was busy, and replays whose journal read was refused or failed; each retried.",
                m.mailboxReplaysDeferred::get);
        counter("synapse_accept_failures_total",
                "Connections the listening socket failed to accept (out of file descriptors, ...); each pauses accepting 1 s.",
                m.acceptFailures::get);
        counter("synapse_tls_handshake_failures_total",
                "TLS handshakes that failed (plain ws:// to a wss:// port, a client certificate the CA refuses, ...).",
                m.tlsHandshakeFailures::get);
        counter("synapse_tls_certificate_reloads_total",
                "Changed --tls-certfile/--tls-keyfile pairs re-read and served to new connections.",
                m.tlsCertificateReloads::get);
        counter("synapse_tls_certificate_reload_failures_total",
                "Changed --tls-certfile/--tls-keyfile pairs that did not load (the previous pair is kept).",
                m.tlsCertificateReloadFailures::get);
        counter("synapse_faults_total", "Unexpected faults (each logged once and answered).", m.faults::get);
        counter("synapse_identity_pin_store_full_total", "Valid first-use identity proofs admitted without a pin"
                + " because the pin store held its 65,536 pins (logged once).", m.pinsStoreFull::get);
        counter("synapse_identity_pin_waits_total", "First frames that waited while another socket's first frame"
                + " for the same name was admitted and its identity pin decided.", m.identityPinWaits::get);
        counter("synapse_held_deliveries_dropped_total", "Chats held for a name whose first-use identity pin was"
                + " being decided, dropped because its socket was refused or closed first (logged once per"
                + " admission; replayed at its next registration only with a journal).", m.heldDeliveriesDropped::get);
        counter("synapse_unanswered_submissions_refused_total",
                "Background mutations (dead-letter clearing, mailbox watermarks) the actor refused, and acks the hub"
                        + " could not serve at once; retried later.",
                m.unansweredRefusals::get);
        counter("synapse_actor_commands_total", "Mutations decided by the actor.", a::commands);
        counter("synapse_actor_busy_refusals_total", "Submissions refused because the queue was full.",
                a::busyRefusals);
        counter("synapse_journal_commits_total", "Journal transactions committed.", a::batches);
        counter("synapse_journal_events_total", "Events committed to the journal.", a::eventsCommitted);
        counter("synapse_journal_append_failures_total", "Journal appends that failed (each refused its batch).",
                a::journalFailures);
        counter("synapse_journal_slow_commits_total", "Journal commits slower than the slow-commit threshold.",
                a::slowCommits);
        counter("synapse_journal_replay_thread_fallbacks_total",
                "Journal replays run on one thread because their read and decode threads could not be started.",
                () -> hub.journal() == null ? 0 : hub.journal().replayThreadFallbacks());

        // measured by the JVM; absent, never 0, where it does not measure (load tools read it around a run)
        CounterWithCallback.builder().name("process_cpu_seconds_total")
                .help("CPU time (user and system) the hub's process has used, in seconds.")
                .callback(cb -> {
                    long nanos = processCpuNanos();
                    if (nanos >= 0) {
                        cb.call(nanos / 1e9);
                    }
                })
                .register(registry);

        registry.register(m.commitLatency);
        registry.register(m.batchSize);
        registry.register(m.claimDecide);
        registry.register(m.fanoutDelay);
    }

    /** CPU nanoseconds this process has used, or -1 when the JVM does not measure it. */
    static long processCpuNanos() {
        java.lang.management.OperatingSystemMXBean os = java.lang.management.ManagementFactory.getOperatingSystemMXBean();
        return os instanceof com.sun.management.OperatingSystemMXBean sun ? sun.getProcessCpuTime() : -1;
    }

    /** A gauge of the state's sizes, absent from a scrape whose read the writer did not answer (unknown, not 0). */
    private void stateGauge(String name, String help, java.util.function.ToLongFunction<StateCounts> value) {
        GaugeWithCallback.builder().name(name).help(help + " Absent when the writer did not answer the read.")
                .callback(cb -> {
                    StateCounts c = scraped;
                    if (c != null) {
                        cb.call(value.applyAsLong(c));
                    }
                })
                .register(registry);
    }

    private void gauge(String name, String help, DoubleSupplier value) {
        GaugeWithCallback.builder().name(name).help(help).callback(cb -> cb.call(value.getAsDouble()))
                .register(registry);
    }

    private void counter(String name, String help, LongSupplier value) {
        CounterWithCallback.builder().name(name).help(help).callback(cb -> cb.call(value.getAsLong()))
                .register(registry);
    }
}
