package dev.synapsehub.journal;

import dev.synapsehub.core.Clock;
import dev.synapsehub.core.actor.Idempotency;
import dev.synapsehub.core.actor.Mutation;
import dev.synapsehub.core.actor.Outcome;
import dev.synapsehub.core.actor.ResponseRenderer;
import dev.synapsehub.core.claim.Claim;
import dev.synapsehub.core.command.ClaimCommand;
import dev.synapsehub.core.journal.Journal;
import dev.synapsehub.core.journal.JournalException;
import dev.synapsehub.core.journal.JournaledEvent;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.reply.Reply;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/** Shared helpers for the journal tests. */
final class Fixtures {
    private Fixtures() {
    }

    /** A clock the test moves by hand. */
    static final class ManualClock implements Clock {
        private volatile double now;

        ManualClock(double start) {
            this.now = start;
        }

        @Override
        public double nowSeconds() {
            return now;
        }

        void advance(double seconds) {
            now += seconds;
        }

        void set(double t) {
            now = t;
        }
    }

    /** Renders a reply the way a wire layer would: enough to be compared byte for byte. */
    static final ResponseRenderer RENDERER = (reply, at) -> {
        if (reply instanceof Reply.Granted g) {
            Claim c = g.claim();
            return String.format(Locale.ROOT, "{\"type\":\"claim_ok\",\"task_id\":\"%s\",\"owner\":\"%s\",\"epoch\":%d,"
                    + "\"version\":%d,\"at\":%s}", c.taskId(), c.owner(), c.epoch(), c.version(), Double.toString(at));
        }
        return "{\"type\":\"denied\"}";
    };

    static String sha256(String s) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8)));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** A keyed claim: key namespaced by sender and verb, digest over the request's content. */
    static Mutation keyedClaim(String agent, String task, String rawKey) {
        ClaimCommand command = claim(agent, task, null);
        return new Mutation(command, new Idempotency(Idempotency.key(agent, "claim", rawKey),
                sha256("claim|" + agent + "|" + task), RENDERER));
    }

    /** A claim in its own worktree (named after the task), so tasks never contend by scope. */
    static ClaimCommand claim(String agent, String task, Double ttl) {
        return new ClaimCommand(agent, agent, task, "", ttl, "wt-" + task, List.of(), null);
    }

    static Mutation claimOf(String agent, String task) {
        return Mutation.of(claim(agent, task, null));
    }

    static <T> T await(CompletableFuture<T> future) {
        try {
            return future.get(20, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new AssertionError("future did not complete", e);
        }
    }

    static Reply.Granted granted(Outcome outcome) {
        if (outcome instanceof Outcome.Decided d && d.reply() instanceof Reply.Granted g) {
            return g;
        }
        throw new AssertionError("expected a grant, got " + outcome);
    }

    /** A journal that delegates, with switches to fail or to hold appends on a gate. */
    static final class ControlledJournal implements Journal {
        final Journal delegate;
        volatile boolean fail;
        volatile java.util.concurrent.CountDownLatch gate;
        final java.util.concurrent.CountDownLatch entered = new java.util.concurrent.CountDownLatch(1);
        volatile boolean appendInFlight;

        ControlledJournal(Journal delegate) {
            this.delegate = delegate;
        }

        @Override
        public List<JournaledEvent> append(List<CoordinationEvent> batch) throws JournalException {
            appendInFlight = true;
            try {
                java.util.concurrent.CountDownLatch g = gate;
                if (g != null) {
                    entered.countDown();
                    g.await();
                }
                if (fail) {
                    throw new JournalException("injected append failure");
                }
                return delegate.append(batch);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new JournalException("interrupted", e);
            } finally {
                appendInFlight = false;
            }
        }

        @Override
        public void replay(Consumer<JournaledEvent> sink) throws JournalException {
            delegate.replay(sink);
        }

        @Override
        public long lastSeq() {
            return delegate.lastSeq();
        }

        @Override
        public void close() throws JournalException {
            if (appendInFlight) {
                throw new AssertionError("journal closed under an in-flight append (INV-JA-3)");
            }
            delegate.close();
        }
    }
}
