package dev.synapsehub.core.claim;

import dev.synapsehub.core.undo.UndoLog;
import dev.synapsehub.core.command.CheckpointCommand;
import dev.synapsehub.core.command.ClaimCommand;
import dev.synapsehub.core.command.Command;
import dev.synapsehub.core.command.HandoffCommand;
import dev.synapsehub.core.command.ReleaseCommand;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.reply.Refusal;
import dev.synapsehub.core.reply.Reply;
import dev.synapsehub.core.state.StateImage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Pins INV-LL-2 when most live leases fall due at once but not all of them: the registry then
 * rebuilds its indexes around the survivors instead of unlinking each expired lease, and the
 * outcome must be exactly that of expiring them one at a time (same live claims, charges,
 * scopes, retained checkpoints in the same order, counters), which a twin registry advanced in
 * small steps shows.
 */
class PartialMassExpiryTest {
    private static final int CLAIMS = 5_000;
    /** Claims are made over [0, 2500); every expiring lease is due by 9,530 s. */
    private static final double LATE = 10_000;
    private static final int RETAINED = 300;
    private static final RegistryLimits LIMITS = new RegistryLimits(3600, 100_000,
            RegistryLimits.DEFAULTS.maxDeclaredPaths(), RETAINED);

    /**
     * The same history every time: claims in five shared worktrees with spread expiries, one in
     * {@code surviveEvery} outliving {@link #LATE}; checkpoints (more than the retention bound
     * expire), renewals (stale heap entries, some of them outliving LATE), releases and handoffs.
     */
    private static ClaimRegistry populate(int surviveEvery) {
        return populate(surviveEvery, new UndoLog());
    }

    private static ClaimRegistry populate(int surviveEvery, UndoLog undo) {
        ClaimRegistry r = new ClaimRegistry(LIMITS, undo);
        for (int i = 0; i < CLAIMS; i++) {
            double t = i * 0.5;
            String agent = "agent-" + (i % 300);
            String task = "task-" + i;
            double ttl = i % surviveEvery == 0 ? 100_000 : 30 + (i * 7919L % CLAIMS) * (7000.0 / CLAIMS);
            List<String> paths = i % 13 == 0
                    ? List.of("pkg" + (i % 37) + "/mod" + i + "/F.java", "docs/d" + i + ".md")
                    : List.of("pkg" + (i % 37) + "/mod" + i + "/F.java");
            grant(r, new ClaimCommand(agent, "p-" + (i % 40), task, null, ttl, "wt-" + (i % 5), paths, null), t);
            if (i % 3 == 0) {
                grant(r, new CheckpointCommand(agent, task, "cp-" + i, null), t);
            }
            if (i % 7 == 0) {
                grant(r, new ClaimCommand(agent, "p-" + (i % 40), task, null, ttl, "wt-" + (i % 5), paths, null),
                        t + 0.25);
            } else if (i % 11 == 0) {
                grant(r, new ReleaseCommand(agent, task, null), t + 0.25);
            } else if (i % 17 == 0 && i % surviveEvery != 0) {
                grant(r, new HandoffCommand(agent, task, "heir-" + (i % 50), true, null, null, null), t + 0.25);
            }
        }
        return r;
    }

    private static void grant(ClaimRegistry r, Command command, double t) {
        Decision d = r.decide(command, t);
        assertThat(d.reply()).as("%s", command).isInstanceOf(Reply.Granted.class);
        for (CoordinationEvent e : d.events()) {
            r.apply(e);
        }
    }

    /** Advances in one-second steps: each finds a handful of leases due and expires them one by one. */
    private static void step(ClaimRegistry r, double from, double to) {
        for (double t = from; t < to; t += 1.0) {
            r.advanceTo(t);
        }
        r.advanceTo(to);
    }

    /** The count {@code /health} reads expires first, exactly as the sorted read it replaced did. */
    @Test
    void aCountAtAnInstantExpiresFirstAndEqualsTheSizeOfTheSortedRead() {
        ClaimRegistry counted = populate(7);
        ClaimRegistry listed = populate(7);
        int before = counted.liveCount();
        for (double at : new double[] {2_600, 5_000, LATE}) {
            assertThat(counted.liveCount(at)).isEqualTo(listed.snapshot(at).size());
            assertThat(counted.liveCount()).isEqualTo(listed.liveCount());
        }
        assertThat(counted.liveCount()).isLessThan(before).isPositive();
    }

    /** The unsorted read scoped delivery's seed takes expires first and holds what the sorted read holds. */
    @Test
    void anUnsortedReadAtAnInstantExpiresFirstAndHoldsTheSortedReadsClaims() {
        ClaimRegistry unsorted = populate(7);
        ClaimRegistry sorted = populate(7);
        int before = unsorted.liveCount();
        for (double at : new double[] {2_600, 5_000, LATE}) {
            List<Claim> read = unsorted.liveAt(at);
            assertThat(read).containsExactlyInAnyOrderElementsOf(sorted.snapshot(at));
            assertThat(unsorted.image()).isEqualTo(sorted.image());
        }
        assertThat(unsorted.liveCount()).isLessThan(before).isPositive();
    }

    @ParameterizedTest(name = "one lease in {0} survives")
    @ValueSource(ints = {100, 3, 2})
    void expiringMostLeasesAtOnceEndsExactlyAsExpiringThemOneByOne(int surviveEvery) {
        ClaimRegistry oneShot = populate(surviveEvery);
        ClaimRegistry stepped = populate(surviveEvery);
        StateImage.Claims before = oneShot.image();
        assertThat(before).isEqualTo(stepped.image());

        oneShot.advanceTo(LATE);
        step(stepped, 2500, LATE);

        StateImage.Claims after = oneShot.image();
        assertThat(after).isEqualTo(stepped.image());
        // independently of the twin: the survivors are exactly the leases after LATE, ...
        List<StateImage.Held> survivors = before.live().stream()
                .filter(h -> h.claim().leaseExpiresAt() > LATE).toList();
        assertThat(after.live()).isEqualTo(survivors);
        // ... each principal is charged for its survivors only, ...
        Map<String, Integer> charges = new HashMap<>();
        survivors.forEach(h -> charges.merge(h.claim().principal(), 1, Integer::sum));
        for (int p = 0; p < 40; p++) {
            assertThat(oneShot.charged("p-" + p)).as("p-%d", p).isEqualTo(charges.getOrDefault("p-" + p, 0));
        }
        for (int h = 0; h < 50; h++) {
            assertThat(oneShot.charged("heir-" + h)).isEqualTo(charges.getOrDefault("heir-" + h, 0));
        }
        // ... and the expired checkpoints are retained in expiry order, then claim order, the
        // oldest dropped beyond the bound
        List<StateImage.Retained> retained = new ArrayList<>(before.retained());
        before.live().stream()
                .filter(h -> h.claim().leaseExpiresAt() <= LATE && !h.claim().checkpoint().isEmpty())
                .sorted(Comparator.comparingDouble((StateImage.Held h) -> h.claim().leaseExpiresAt())
                        .thenComparingLong(StateImage.Held::order))
                .forEach(h -> {
                    retained.removeIf(k -> k.taskId().equals(h.claim().taskId()));
                    retained.add(new StateImage.Retained(h.claim().taskId(), h.claim().checkpoint()));
                });
        assertThat(after.retained()).isEqualTo(retained.subList(Math.max(0, retained.size() - RETAINED), retained.size()));
        if (surviveEvery == 100) {
            assertThat(before.retained().size() + before.live().size() - survivors.size()).isGreaterThan(RETAINED);
            // the bulk path ran: it rebuilt the heap from the survivors, while the twin still
            // holds the stale entries of renewed survivors
            assertThat(oneShot.expiryQueueSize()).isEqualTo(oneShot.liveCount());
            assertThat(stepped.expiryQueueSize()).isGreaterThan(stepped.liveCount());
        }
        scopesAndLaterExpiryAgree(oneShot, stepped, before, survivors);
    }

    /** Every expired lease's scope is free for another agent, every survivor's still conflicts, and later expiry works. */
    private static void scopesAndLaterExpiryAgree(ClaimRegistry oneShot, ClaimRegistry stepped,
                                                  StateImage.Claims before, List<StateImage.Held> survivors) {
        java.util.Set<String> surviving = new java.util.HashSet<>();
        survivors.forEach(h -> surviving.add(h.claim().taskId()));
        int probe = 0;
        for (StateImage.Held h : before.live()) {
            if (probe++ % 7 != 0) {
                continue;
            }
            Claim c = h.claim();
            ClaimCommand intruder = new ClaimCommand("intruder", "intruder", "probe-" + c.taskId(), null, null,
                    c.worktree(), c.paths(), null);
            for (ClaimRegistry r : List.of(oneShot, stepped)) {
                Reply reply = r.decide(intruder, LATE).reply(); // decided, not applied
                if (surviving.contains(c.taskId())) {
                    assertThat(reply).isInstanceOf(Reply.Denied.class);
                    assertThat(((Reply.Denied) reply).refusal()).isEqualTo(Refusal.SCOPE_CONFLICT);
                    assertThat(((Reply.Denied) reply).conflictingTask()).isEqualTo(c.taskId());
                } else {
                    assertThat(reply).as(c.taskId()).isInstanceOf(Reply.Granted.class);
                }
            }
        }
        // new claims and releases after the bulk expiry, then everything lapses
        for (ClaimRegistry r : List.of(oneShot, stepped)) {
            grant(r, new ClaimCommand("late", "late", "late-1", null, 60.0, "wt-0", List.of("pkg0/late"), null), LATE + 1);
            grant(r, new ReleaseCommand(survivors.get(0).claim().owner(), survivors.get(0).claim().taskId(), null),
                    LATE + 2);
            r.advanceTo(LATE + 30);
        }
        assertThat(oneShot.image()).isEqualTo(stepped.image());
        assertThat(oneShot.liveCount()).isEqualTo(survivors.size()); // late-1 in, one survivor out
        oneShot.advanceTo(LATE + 200_000);
        stepped.advanceTo(LATE + 200_000);
        assertThat(oneShot.image()).isEqualTo(stepped.image());
        assertThat(oneShot.liveCount()).isZero();
    }

    @Test
    void aBulkExpiryInsideABatchIsKeptWhenTheBatchRollsBack() {
        UndoLog undo = new UndoLog();
        ClaimRegistry batched = populate(100, undo);
        ClaimRegistry stepped = populate(100);
        undo.begin();
        // deciding at LATE expires 99 % of the leases before the claim is applied
        grant(batched, new ClaimCommand("late", "late", "late-1", null, null, "wt-0", List.of("pkg0/late"), null), LATE);
        assertThat(batched.expiryQueueSize()).isEqualTo(batched.liveCount());
        undo.rollback();
        step(stepped, 2500, LATE);
        // expiry is a function of time and is not undone; the claim is
        assertThat(batched.image()).isEqualTo(stepped.image());
        assertThat(batched.liveClaim("late-1", LATE)).isEmpty();
    }

    @ParameterizedTest(name = "{0} of 200 due: bulk {1}")
    @CsvSource({"150, true", "100, false", "60, false"})
    void theBulkPathTakesOverOnlyWhenMostLiveLeasesAreStillDueAfterTheFirstFew(int due, boolean bulk) {
        ClaimRegistry r = new ClaimRegistry(LIMITS);
        for (int i = 0; i < 200; i++) {
            ttlClaim(r, "t" + i, i < due ? 100 : 1000, 0);
        }
        ttlClaim(r, "t199", 1000, 1); // a renewed survivor: its first entry stays in the heap, stale
        assertThat(r.expiryQueueSize()).isEqualTo(201);
        r.advanceTo(100.5);
        assertThat(r.liveCount()).isEqualTo(200 - due);
        assertThat(r.charged("p")).isEqualTo(200 - due);
        for (int i = 0; i < 200; i++) {
            assertThat(r.liveClaim("t" + i, 100.5).isPresent()).as("t%d", i).isEqualTo(i >= due);
        }
        // after the first 64 one by one, 86 due against 50 survivors: rebuilt from the survivors,
        // so the stale entry is gone; 36 against 100, or no scan at all: one by one, and it stays
        assertThat(r.expiryQueueSize()).isEqualTo(bulk ? 200 - due : 200 - due + 1);
    }

    private static void ttlClaim(ClaimRegistry r, String task, double ttl, double t) {
        grant(r, new ClaimCommand("a-" + task, "p", task, null, ttl, "wt-" + task, List.of(), null), t);
    }
}
