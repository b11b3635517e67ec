package dev.synapsehub.journal;

import dev.synapsehub.core.actor.ActorSettings;
import dev.synapsehub.core.actor.Idempotency;
import dev.synapsehub.core.actor.Mutation;
import dev.synapsehub.core.actor.Outcome;
import dev.synapsehub.core.claim.Claim;
import dev.synapsehub.core.claim.ClaimStatus;
import dev.synapsehub.core.claim.RegistryLimits;
import dev.synapsehub.core.command.CheckpointCommand;
import dev.synapsehub.core.command.HandoffCommand;
import dev.synapsehub.core.command.ReleaseCommand;
import dev.synapsehub.core.command.TaskUpdateCommand;
import dev.synapsehub.core.event.ClaimDeniedEvent;
import dev.synapsehub.core.journal.JournaledEvent;
import dev.synapsehub.core.reply.Reply;
import dev.synapsehub.core.state.CoordinationState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

import static dev.synapsehub.journal.Fixtures.await;
import static dev.synapsehub.journal.Fixtures.granted;
import static org.assertj.core.api.Assertions.assertThat;

/** INV-RR-1..3 and INV-CR-1/INV-DG-2 across close, reopen and replay with the SQLite journal. */
class RestartReplayTest {
    @TempDir
    Path dir;

    private final Fixtures.ManualClock clock = new Fixtures.ManualClock(1_000);

    private DurableCoordination open(RegistryLimits limits, int idemCapacity) throws Exception {
        return DurableCoordination.open(dir.resolve("hub.db"), clock,
                () -> new CoordinationState(limits, idemCapacity), ActorSettings.DEFAULTS);
    }

    private DurableCoordination open() throws Exception {
        return open(RegistryLimits.DEFAULTS, 100);
    }

    private static <T> T read(DurableCoordination hub, Function<CoordinationState, T> query) {
        return await(hub.actor().read(query));
    }

    private static Outcome submit(DurableCoordination hub, Mutation m) {
        return await(hub.actor().submit(m));
    }

    @Test
    void invRr1_replayRebuildsClaimsLifecycleCheckpointsEpochsAndLedgerThenExpires() throws Exception {
        DurableCoordination hub = open();
        granted(submit(hub, Fixtures.claimOf("alice", "t1")));
        granted(submit(hub, Mutation.of(new TaskUpdateCommand("alice", "t1", "working", "n1", "ref-1", null, null))));
        granted(submit(hub, Mutation.of(new TaskUpdateCommand("alice", "t1", null, "n2", null, null, 1L))));
        granted(submit(hub, Mutation.of(Fixtures.claim("bob", "t2", 30.0))));
        granted(submit(hub, Mutation.of(new CheckpointCommand("bob", "t2", "ck-bob", null))));
        granted(submit(hub, Fixtures.claimOf("carol", "t3")));
        granted(submit(hub, Mutation.of(new CheckpointCommand("carol", "t3", "ck-carol", null))));
        granted(submit(hub, Fixtures.claimOf("dave", "t4")));
        granted(submit(hub, Mutation.of(new ReleaseCommand("dave", "t4", null))));
        granted(submit(hub, Fixtures.keyedClaim("erin", "t5", "k5")));
        granted(submit(hub, Fixtures.claimOf("alice", "t6")));
        granted(submit(hub, Mutation.of(new HandoffCommand("alice", "t6", "frank", true, "frank", "yours", null))));
        List<Claim> before = read(hub, s -> s.claims().snapshot(clock.nowSeconds()));
        long epochs = read(hub, s -> s.claims().epochCounter());
        Map<String, ?> ledger = read(hub, s -> s.idempotency().view());
        hub.actor().close();

        clock.advance(60); // t2's 30 s lease is past due at restart
        hub = open();
        try {
            assertThat(hub.replay().clean()).isTrue();
            List<Claim> after = read(hub, s -> s.claims().snapshot(clock.nowSeconds()));
            List<Claim> expected = new ArrayList<>(before);
            expected.removeIf(c -> c.taskId().equals("t2"));
            assertThat(after).isEqualTo(expected);
            Claim t1 = after.get(0);
            assertThat(t1.status()).isEqualTo(ClaimStatus.WORKING);
            assertThat(t1.note()).isEqualTo("n2");
            assertThat(t1.dataRef()).isEqualTo("ref-1");
            assertThat(t1.version()).as("version survives restart").isEqualTo(2);
            assertThat(after).filteredOn(c -> c.taskId().equals("t3")).extracting(Claim::checkpoint).containsExactly("ck-carol");
            assertThat(after).filteredOn(c -> c.taskId().equals("t6")).extracting(Claim::owner).containsExactly("frank");
            assertThat(RestartReplayTest.<Optional<String>>read(hub, s -> s.claims().retainedCheckpoint("t2"))).contains("ck-bob");
            assertThat(RestartReplayTest.<Long>read(hub, s -> s.claims().epochCounter())).isEqualTo(epochs);
            assertThat(RestartReplayTest.<Map<String, ?>>read(hub, s -> s.idempotency().view())).isEqualTo(ledger);
            Claim resumed = granted(submit(hub, Fixtures.claimOf("zoe", "t2"))).claim();
            assertThat(resumed.checkpoint()).as("expired lease resumes from its checkpoint").isEqualTo("ck-bob");
            assertThat(resumed.epoch()).isEqualTo(epochs + 1);
        } finally {
            hub.actor().close();
        }
    }

    @Test
    void invRr2_replayReappliesTheLedgerAndCheckpointBounds() throws Exception {
        RegistryLimits limits = new RegistryLimits(RegistryLimits.DEFAULTS.defaultTtlSeconds(), 128, 512, 2);
        DurableCoordination hub = open(limits, 5);
        for (int i = 0; i < 12; i++) {
            granted(submit(hub, Fixtures.keyedClaim("alice", "task-" + i, "key-" + i)));
        }
        for (int i = 0; i < 4; i++) {
            granted(submit(hub, Mutation.of(Fixtures.claim("bob", "short-" + i, 30.0))));
            granted(submit(hub, Mutation.of(new CheckpointCommand("bob", "short-" + i, "ck-" + i, null))));
        }
        Map<String, ?> ledger = read(hub, s -> s.idempotency().view());
        assertThat(ledger).hasSize(5);
        hub.actor().close();

        clock.advance(60);
        hub = open(limits, 5);
        try {
            Map<String, ?> replayed = read(hub, s -> s.idempotency().view());
            assertThat(replayed).hasSize(5).isEqualTo(ledger);
            assertThat(replayed.keySet()).allMatch(k -> k.matches("alice\0claim\0key-(7|8|9|10|11)"));
            long retained = read(hub, s -> java.util.stream.IntStream.range(0, 4)
                    .filter(i -> s.claims().retainedCheckpoint("short-" + i).isPresent()).count());
            assertThat(retained).isEqualTo(2);
        } finally {
            hub.actor().close();
        }
    }

    @Test
    void invRr3_claimDenialsAreJournaledContentMinimisedAndReplayAsAuditOnly() throws Exception {
        DurableCoordination hub = open();
        granted(submit(hub, Fixtures.claimOf("alice", "secret-task-42")));
        Outcome denied = submit(hub, Fixtures.claimOf("bob", "secret-task-42"));
        assertThat(denied).isInstanceOf(Outcome.Decided.class);
        Outcome.Decided d = (Outcome.Decided) denied;
        assertThat(d.reply()).isInstanceOf(Reply.Denied.class);
        assertThat(d.committed()).extracting(JournaledEvent::event).hasOnlyElementsOfType(ClaimDeniedEvent.class);
        granted(submit(hub, Mutation.of(new ReleaseCommand("alice", "secret-task-42", null))));
        hub.actor().close();

        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + dir.resolve("hub.db"));
             Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT payload FROM events WHERE kind = 'claim_denial'")) {
            assertThat(rs.next()).isTrue();
            String payload = rs.getString(1);
            assertThat(payload).doesNotContain("secret-task-42").contains("\"task_id_sha256\":\""
                    + Fixtures.sha256("secret-task-42") + "\"").contains("\"reason_code\":\"LEASE_LIVE\"");
        }
        hub = open();
        try {
            assertThat(RestartReplayTest.<Optional<Claim>>read(hub, s -> s.claims().liveClaim("secret-task-42", clock.nowSeconds()))).isEmpty();
            assertThat(RestartReplayTest.<Integer>read(hub, s -> s.claims().charged("bob"))).isZero();
            assertThat(RestartReplayTest.<Integer>read(hub, s -> s.claims().liveCount())).isZero();
        } finally {
            hub.actor().close();
        }
    }

    @Test
    void invCr1_keyedMutationsApplyOnceAcrossRestartNamespacedBySenderAndVerb() throws Exception {
        DurableCoordination hub = open();
        Outcome first = submit(hub, Fixtures.keyedClaim("alice", "t1", "k1"));
        Outcome.Decided decided = (Outcome.Decided) first;
        String response = decided.storedResponse();
        assertThat(response).isNotNull();
        assertThat(decided.committed()).extracting(e -> e.event().kind()).containsExactly("claim", "idempotency");
        assertThat(decided.committed().get(1).seq()).isEqualTo(decided.committed().get(0).seq() + 1);
        long seq = hub.journal().lastSeq();

        assertThat(submit(hub, Fixtures.keyedClaim("alice", "t1", "k1"))).isEqualTo(new Outcome.Replayed(response));
        assertThat(hub.journal().lastSeq()).as("a duplicate mutates nothing").isEqualTo(seq);
        Mutation different = new Mutation(Fixtures.claim("alice", "t9", null),
                new Idempotency(Idempotency.key("alice", "claim", "k1"), "another-digest", Fixtures.RENDERER));
        assertThat(submit(hub, different)).isInstanceOf(Outcome.IdempotencyConflict.class);
        assertThat(RestartReplayTest.<Optional<Claim>>read(hub, s -> s.claims().liveClaim("t9", clock.nowSeconds()))).isEmpty();
        // namespaced by sender: bob's k1 is another key
        granted(submit(hub, Fixtures.keyedClaim("bob", "t2", "k1")));
        // namespaced by verb: alice's release k1 is another key
        Mutation release = new Mutation(new ReleaseCommand("alice", "t1", null),
                new Idempotency(Idempotency.key("alice", "release", "k1"), "release-digest", Fixtures.RENDERER));
        granted(submit(hub, release));
        // a denied keyed request is not remembered and may be retried
        Outcome refused = submit(hub, Fixtures.keyedClaim("carol", "t2", "kc"));
        assertThat(((Outcome.Decided) refused).reply().granted()).isFalse();
        hub.actor().close();

        hub = open();
        try {
            assertThat(submit(hub, Fixtures.keyedClaim("alice", "t1", "k1")))
                    .as("the first response replays after restart, though t1 was released since")
                    .isEqualTo(new Outcome.Replayed(response));
            assertThat(RestartReplayTest.<Optional<Claim>>read(hub, s -> s.claims().liveClaim("t1", clock.nowSeconds()))).isEmpty();
            assertThat(submit(hub, different)).isInstanceOf(Outcome.IdempotencyConflict.class);
            Optional<Claim> t2 = read(hub, s -> s.claims().liveClaim("t2", clock.nowSeconds()));
            assertThat(t2).get().extracting(Claim::owner).isEqualTo("bob");
            granted(submit(hub, Mutation.of(new ReleaseCommand("bob", "t2", null))));
            granted(submit(hub, Fixtures.keyedClaim("carol", "t2", "kc")));
        } finally {
            hub.actor().close();
        }
    }

}
