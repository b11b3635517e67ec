package dev.synapsehub.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import io.netty.util.concurrent.ScheduledFuture;

import java.io.IOException;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

/**
 * The messaging workloads of {@code synapse-hub bench}:
 * <ul>
 * <li>{@code broadcast}: K senders chat to {@code "all"} (closed loop on the hub's echo of the
 * sender's own message, or open loop at a fixed aggregate rate); N receivers record each
 * delivery's latency from the {@code bench_sent_ns} member the hub echoes (every connection
 * lives in this process, so {@link System#nanoTime} is comparable). Lost deliveries are
 * expected minus received after a drain period.</li>
 * <li>{@code directed}: N agents paired a_i → a_(i xor 1) send directed chats with
 * {@code receipt_requested}, closed loop on the {@code delivery_receipt}.</li>
 * <li>{@code mailbox}: one sender leaves a backlog of directed chats for an offline identity
 * (noting each chat's journal {@code seq} from its own echo), then the identity registers
 * with {@code mailbox: true, since_seq: 0} and the replay is timed and checked: every chat
 * exactly once, in seq order. The contract's hub replays at most 1000 chat events per
 * registration (§8.3; ours also every chat still pending beyond them), so once the replay pauses
 * with chats missing the identity pages with further {@code mailbox: true} heartbeats whose
 * {@code since_seq} is just below its first missing chat.</li>
 * </ul>
 * Receivers of fan-out traffic read raw text (no JSON parse) so the tool is not the bottleneck.
 */
final class MessagingBench {
    /** Largest mailbox backlog the tool accepts (it keeps every seq). */
    static final long MAX_MAILBOX = 10_000_000;
    /** Contract §8.3: chat events a single mailbox registration replays at most. */
    static final int REPLAY_PAGE = 1000;
    private static final long DEFAULT_MAILBOX = 10_000;
    private static final int MAILBOX_WINDOW = 64;
    private static final long PAGE_QUIET_NANOS = 5_000_000_000L;
    /** A replay that sent a full page and paused this long has ended: ask for the next page. */
    private static final long PAGE_PAUSE_NANOS = 250_000_000L;

    private final BenchCommand o;
    private final String run;
    private final BenchConnections connections;
    private final PrintWriter out;
    private final PrintWriter err;
    private final ObjectMapper mapper = new ObjectMapper();
    /** Member value marking a message sent while measuring, resp. during warm-up. */
    private final String measuredTag;
    private final String warmupTag;

    private final SendLatency latency = new SendLatency();
    /** The hub's and this tool's CPU over the measured phase. */
    private RunCpu cpu;
    /** Measured sends (reserved against --count). */
    private final AtomicLong sent = new AtomicLong();
    private final LongAdder delivered = new LongAdder();
    private final LongAdder errors = new LongAdder();
    private final LongAdder undelivered = new LongAdder();
    private final AtomicLong lastDelivery = new AtomicLong();
    private final AtomicReference<String> firstError = new AtomicReference<>();
    private volatile boolean measuring;
    private volatile boolean stopping;

    MessagingBench(BenchCommand options, String run, BenchConnections connections, PrintWriter out, PrintWriter err) {
        this.o = options;
        this.run = run;
        this.connections = connections;
        this.out = out;
        this.err = err;
        this.measuredTag = "bench-" + run + "-m";
        this.warmupTag = "bench-" + run + "-w";
    }

    int run() throws InterruptedException {
        switch (o.workload) {
            case broadcast:
                return broadcast();
            case directed:
                return directed();
            case mailbox:
                return mailbox();
            default:
                throw new IllegalStateException(String.valueOf(o.workload));
        }
    }

    private String name(String seat) {
        return o.namePrefix + "-" + run + "/" + seat;
    }

    private List<HubClient> open(List<String> names, int wanted) {
        try {
            return connections.open(names, o.quiet ? null : err);
        } catch (IOException e) {
            err.println("synapse-hub: cannot set up " + wanted + " connections to " + o.url + ": " + e.getMessage());
            connections.printHints(err, wanted);
            return null;
        }
    }

    /** Claims one measured send against --count; false once the count is used up. */
    private boolean reserve() {
        while (true) {
            long v = sent.get();
            if (o.count > 0 && v >= o.count) {
                return false;
            }
            if (sent.compareAndSet(v, v + 1)) {
                return true;
            }
        }
    }

    private void recordError(ObjectNode f) {
        errors.increment();
        firstError.compareAndSet(null, f.path("payload").asText());
    }

    private void warmUp() throws InterruptedException {
        long warmupEnd = System.nanoTime() + (long) (o.warmupSeconds * 1e9);
        while (System.nanoTime() < warmupEnd) {
            Thread.sleep(20);
        }
    }

    private String percentiles() {
        return SendLatency.percentiles(latency.fromIntended());
    }

    /** The measured phase: until --duration, --count or every sender finished; returns its length in ns. */
    private long measure(String unit, Runnable progressExtra) throws InterruptedException {
        cpu = o.runCpu();
        cpu.start();
        measuring = true;
        long start = System.nanoTime();
        long deadline = start + (long) (o.duration() * 1e9);
        long lastPrint = start;
        // a dropped connection ends the run: no figure is printed for it
        while (System.nanoTime() < deadline && (o.count == 0 || sent.get() < o.count) && connections.closedByHub() == 0) {
            Thread.sleep(10);
            long now = System.nanoTime();
            if (!o.quiet && now - lastPrint >= 1_000_000_000L) {
                lastPrint = now;
                double secs = (now - start) / 1e9;
                err.printf(Locale.ROOT, "\r  %5.0fs  %,12d %s  %,10.0f/s  p50 %s  p99 %s  errors %d   ", secs,
                        sent.get(), unit, sent.get() / secs, BenchCommand.micros(latency.fromIntended().quantileNanos(0.5)),
                        BenchCommand.micros(latency.fromIntended().quantileNanos(0.99)), errors.sum());
                progressExtra.run();
                err.flush();
            }
        }
        stopping = true;
        measuring = false;
        long measured = System.nanoTime() - start;
        cpu.stop();
        return measured;
    }

    // ---------------------------------------------------------------------------- broadcast

    private int broadcast() throws InterruptedException {
        int receivers = o.agents;
        int wanted = receivers + o.senders + o.idle;
        List<String> receiverNames = new ArrayList<>();
        for (int i = 0; i < receivers; i++) {
            receiverNames.add(name("r" + i));
        }
        List<String> senderNames = new ArrayList<>();
        for (int i = 0; i < o.senders; i++) {
            senderNames.add(name("s" + i));
        }
        List<HubClient> idle = open(idleNames(), wanted);
        List<HubClient> rx = idle == null ? null : open(receiverNames, wanted);
        List<HubClient> tx = rx == null ? null : open(senderNames, wanted);
        if (tx == null) {
            return ExitCodes.UNAVAILABLE;
        }
        for (HubClient c : rx) {
            c.onText(this::onBroadcastText);
        }
        err.printf(Locale.ROOT, "bench: broadcast, %d sender(s) %s to %d receiver(s)%s against %s for %.0f s%s"
                        + " (warm-up %.0f s)%n", o.senders,
                o.rate > 0 ? String.format(Locale.ROOT, "at %,.0f msgs/s", o.rate) : "in a closed loop", receivers,
                o.idle > 0 ? " + " + o.idle + " idle" : "", o.url, o.duration(),
                o.count > 0 ? " or " + o.count + " messages" : "", o.warmupSeconds);
        List<BroadcastSender> loops = new ArrayList<>();
        for (int i = 0; i < tx.size(); i++) {
            loops.add(new BroadcastSender(tx.get(i), senderNames.get(i), o.rate / o.senders));
        }
        loops.forEach(BroadcastSender::start);
        warmUp();
        long measuredNanos = measure("sent", () -> err.printf(Locale.ROOT, " deliveries %,d", delivered.sum()));
        long start = System.nanoTime() - measuredNanos;
        long expected = sent.get() * receivers;
        long drainEnd = System.nanoTime() + (long) (Math.min(o.drainSeconds, 60) * 1e9);
        while (delivered.sum() < expected && System.nanoTime() < drainEnd) {
            Thread.sleep(10);
        }
        loops.forEach(BroadcastSender::cancel);
        if (!o.quiet) {
            err.println();
        }
        if (BenchCommand.refuseDroppedRun(connections, err, wanted)) {
            return ExitCodes.REFUSED;
        }
        long got = delivered.sum();
        long lost = Math.max(0, expected - got);
        double sendSecs = measuredNanos / 1e9;
        long last = lastDelivery.get();
        double deliverSecs = last > start ? (last - start) / 1e9 : sendSecs;
        out.printf(Locale.ROOT, "workload            broadcast%n");
        out.printf(Locale.ROOT, "senders             %d (%s)%n", o.senders,
                o.rate > 0 ? String.format(Locale.ROOT, "open loop at %,.0f msgs/s", o.rate) : "closed loop");
        out.printf(Locale.ROOT, "receivers           %d (+%d idle)%n", receivers, o.idle);
        out.printf(Locale.ROOT, "measured            %.2f s%n", sendSecs);
        out.printf(Locale.ROOT, "messages sent       %,d  (%,.0f msgs/s)%n", sent.get(), sent.get() / sendSecs);
        out.printf(Locale.ROOT, "deliveries          %,d  (%,.0f deliveries/s fan-out)%n", got, got / deliverSecs);
        out.printf(Locale.ROOT, "expected            %,d%n", expected);
        out.printf(Locale.ROOT, "lost deliveries     %,d%n", lost);
        if (got > expected) {
            out.printf(Locale.ROOT, "extra deliveries    %,d%n", got - expected);
        }
        out.printf(Locale.ROOT, "errors              %,d%s%n", errors.sum(), errorSuffix());
        if (o.rate > 0) {
            out.printf(Locale.ROOT, "delivery latency    %s  (from the intended send time)%n", percentiles());
            out.printf(Locale.ROOT, "  from actual send  %s  (leaves out the sender's own lag)%n",
                    SendLatency.percentiles(latency.fromActual()));
        } else {
            out.printf(Locale.ROOT, "delivery latency    %s%n", percentiles());
        }
        return finish(errors.sum() == 0 && lost == 0 && got == expected, wanted);
    }

    private List<String> idleNames() {
        List<String> names = new ArrayList<>();
        for (int i = 0; i < o.idle; i++) {
            names.add(name("idle" + i));
        }
        return names;
    }

    /** A receiver: only measured bench chats count; the send instant is read from the raw text. */
    private void onBroadcastText(String text) {
        if (!text.contains(measuredTag)) {
            return;
        }
        long intendedNs = longMember(text, "\"bench_sent_ns\"");
        long actualNs = longMember(text, "\"bench_actual_ns\"");
        long now = System.nanoTime();
        latency.record(intendedNs, actualNs, now);
        delivered.increment();
        lastDelivery.accumulateAndGet(now, Math::max);
    }

    /** The integer value of {@code quotedName} in compact JSON text (hub frames are compact). */
    static long longMember(String text, String quotedName) {
        int i = text.indexOf(quotedName);
        if (i < 0) {
            return 0;
        }
        i = text.indexOf(':', i + quotedName.length()) + 1;
        while (i < text.length() && text.charAt(i) == ' ') {
            i++;
        }
        boolean negative = i < text.length() && text.charAt(i) == '-';
        if (negative) {
            i++;
        }
        long v = 0;
        while (i < text.length() && Character.isDigit(text.charAt(i))) {
            v = v * 10 + (text.charAt(i++) - '0');
        }
        return negative ? -v : v;
    }

    private final class BroadcastSender {
        private final HubClient client;
        private final String name;
        /** Messages per second for this sender; 0 = closed loop. */
        private final double rate;
        private long seq;
        private long inFlight = -1;
        private long issued;
        private long t0;
        private ScheduledFuture<?> ticker;

        BroadcastSender(HubClient client, String name, double rate) {
            this.client = client;
            this.name = name;
            this.rate = rate;
        }

        void start() {
            client.onFrame(this::onFrame);
            if (rate > 0) {
                client.execute(() -> {
                    t0 = System.nanoTime();
                    ticker = client.eventLoop().scheduleAtFixedRate(this::tick, 0, 1, TimeUnit.MILLISECONDS);
                });
            } else {
                client.execute(this::next);
            }
        }

        void cancel() {
            client.execute(() -> {
                if (ticker != null) {
                    ticker.cancel(false);
                }
            });
        }

        /** Open loop: send what the schedule owes; latency counts from the intended send instant. */
        private void tick() {
            if (stopping) {
                ticker.cancel(false);
                return;
            }
            long now = System.nanoTime();
            long due = (long) ((now - t0) * rate / 1e9) + 1;
            for (int burst = 0; issued < due && burst < 10_000 && !stopping; burst++) {
                long intended = t0 + (long) (issued * 1e9 / rate);
                issued++;
                if (!send(intended)) {
                    ticker.cancel(false);
                    return;
                }
            }
        }

        /** Closed loop: the next message once the hub echoed the last one. */
        private void next() {
            if (stopping || !send(System.nanoTime())) {
                inFlight = -1;
            }
        }

        private boolean send(long sentNs) {
            boolean measured = measuring;
            if (measured && !reserve()) {
                return false;
            }
            ObjectNode chat = client.frame(name, "chat");
            chat.put("target", "all");
            chat.put("payload", "bench broadcast");
            chat.put("bench_tag", measured ? measuredTag : warmupTag);
            chat.put("bench_seq", ++seq);
            chat.put("bench_sent_ns", sentNs); // the intended instant (the actual one in a closed loop)
            chat.put("bench_actual_ns", System.nanoTime());
            inFlight = seq;
            client.sendAsync(chat);
            return true;
        }

        private void onFrame(ObjectNode f) {
            String type = f.path("type").asText();
            if ("chat".equals(type)) {
                if (rate == 0 && inFlight > 0 && name.equals(f.path("sender").asText())
                        && f.path("bench_seq").asLong() == inFlight) {
                    next();
                }
            } else if ("error".equals(type)) {
                recordError(f);
                if (rate == 0 && inFlight > 0) {
                    next();
                }
            }
        }
    }

    // ----------------------------------------------------------------------------- directed

    private int directed() throws InterruptedException {
        int wanted = o.agents + o.idle;
        List<String> names = new ArrayList<>();
        for (int i = 0; i < o.agents; i++) {
            names.add(name("a" + i));
        }
        List<HubClient> idle = open(idleNames(), wanted);
        List<HubClient> clients = idle == null ? null : open(names, wanted);
        if (clients == null) {
            return ExitCodes.UNAVAILABLE;
        }
        err.printf(Locale.ROOT, "bench: directed, %d agent(s) in pairs%s against %s for %.0f s%s (warm-up %.0f s)%n",
                o.agents, o.idle > 0 ? " + " + o.idle + " idle" : "", o.url, o.duration(),
                o.count > 0 ? " or " + o.count + " receipts" : "", o.warmupSeconds);
        List<DirectedSender> loops = new ArrayList<>();
        for (int i = 0; i < clients.size(); i++) {
            loops.add(new DirectedSender(clients.get(i), names.get(i), names.get(i ^ 1), i));
        }
        loops.forEach(DirectedSender::start);
        warmUp();
        long measuredNanos = measure("sent", () -> err.printf(Locale.ROOT, " receipts %,d", delivered.sum()));
        long drainEnd = System.nanoTime() + (long) (Math.min(o.drainSeconds, 60) * 1e9);
        while (delivered.sum() < sent.get() && System.nanoTime() < drainEnd) {
            Thread.sleep(10);
        }
        if (!o.quiet) {
            err.println();
        }
        if (BenchCommand.refuseDroppedRun(connections, err, wanted)) {
            return ExitCodes.REFUSED;
        }
        double secs = measuredNanos / 1e9;
        long receipts = delivered.sum();
        long missing = Math.max(0, sent.get() - receipts);
        out.printf(Locale.ROOT, "workload            directed%n");
        out.printf(Locale.ROOT, "agents              %d in %d pairs (+%d idle)%n", o.agents, o.agents / 2, o.idle);
        out.printf(Locale.ROOT, "measured            %.2f s%n", secs);
        out.printf(Locale.ROOT, "chats sent          %,d%n", sent.get());
        out.printf(Locale.ROOT, "receipts            %,d  (%,.0f receipts/s)%n", receipts, receipts / secs);
        out.printf(Locale.ROOT, "missing receipts    %,d%n", missing);
        out.printf(Locale.ROOT, "delivered=false     %,d%n", undelivered.sum());
        out.printf(Locale.ROOT, "errors              %,d%s%n", errors.sum(), errorSuffix());
        out.printf(Locale.ROOT, "send->receipt       %s%n", percentiles());
        return finish(errors.sum() == 0 && undelivered.sum() == 0 && missing == 0, wanted);
    }

    private final class DirectedSender {
        private final HubClient client;
        private final String name;
        private final String partner;
        private final String idPrefix;
        private long seq;
        private String inFlight;
        private boolean inFlightMeasured;
        private long sentAt;

        DirectedSender(HubClient client, String name, String partner, int index) {
            this.client = client;
            this.name = name;
            this.partner = partner;
            this.idPrefix = "bench-" + run + "-" + index + "-";
        }

        void start() {
            client.onText(this::onText);
            client.execute(this::next);
        }

        private void next() {
            inFlight = null;
            if (stopping) {
                return;
            }
            boolean measured = measuring;
            if (measured && !reserve()) {
                return;
            }
            inFlight = idPrefix + (++seq);
            inFlightMeasured = measured;
            ObjectNode chat = client.frame(name, "chat");
            chat.put("target", partner);
            chat.put("payload", "bench directed");
            chat.put("receipt_requested", true);
            chat.put("client_msg_id", inFlight);
            sentAt = System.nanoTime();
            client.sendAsync(chat);
        }

        /** Everyone's chats reach everyone in the hub's compatibility mode: parse only our replies. */
        private void onText(String text) {
            if (!text.contains("delivery_receipt") && !text.contains("\"error\"")) {
                return;
            }
            ObjectNode f;
            try {
                f = (ObjectNode) mapper.readTree(text);
            } catch (IOException | ClassCastException e) {
                return;
            }
            String type = f.path("type").asText();
            if ("delivery_receipt".equals(type)) {
                if (inFlight != null && inFlight.equals(f.path("client_msg_id").asText())) {
                    if (inFlightMeasured) {
                        latency.record(sentAt, sentAt, System.nanoTime()); // closed loop: sent when due
                        delivered.increment();
                        if (!f.path("delivered").asBoolean()) {
                            undelivered.increment();
                        }
                    }
                    next();
                }
            } else if ("error".equals(type)) {
                if (inFlightMeasured) {
                    recordError(f);
                }
                if (inFlight != null) {
                    next();
                }
            }
        }
    }

    // ------------------------------------------------------------------------------ mailbox

    private int mailbox() throws InterruptedException {
        int n = (int) (o.count > 0 ? o.count : DEFAULT_MAILBOX);
        String identity = name("mbox");
        List<HubClient> idle = open(idleNames(), 2 + o.idle);
        List<HubClient> tx = idle == null ? null : open(List.of(name("msend")), 2 + o.idle);
        if (tx == null) {
            return ExitCodes.UNAVAILABLE;
        }
        err.printf(Locale.ROOT, "bench: mailbox, %,d directed chat(s) to offline %s, then replay, against %s"
                + " (each phase at most %.0f s)%n", n, identity, o.url, o.duration());
        MailboxFill fill = new MailboxFill(tx.get(0), name("msend"), identity, n);
        long fillStart = System.nanoTime();
        long fillDeadline = fillStart + (long) (o.duration() * 1e9);
        fill.start();
        while (!fill.finished() && System.nanoTime() < fillDeadline && connections.closedByHub() == 0) {
            Thread.sleep(5);
        }
        double fillSecs = (System.nanoTime() - fillStart) / 1e9;
        stopping = true;
        if (BenchCommand.refuseDroppedRun(connections, err, 2 + o.idle)) {
            return ExitCodes.REFUSED;
        }
        if (fill.noJournal) {
            err.println("synapse-hub: the hub has no journal (its chat frames carry no seq), so it keeps no mailbox;"
                    + " start it with --db FILE to bench mailbox replay");
            return ExitCodes.USAGE;
        }
        if (errors.sum() > 0) {
            err.println("synapse-hub: the hub refused a chat while filling the mailbox: " + firstError.get());
            return ExitCodes.REFUSED;
        }
        if (fill.echoed < n) {
            err.printf(Locale.ROOT, "synapse-hub: only %,d of %,d chats were stored within --duration %.0f s%n",
                    fill.echoed, n, o.duration());
            return ExitCodes.UNAVAILABLE;
        }
        long[] seqs = fill.seqs;
        boolean ascending = true;
        for (int i = 1; i < n; i++) {
            ascending &= seqs[i] > seqs[i - 1];
        }
        if (!ascending) {
            Arrays.sort(seqs);
        }
        Replay replay = new Replay(seqs);
        HubClient c;
        try {
            c = connections.connect();
        } catch (IOException e) {
            err.println("synapse-hub: cannot connect the mailbox identity to " + o.url + ": " + e.getMessage());
            connections.printHints(err, 2 + o.idle);
            return ExitCodes.UNAVAILABLE;
        }
        c.onFrame(replay::onFrame);
        // read before the replay is asked for: a small backlog replays while /metrics is scraped
        RunCpu replayCpu = o.runCpu();
        replayCpu.start();
        long start = System.nanoTime();
        long deadline = start + (long) (o.duration() * 1e9);
        c.sendAsync(mailboxHeartbeat(c, identity, 0, true));
        int pages = 1;
        int stalls = 0;
        int pageEnd = Math.min(n, REPLAY_PAGE) - 1;
        long pageSentAt = start;
        long lastPrint = start;
        while (replay.received < n && System.nanoTime() < deadline && replay.refusal == null
                && connections.closedByHub() == 0) {
            Thread.sleep(2);
            long now = System.nanoTime();
            int firstMissing = replay.firstMissing;
            if (firstMissing >= n) {
                break;
            }
            boolean pageDone = firstMissing > pageEnd;
            long sinceArrival = now - Math.max(replay.lastArrival, pageSentAt);
            boolean quiet = sinceArrival > PAGE_QUIET_NANOS;
            // a hub that replays beyond the contract's page is still sending: asking now would only duplicate
            if ((pageDone && sinceArrival > PAGE_PAUSE_NANOS) || quiet) {
                if (!pageDone) {
                    stalls++;
                }
                c.sendAsync(mailboxHeartbeat(c, identity, seqs[firstMissing] - 1, false));
                pages++;
                pageEnd = Math.min(n, firstMissing + REPLAY_PAGE) - 1;
                pageSentAt = now;
            }
            if (!o.quiet && now - lastPrint >= 1_000_000_000L) {
                lastPrint = now;
                err.printf(Locale.ROOT, "\r  %5.0fs  %,12d of %,d replayed   ", (now - start) / 1e9, replay.received, n);
                err.flush();
            }
        }
        if (!o.quiet) {
            err.println();
        }
        replayCpu.stop();
        if (replay.refusal != null) {
            err.println("synapse-hub: the hub refused the mailbox identity: " + replay.refusal);
            return ExitCodes.REFUSED;
        }
        if (BenchCommand.refuseDroppedRun(connections, err, 2 + o.idle)) {
            return ExitCodes.REFUSED;
        }
        cpu = replayCpu;
        long received = replay.received;
        long end = received >= n ? replay.doneAt : System.nanoTime();
        double secs = (end - start) / 1e9;
        out.printf(Locale.ROOT, "workload            mailbox%n");
        out.printf(Locale.ROOT, "backlog             %,d directed chats to %s (stored in %.2f s, %,.0f chats/s)%n",
                n, identity, fillSecs, n / fillSecs);
        out.printf(Locale.ROOT, "replayed            %,d of %,d%s%n", received, n,
                received < n ? String.format(Locale.ROOT, " (timed out after %.0f s)", o.duration()) : "");
        out.printf(Locale.ROOT, "replay time         %.3f s  (%,.0f msgs/s)%n", secs, received / secs);
        out.printf(Locale.ROOT, "duplicates          %,d%n", replay.duplicates);
        out.printf(Locale.ROOT, "out of order        %,d%n", replay.outOfOrder);
        out.printf(Locale.ROOT, "unexpected          %,d%n", replay.unexpected);
        out.printf(Locale.ROOT, "pages               %d  (%d of %d chats each at most; %d re-requested after a quiet %d ms)%n",
                pages, REPLAY_PAGE, REPLAY_PAGE, stalls, PAGE_QUIET_NANOS / 1_000_000);
        if (received == n && replay.duplicates == 0 && replay.outOfOrder == 0) {
            out.printf(Locale.ROOT, "check               ok: every chat replayed exactly once, in seq order%n");
        }
        return finish(received == n && replay.duplicates == 0 && replay.outOfOrder == 0 && replay.unexpected == 0,
                2 + o.idle);
    }

    private ObjectNode mailboxHeartbeat(HubClient c, String identity, long since, boolean first) {
        ObjectNode hb = c.frame(identity, "heartbeat");
        hb.put("payload", "online");
        if (first && o.token != null) {
            hb.put("token", o.token);
        }
        hb.put("mailbox", true);
        hb.put("since_seq", since);
        return hb;
    }

    /** Leaves the backlog: a window of chats in flight, each stored seq read from the sender's own echo. */
    private final class MailboxFill {
        private final HubClient client;
        private final String name;
        private final String identity;
        private final int n;
        final long[] seqs;
        private int next;
        volatile int echoed;
        volatile boolean noJournal;

        MailboxFill(HubClient client, String name, String identity, int n) {
            this.client = client;
            this.name = name;
            this.identity = identity;
            this.n = n;
            this.seqs = new long[n];
        }

        boolean finished() {
            return echoed >= n || noJournal || errors.sum() > 0;
        }

        void start() {
            client.onFrame(this::onFrame);
            client.execute(() -> {
                for (int i = 0; i < MAILBOX_WINDOW; i++) {
                    sendNext();
                }
            });
        }

        private void sendNext() {
            if (next >= n || noJournal || stopping) {
                return;
            }
            ObjectNode chat = client.frame(name, "chat");
            chat.put("target", identity);
            chat.put("payload", "bench mailbox " + next);
            chat.put("bench_tag", measuredTag);
            chat.put("bench_seq", next++);
            client.sendAsync(chat);
        }

        private void onFrame(ObjectNode f) {
            String type = f.path("type").asText();
            if ("chat".equals(type) && name.equals(f.path("sender").asText())
                    && measuredTag.equals(f.path("bench_tag").asText())) {
                if (!f.path("seq").canConvertToLong() || !f.path("seq").isIntegralNumber()) {
                    noJournal = true;
                    return;
                }
                int index = f.path("bench_seq").asInt(-1);
                if (index >= 0 && index < n) {
                    seqs[index] = f.path("seq").asLong();
                    echoed = echoed + 1;
                    sendNext();
                }
            } else if ("error".equals(type)) {
                recordError(f);
            }
        }
    }

    /** The mailbox identity's side: every replayed bench chat checked against the stored seqs. */
    private final class Replay {
        private final long[] seqs;
        private final BitSet seen;
        private long lastSeq;
        volatile int received;
        volatile int firstMissing;
        volatile long lastArrival;
        volatile long doneAt;
        volatile long duplicates;
        volatile long outOfOrder;
        volatile long unexpected;
        volatile String refusal;

        Replay(long[] seqs) {
            this.seqs = seqs;
            this.seen = new BitSet(seqs.length);
        }

        void onFrame(ObjectNode f) {
            String type = f.path("type").asText();
            if ("auth_denied".equals(type) || "name_conflict".equals(type)) {
                refusal = f.path("payload").asText();
                return;
            }
            if (!"chat".equals(type) || !f.path("replayed").asBoolean() || !measuredTag.equals(f.path("bench_tag").asText())) {
                return;
            }
            long now = System.nanoTime();
            lastArrival = now;
            long seq = f.path("seq").asLong();
            int pos = Arrays.binarySearch(seqs, seq);
            if (pos < 0) {
                unexpected = unexpected + 1;
                return;
            }
            if (seen.get(pos)) {
                duplicates = duplicates + 1;
                return;
            }
            if (seq < lastSeq) {
                outOfOrder = outOfOrder + 1;
            }
            lastSeq = Math.max(lastSeq, seq);
            seen.set(pos);
            int fm = firstMissing;
            while (fm < seqs.length && seen.get(fm)) {
                fm++;
            }
            firstMissing = fm;
            if (received + 1 == seqs.length) {
                doneAt = now;
            }
            received = received + 1;
        }
    }

    // ------------------------------------------------------------------------------- common

    private String errorSuffix() {
        String first = firstError.get();
        return first == null ? "" : "  (first: " + first + ")";
    }

    private int finish(boolean ok, int wanted) {
        cpu.print(out);
        Runtime runtime = Runtime.getRuntime();
        out.printf(Locale.ROOT, "bench heap used     %,d MiB%n", (runtime.totalMemory() - runtime.freeMemory()) >> 20);
        out.flush();
        connections.printHints(err, wanted);
        return ok ? ExitCodes.OK : ExitCodes.REFUSED;
    }
}
