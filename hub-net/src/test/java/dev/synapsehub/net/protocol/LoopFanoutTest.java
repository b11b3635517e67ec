package dev.synapsehub.net.protocol;

import dev.synapsehub.net.session.Session;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.DefaultEventLoop;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/** Broadcast batches reach every member once, in order, requesters first, with members coming and going. */
class LoopFanoutTest {
    private final DefaultEventLoop loop = new DefaultEventLoop();
    private final Set<Session> muted = new HashSet<>();
    private final Set<Session> closing = new HashSet<>();
    /** Runs when the drain visits a member (as a slow reader's close would be triggered). */
    private volatile java.util.function.Consumer<Session> onVisit = s -> { };
    private final AtomicLong backlog = new AtomicLong();
    private final LoopFanout fanout = new LoopFanout(loop, 0, s -> {
        onVisit.accept(s);
        return !muted.contains(s) && !closing.contains(s);
    }, s -> !muted.contains(s), backlog);
    private long ids;

    @AfterEach
    void stop() {
        loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }

    @Test
    void everyMemberGetsEveryBatchOnceInOrderWhileMembersComeAndGo() throws Exception {
        List<Session> members = onLoop(() -> join(600));
        onLoop(() -> {
            fanout.accept(frame("b1"), List.of());
            return null;
        });
        // between drain chunks: a batch arrives, early and late members leave, newcomers join
        List<Session> newcomers = onLoop(() -> {
            fanout.accept(frame("b2"), List.of());
            fanout.leave(members.get(0));
            fanout.leave(members.get(599));
            fanout.leave(members.get(300));
            return join(3);
        });
        onLoop(() -> {
            fanout.accept(frame("b3"), List.of());
            return null;
        });
        awaitDrained();
        for (int i = 0; i < members.size(); i++) {
            List<String> got = received(members.get(i));
            if (i == 0 || i == 599 || i == 300) {
                assertThat(got).as("member %d left", i).isSubsetOf("b1", "b2").doesNotHaveDuplicates();
            } else {
                assertThat(got).as("member %d", i).containsExactly("b1", "b2", "b3");
            }
        }
        for (Session s : newcomers) {
            assertThat(received(s)).containsExactly("b3");
        }
        assertThat(onLoop(fanout::pendingBatches)).isZero();
        assertThat(backlog).as("every queued byte was released").hasValue(0);
    }

    @Test
    void theRequesterIsServedBeforeTheRestOfItsLoop() throws Exception {
        List<Session> members = onLoop(() -> join(600));
        Session requester = members.get(599);
        List<List<String>> seenInTheSameTask = onLoop(() -> {
            fanout.accept(frame("granted"), List.of(requester));
            return List.of(received(requester), received(members.get(500)));
        });
        assertThat(seenInTheSameTask.get(0)).containsExactly("granted");
        assertThat(seenInTheSameTask.get(1)).as("beyond the first drain chunk").isEmpty();
        awaitDrained();
        assertThat(received(members.get(500))).containsExactly("granted");
        assertThat(received(requester)).isEmpty(); // not twice
    }

    @Test
    void aRequesterWaitsBehindAtMostOneShortTaskWhenMembersAreOwedABacklog() throws Exception {
        // 200 members owed 100 batches each (a pass behind a backlog): the requester's batch,
        // queued at the drain's first visit, must not wait for 128 members' 12,800 writes
        int owed = 100;
        Set<Session> visited = ConcurrentHashMap.newKeySet();
        AtomicInteger visitedBeforeReply = new AtomicInteger(-1);
        List<Session> members = new ArrayList<>();
        LoopFanout[] self = new LoopFanout[1];
        self[0] = new LoopFanout(loop, 0, s -> {
            if (s != members.get(0) && visited.add(s) && visited.size() == 1) {
                loop.execute(() -> {
                    visitedBeforeReply.set(visited.size());
                    self[0].accept(frame("granted"), List.of(members.get(0)));
                });
            }
            return true;
        }, s -> true, new AtomicLong());
        members.addAll(onLoop(() -> join(self[0], 200, new ConcurrentHashMap<>())));
        onLoop(() -> {
            for (int i = 0; i < owed; i++) {
                self[0].accept(frame("b" + i), List.of());
            }
            return null;
        });
        awaitDrained(self[0]);
        assertThat(visitedBeforeReply.get()).as("members written before the requester's batch was")
                .isPositive().isLessThanOrEqualTo(LoopFanout.WRITES_PER_TASK / owed + 1);
        List<String> requester = onLoop(() -> received(members.get(0)));
        assertThat(requester).hasSize(owed + 1).endsWith("granted");
        List<String> last = onLoop(() -> received(members.get(199)));
        assertThat(last).as("every member still gets every batch once, in order").hasSize(owed + 1)
                .startsWith("b0", "b1").endsWith("granted");
    }

    @Test
    void theOldestBatchCountsAsWaitingFromItsHandOverUntilEveryMemberOfTheLoopHasIt() throws Exception {
        AtomicLong queued = new AtomicLong();
        List<Long> seenAtVisits = new CopyOnWriteArrayList<>();
        Session[] visiting = new Session[1];
        LoopFanout[] self = new LoopFanout[1];
        // 300 members: three drain tasks of 128 visits; "b3", handed over at the 6th visit, is
        // taken in between the first two tasks (as in the test of a batch during a pass)
        self[0] = new LoopFanout(loop, 0, s -> {
            if (s != visiting[0]) { // asked once per visit, and again before each further batch
                visiting[0] = s;
                seenAtVisits.add(self[0].oldestPublishedAt());
                if (seenAtVisits.size() == 6) {
                    handOver(self[0], "b3", 5_000, queued);
                }
            }
            return true;
        }, s -> true, queued);
        List<Session> members = onLoop(() -> join(self[0], 300, new ConcurrentHashMap<>()));
        assertThat(self[0].oldestPublishedAt()).isEqualTo(LoopFanout.NONE_PENDING);

        // the loop is held (a long task): handed-over batches wait in its task queue, not yet accepted
        CountDownLatch release = holdLoop();
        handOver(self[0], "b1", 1_000, queued);
        handOver(self[0], "b2", 2_000, queued);
        assertThat(self[0].oldestPublishedAt()).as("waiting from the hand-over, before the loop takes it").isEqualTo(1_000);
        // a hand-over the loop refuses (shutting down) does not count
        self[0].handOver(3_000, true);
        self[0].handOverRefused();
        assertThat(self[0].oldestPublishedAt()).isEqualTo(1_000);
        release.countDown();
        awaitDrained(self[0]);

        // the first pass: b1 waits until its last member has it; the second: b3 waits for the
        // 128 members visited before it came
        assertThat(seenAtVisits).hasSize(300 + 128);
        assertThat(seenAtVisits.subList(0, 300)).containsOnly(1_000L);
        assertThat(seenAtVisits.subList(300, 428)).containsOnly(5_000L);
        assertThat(self[0].oldestPublishedAt()).isEqualTo(LoopFanout.NONE_PENDING);
        for (Session s : members) {
            assertThat(onLoop(() -> received(s))).containsExactly("b1", "b2", "b3");
        }
        assertThat(queued).hasValue(0);
    }

    @Test
    void theWritesOwedCountEachWaitingBatchOncePerMemberItIsForFromItsHandOverUntilThePassEnds() throws Exception {
        AtomicLong queued = new AtomicLong();
        List<Long> owedAtVisits = new CopyOnWriteArrayList<>();
        LoopFanout[] self = new LoopFanout[1];
        self[0] = new LoopFanout(loop, 0, s -> {
            owedAtVisits.add(self[0].writesOwed());
            return true;
        }, s -> true, queued);
        Map<Session, AtomicInteger> flushes = new ConcurrentHashMap<>();
        List<Session> loudOnes = onLoop(() -> join(self[0], 3, flushes));
        Session quietOne = onLoop(() -> {
            Session s = join(self[0], 1, flushes).get(0);
            self[0].quiet(s, true);
            return s;
        });
        assertThat(self[0].writesOwed()).isZero();

        CountDownLatch release = holdLoop();
        handOver(self[0], "b1", 1_000, queued);
        handOver(self[0], "b2", 2_000, queued);
        // handed over, not yet taken in: each will cost a write to each of the 4 members
        assertThat(self[0].writesOwed()).isEqualTo(8);
        release.countDown();
        awaitDrained(self[0]);
        // during the pass (asked at each member, and again between its two batches) both batches
        // still count for every member: an upper bound until the pass ends
        assertThat(owedAtVisits).hasSize(4 * 2).containsOnly(8L);
        assertThat(self[0].writesOwed()).isZero();

        // a batch for the loud members only costs nothing for the quiet one
        owedAtVisits.clear();
        assertThat(onLoop(() -> {
            self[0].accept(frame("loud"), List.of(), System.nanoTime(), new BacklogShare(queued, 4, 1), false);
            return self[0].writesOwed();
        })).isEqualTo(3);
        awaitDrained(self[0]);
        assertThat(owedAtVisits).containsOnly(3L).hasSize(3);
        assertThat(self[0].writesOwed()).isZero();
        for (Session s : loudOnes) {
            assertThat(onLoop(() -> received(s))).containsExactly("b1", "b2", "loud");
        }
        assertThat(onLoop(() -> received(quietOne))).containsExactly("b1", "b2");

        // handed over for the loud members only: it will cost a write to each of the 3 loud ones
        CountDownLatch release2 = holdLoop();
        handOver(self[0], "loud2", 3_000, queued, false);
        assertThat(self[0].writesOwed()).as("a loud-only hand-over costs nothing for the quiet member").isEqualTo(3);
        handOver(self[0], "b3", 4_000, queued, true);
        assertThat(self[0].writesOwed()).isEqualTo(3 + 4);
        release2.countDown();
        awaitDrained(self[0]);
        assertThat(self[0].writesOwed()).isZero();
        for (Session s : loudOnes) {
            assertThat(onLoop(() -> received(s))).containsExactly("loud2", "b3");
        }
        assertThat(onLoop(() -> received(quietOne))).containsExactly("b3");
    }

    @Test
    void aHandOverWhoseAcceptFailsIsForgottenAndTheLoopIsNotBehindForGood() throws Exception {
        AtomicLong queued = new AtomicLong();
        Session[] failing = new Session[1];
        AtomicBoolean armed = new AtomicBoolean(true);
        LoopFanout[] self = new LoopFanout[1];
        self[0] = new LoopFanout(loop, 0, s -> {
            if (s == failing[0] && armed.getAndSet(false)) { // once: serving the requester fails
                throw new IllegalStateException("a failure while the requester is served");
            }
            return true;
        }, s -> true, queued);
        List<Session> members = onLoop(() -> join(self[0], 2, new ConcurrentHashMap<>()));
        failing[0] = members.get(0);
        self[0].handOver(1_000, true);
        ByteBuf frames = frame("b1");
        BacklogShare share = new BacklogShare(queued, frames.readableBytes(), 1);
        Throwable thrown = onLoop(() -> {
            try {
                self[0].acceptHandedOver(frames, List.of(failing[0]), 1_000, share, true);
                return null;
            } catch (IllegalStateException e) {
                return e;
            }
        });
        assertThat(thrown).as("the accept failed").isNotNull();
        awaitDrained(self[0]);
        assertThat(self[0].oldestPublishedAt()).as("no stale hand-over left").isEqualTo(LoopFanout.NONE_PENDING);
        assertThat(self[0].writesOwed()).isZero();
        assertThat(onLoop(() -> received(members.get(1)))).as("the batch is still delivered by a pass")
                .containsExactly("b1");
    }

    /**
     * Holds the loop with a task (as a long pass holds it) until the returned latch is counted
     * down, at most 10 s: what is handed over meanwhile waits in its task queue.
     */
    private CountDownLatch holdLoop() {
        CountDownLatch release = new CountDownLatch(1);
        loop.execute(() -> {
            try {
                release.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        return release;
    }

    /** What the outbox does with a batch for a loop: hands it over, then queues its accept there. */
    private void handOver(LoopFanout to, String text, long publishedAt, AtomicLong queued) {
        handOver(to, text, publishedAt, queued, true);
    }

    private void handOver(LoopFanout to, String text, long publishedAt, AtomicLong queued, boolean universal) {
        to.handOver(publishedAt, universal);
        ByteBuf frames = frame(text);
        BacklogShare share = new BacklogShare(queued, frames.readableBytes(), 1);
        loop.execute(() -> to.acceptHandedOver(frames, List.of(), publishedAt, share, universal));
    }

    @Test
    void aPrivateFrameFollowsEveryBroadcastQueuedBeforeIt() throws Exception {
        List<Session> members = onLoop(() -> join(600));
        Session late = members.get(550);
        onLoop(() -> {
            fanout.accept(frame("broadcast"), List.of());
            fanout.catchUp(late);
            late.channel().writeAndFlush(frame("private"));
            return null;
        });
        awaitDrained();
        assertThat(received(late)).containsExactly("broadcast", "private");
    }

    @Test
    void membersThatMayNotReceiveAreSkippedWithoutHoldingBatches() throws Exception {
        List<Session> members = onLoop(() -> join(10));
        muted.add(members.get(3));
        onLoop(() -> {
            fanout.accept(frame("b1"), List.of(members.get(3)));
            return null;
        });
        awaitDrained();
        assertThat(received(members.get(3))).isEmpty();
        assertThat(received(members.get(4))).containsExactly("b1");
        assertThat(onLoop(fanout::pendingBatches)).isZero();
    }

    @Test
    void aConnectionThatJustAuthenticatedGetsOnlyLaterBatches() throws Exception {
        List<Session> members = onLoop(() -> join(400));
        Session late = members.get(399);
        muted.add(late); // not authenticated yet
        onLoop(() -> {
            fanout.accept(frame("before auth"), List.of());
            muted.remove(late); // authenticated before the drain reached it...
            fanout.skipQueued(late); // ...which is what the hub says when it authenticates one
            late.channel().writeAndFlush(frame("welcome"));
            fanout.accept(frame("after auth"), List.of());
            return null;
        });
        awaitDrained();
        assertThat(received(late)).containsExactly("welcome", "after auth");
        assertThat(received(members.get(398))).containsExactly("before auth", "after auth");
    }

    @Test
    void aMemberLeavingWhenThePassHasVisitedEveryoneKeepsTheOthersIndexed() throws Exception {
        // Exactly one drain chunk of members: the chunk ends with every member visited
        // (next == size). A close triggered during the chunk runs before the chunk's
        // continuation (a queued task precedes a scheduled one), i.e. with next == size.
        List<Session> members = onLoop(() -> join(128));
        Session last = members.get(127);
        onVisit = s -> {
            if (s == last) {
                loop.execute(() -> fanout.leave(members.get(0)));
            }
        };
        onLoop(() -> {
            fanout.accept(frame("b1"), List.of());
            return null;
        });
        awaitDrained();
        onVisit = s -> { };
        onLoop(() -> {
            fanout.accept(frame("b2"), List.of());
            return null;
        });
        awaitDrained();
        for (int i = 1; i < members.size(); i++) {
            assertThat(received(members.get(i))).as("member %d", i).containsExactly("b1", "b2");
        }
        assertThat(onLoop(fanout::memberCount)).isEqualTo(127);
        onLoop(() -> {
            members.subList(1, 128).forEach(fanout::leave);
            return null;
        });
        assertThat(onLoop(fanout::memberCount)).as("every member could leave").isZero();
    }

    @Test
    void aConnectionBeingClosedStillGetsWhatWasBroadcastBeforeTheClose() throws Exception {
        List<Session> members = onLoop(() -> join(300));
        Session closed = members.get(299);
        onLoop(() -> {
            fanout.accept(frame("granted"), List.of());
            closing.add(closed);    // the hub decided to close it...
            fanout.finish(closed);  // ...and its close path catches it up first
            closed.channel().writeAndFlush(frame("close"));
            fanout.accept(frame("later"), List.of());
            return null;
        });
        awaitDrained();
        assertThat(received(closed)).containsExactly("granted", "close");
        assertThat(onLoop(fanout::memberCount)).isEqualTo(299);
    }

    @Test
    void aConnectionBeingClosedGetsWhatWasBroadcastBeforeTheCloseWhenAPassReachesItBeforeItsClose() throws Exception {
        List<Session> members = onLoop(() -> join(3));
        Session closed = members.get(2);
        onLoop(() -> {
            fanout.accept(frame("granted"), List.of());
            closing.add(closed); // the hub decided to close it; the close waits (behind its earlier answers)
            return null;
        });
        awaitDrained(); // the pass reaches it while it is closing: it may not be written yet
        assertThat(received(closed)).as("nothing follows a close decision before the close itself").isEmpty();
        assertThat(received(members.get(0))).containsExactly("granted");
        onLoop(() -> {
            fanout.finish(closed); // its close catches it up first...
            closed.channel().writeAndFlush(frame("close")); // ...then writes the close frame
            return null;
        });
        assertThat(received(closed)).containsExactly("granted", "close");
        assertThat(onLoop(fanout::memberCount)).isEqualTo(2);
        assertThat(backlog).as("every queued byte was released").hasValue(0);
    }

    @Test
    void aRequesterBeingClosedGetsTheBatchWithItsReplyBeforeItsClose() throws Exception {
        List<Session> members = onLoop(() -> join(3));
        Session requester = members.get(1);
        onLoop(() -> {
            closing.add(requester); // its close waits for the answer to its earlier request...
            fanout.accept(frame("granted"), List.of(requester)); // ...which this batch carries
            return null;
        });
        awaitDrained();
        onLoop(() -> {
            fanout.finish(requester);
            requester.channel().writeAndFlush(frame("close"));
            return null;
        });
        assertThat(received(requester)).containsExactly("granted", "close");
    }

    @Test
    void aPrivateFrameToAConnectionBeingClosedFollowsTheBroadcastsBeforeIt() throws Exception {
        List<Session> members = onLoop(() -> join(2));
        Session closed = members.get(1);
        onLoop(() -> {
            fanout.accept(frame("b1"), List.of());
            closing.add(closed);
            return null;
        });
        awaitDrained();
        onLoop(() -> {
            fanout.catchUp(closed); // an answer to an earlier request, written before the close
            closed.channel().writeAndFlush(frame("answer"));
            fanout.finish(closed);
            closed.channel().writeAndFlush(frame("close"));
            return null;
        });
        assertThat(received(closed)).containsExactly("b1", "answer", "close");
    }

    @Test
    void aCloseThatWaitsLongHoldsBroadcastsOnlyUpToTheLimitThenTheMemberIsDropped() throws Exception {
        List<Long> asked = new ArrayList<>();
        Set<Session> dropped = new HashSet<>();
        LoopFanout limited = new LoopFanout(loop, 0, s -> !closing.contains(s) && !dropped.contains(s),
                s -> !dropped.contains(s), backlog, nanos -> { }, System::nanoTime, (member, heldBytes) -> {
                    asked.add(heldBytes);
                    if (heldBytes > 10) { // as the outbox's hard limit closes a slow reader
                        dropped.add(member);
                        return true;
                    }
                    return false;
                });
        List<Session> members = onLoop(() -> join(limited, 2, new ConcurrentHashMap<>()));
        Session closed = members.get(1);
        ByteBuf first = frame("b1-xxx"); // 6 bytes: held
        ByteBuf second = frame("b2-yyy"); // 12 held in all: over the limit
        onLoop(() -> {
            closing.add(closed); // its close waits behind slow answers
            limited.accept(first.retain(), List.of());
            return null;
        });
        awaitDrained(limited);
        onLoop(() -> {
            limited.accept(second.retain(), List.of());
            return null;
        });
        awaitDrained(limited);
        assertThat(asked).containsExactly(6L, 12L);
        assertThat(dropped).containsExactly(closed);
        onLoop(() -> {
            limited.finish(closed);
            return null;
        });
        assertThat(received(closed)).as("a dropped member gets nothing at its close").isEmpty();
        assertThat(received(members.get(0))).containsExactly("b1-xxx", "b2-yyy");
        assertThat(first.refCnt()).as("the held shares were released; only the test's own reference is left")
                .isEqualTo(1);
        assertThat(second.refCnt()).isEqualTo(1);
        first.release();
        second.release();
    }

    @Test
    void aMemberThatCanNeverBeWrittenHoldsNoBatchBack() throws Exception {
        List<Session> members = onLoop(() -> join(3));
        Session dead = members.get(0);
        muted.add(dead); // gone (closed, dropped): not even its close writes to it
        onLoop(() -> {
            fanout.accept(frame("b1"), List.of(dead));
            return null;
        });
        awaitDrained();
        assertThat(received(dead)).isEmpty();
        assertThat(received(members.get(2))).containsExactly("b1");
        assertThat(onLoop(fanout::writesOwed)).isZero();
        assertThat(backlog).hasValue(0);
    }

    @Test
    void withNoMembersABatchIsReleasedAtOnce() throws Exception {
        ByteBuf b = frame("nobody");
        onLoop(() -> {
            fanout.accept(b, List.of());
            return null;
        });
        assertThat(b.refCnt()).isZero();
        List<Session> later = onLoop(() -> join(2));
        assertThat(received(later.get(0))).isEmpty();
    }

    @Test
    void othersGetBatchesAfterTheLingerInOneWriteWhileTheRequesterGetsThemAtOnce() throws Exception {
        // a long linger, so the second batch surely comes while the first still waits
        AtomicLong queued = new AtomicLong();
        LoopFanout lingering = new LoopFanout(loop, TimeUnit.MILLISECONDS.toNanos(500), s -> true, s -> true, queued);
        Map<Session, AtomicInteger> flushes = new ConcurrentHashMap<>();
        List<Session> members = onLoop(() -> join(lingering, 4, flushes));
        Session requester = members.get(0);
        Session other = members.get(3);
        List<List<String>> afterGrant = onLoop(() -> {
            lingering.accept(frame("granted"), List.of(requester));
            return List.of(received(requester), received(other));
        });
        assertThat(afterGrant.get(0)).containsExactly("granted");
        assertThat(afterGrant.get(1)).as("the others wait for the linger").isEmpty();
        List<String> otherAfterRelease = onLoop(() -> {
            lingering.accept(frame("released"), List.of(requester));
            return received(other);
        });
        assertThat(otherAfterRelease).as("still lingering").isEmpty();
        assertThat(queued).as("both batches queued").hasValue("granted".length() + "released".length());
        assertThat(onLoop(() -> received(requester))).containsExactly("released");
        awaitDrained(lingering);
        for (Session s : members.subList(1, 4)) {
            assertThat(onLoop(() -> received(s))).containsExactly("granted", "released");
            assertThat(flushes.get(s)).as("one write for both").hasValue(1);
        }
        assertThat(flushes.get(requester)).hasValue(2);
        assertThat(queued).hasValue(0);
    }

    @Test
    void aBatchThatComesDuringAPassReachesTheMembersAlreadyVisitedOnlyAfterALinger() throws Exception {
        AtomicLong queued = new AtomicLong();
        List<Session> members = new ArrayList<>();
        List<String> firstMemberAtPassEnd = new ArrayList<>();
        AtomicInteger visits = new AtomicInteger();
        LoopFanout[] self = new LoopFanout[1];
        // 300 members: three drain tasks of 128 visits. A task queued from a visit runs after
        // the drain task making it: so "b2" arrives between the first two tasks, and the
        // snapshot is taken right after the pass's last task.
        self[0] = new LoopFanout(loop, TimeUnit.MILLISECONDS.toNanos(200), s -> {
            int visit = visits.incrementAndGet();
            if (visit == 6) {
                loop.execute(() -> self[0].accept(frame("b2"), List.of()));
            } else if (visit == 300) {
                loop.execute(() -> firstMemberAtPassEnd.addAll(received(members.get(0))));
            }
            return true;
        }, s -> true, queued);
        members.addAll(onLoop(() -> join(self[0], 300, new ConcurrentHashMap<>())));
        onLoop(() -> {
            self[0].accept(frame("b1"), List.of());
            return null;
        });
        awaitDrained(self[0]); // the snapshot task ran a linger before the last pass
        assertThat(firstMemberAtPassEnd).as("when the pass that met b2 ended").containsExactly("b1");
        assertThat(onLoop(() -> received(members.get(0)))).as("a linger later").containsExactly("b2");
        for (int i = 1; i < 300; i++) {
            Session member = members.get(i);
            assertThat(onLoop(() -> received(member))).as("member %d", i).containsExactly("b1", "b2");
        }
        assertThat(queued).hasValue(0);
    }

    @Test
    void aPassIsFollowedByAPauseAsLongAsItSoTheNextCyclesBatchesShareOneWrite() throws Exception {
        AtomicLong now = new AtomicLong(); // the fan-out's clock: each visit takes 1 ms of it
        List<Long> asked = new CopyOnWriteArrayList<>();
        DefaultEventLoop timed = recordingDelays(asked);
        try {
            AtomicLong queued = new AtomicLong();
            LoopFanout paced = new LoopFanout(timed, TimeUnit.MILLISECONDS.toNanos(5), s -> {
                now.addAndGet(TimeUnit.MILLISECONDS.toNanos(1));
                return true;
            }, s -> true, queued, nanos -> { }, now::get);
            Map<Session, AtomicInteger> flushes = new ConcurrentHashMap<>();
            List<Session> members = timed.submit(() -> join(paced, 40, flushes)).get(10, TimeUnit.SECONDS);
            Session requester = members.get(0);
            timed.submit(() -> paced.accept(frame("granted-1"), List.of())).get(10, TimeUnit.SECONDS);
            assertThat(asked).as("the first pass waits the linger").containsExactly(TimeUnit.MILLISECONDS.toNanos(5));
            awaitDrained(timed, paced); // a pass of 40 visits: 40 ms on the fan-out's clock (under the cap), ending at 40 ms

            // the next cycle, 10 ms after the pass ended: the requester at once, the others after
            // the pause (the pass's length, from its end), not after the 5 ms linger
            List<String> otherAtOnce = timed.submit(() -> {
                now.set(TimeUnit.MILLISECONDS.toNanos(50));
                paced.accept(frame("granted-2"), List.of(requester));
                paced.accept(frame("released-2"), List.of(requester));
                return received(members.get(39));
            }).get(10, TimeUnit.SECONDS);
            assertThat(otherAtOnce).as("nothing of the second cycle yet").containsExactly("granted-1");
            // the pause ends at 80 ms; the requester's own write took 1 ms of the clock (51 ms)
            assertThat(asked).as("29 ms of the pause are left").last().isEqualTo(TimeUnit.MILLISECONDS.toNanos(29));
            awaitDrained(timed, paced);
            assertThat(timed.submit(() -> received(requester)).get(10, TimeUnit.SECONDS))
                    .containsExactly("granted-1", "granted-2", "released-2");
            for (Session s : members.subList(1, 40)) {
                assertThat(timed.submit(() -> received(s)).get(10, TimeUnit.SECONDS))
                        .containsExactlyElementsOf(s == members.get(39) ? List.of("granted-2", "released-2")
                                : List.of("granted-1", "granted-2", "released-2"));
                assertThat(flushes.get(s)).as("one write per pass").hasValue(2);
            }
            assertThat(queued).hasValue(0);
        } finally {
            timed.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        }
    }

    @Test
    void thePauseAfterAVeryLongPassIsCappedSoObserversWaitAtMostFiftyMillisecondsMore() throws Exception {
        AtomicLong now = new AtomicLong();
        List<Long> asked = new CopyOnWriteArrayList<>();
        DefaultEventLoop timed = recordingDelays(asked);
        try {
            LoopFanout paced = new LoopFanout(timed, 0, s -> {
                now.addAndGet(TimeUnit.SECONDS.toNanos(1)); // a pass of 10 members: 10 s
                return true;
            }, s -> true, new AtomicLong(), nanos -> { }, now::get);
            List<Session> members = timed.submit(() -> join(paced, 10, new ConcurrentHashMap<>()))
                    .get(10, TimeUnit.SECONDS);
            timed.submit(() -> paced.accept(frame("b1"), List.of())).get(10, TimeUnit.SECONDS);
            awaitDrained(timed, paced);
            timed.submit(() -> paced.accept(frame("b2"), List.of())).get(10, TimeUnit.SECONDS);
            assertThat(asked).last().isEqualTo(LoopFanout.MAX_PAUSE_NANOS);
            awaitDrained(timed, paced);
            for (Session s : members) {
                assertThat(timed.submit(() -> received(s)).get(10, TimeUnit.SECONDS)).containsExactly("b1", "b2");
            }
        } finally {
            timed.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        }
    }

    /** An event loop that notes the delay of every task scheduled on it (in nanoseconds). */
    private static DefaultEventLoop recordingDelays(List<Long> asked) {
        return new DefaultEventLoop() {
            @Override
            public io.netty.util.concurrent.ScheduledFuture<?> schedule(Runnable task, long delay, TimeUnit unit) {
                if (delay > 0) {
                    asked.add(unit.toNanos(delay));
                }
                return super.schedule(task, delay, unit);
            }
        };
    }

    private static void awaitDrained(DefaultEventLoop on, LoopFanout drained) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (on.submit(drained::pendingBatches).get(10, TimeUnit.SECONDS) > 0) {
            assertThat(System.nanoTime()).as("drained within 10 s").isLessThan(deadline);
            Thread.sleep(5);
        }
    }

    @Test
    void atShutdownEveryMemberGetsWhatIsStillLingering() throws Exception {
        AtomicLong queued = new AtomicLong();
        LoopFanout lingering = new LoopFanout(loop, TimeUnit.HOURS.toNanos(1), s -> true, s -> true, queued);
        List<Session> members = onLoop(() -> join(lingering, 3, new ConcurrentHashMap<>()));
        onLoop(() -> {
            lingering.accept(frame("last words"), List.of());
            lingering.deliverAll();
            return null;
        });
        for (Session s : members) {
            assertThat(onLoop(() -> received(s))).containsExactly("last words");
        }
        assertThat(onLoop(lingering::pendingBatches)).isZero();
        assertThat(queued).hasValue(0);
    }

    @Test
    void quietMembersGetOnlyBatchesForEveryMemberAndSwitchingRostersLosesOrRepeatsNothing() throws Exception {
        List<Session> members = onLoop(() -> join(300));
        onLoop(() -> {
            for (int i = 0; i < members.size(); i += 2) {
                fanout.quiet(members.get(i), true);
            }
            fanout.accept(frame("u1"), List.of());
            fanout.accept(frame("c1"), List.of(), System.nanoTime(), new BacklogShare(backlog, 2, 1), false);
            return null;
        });
        onLoop(() -> {
            fanout.accept(frame("u2"), List.of());
            fanout.quiet(members.get(0), false); // quiet -> loud with c1 still queued: not for it
            fanout.quiet(members.get(1), true); // loud -> quiet: gets what it is owed first
            fanout.accept(frame("c2"), List.of(), System.nanoTime(), new BacklogShare(backlog, 2, 1), false);
            return null;
        });
        awaitDrained();
        assertThat(received(members.get(0))).containsExactly("u1", "u2", "c2");
        assertThat(received(members.get(1))).containsExactly("u1", "c1", "u2");
        for (int i = 2; i < members.size(); i++) {
            assertThat(received(members.get(i))).as("member %d", i)
                    .containsExactlyElementsOf(i % 2 == 0 ? List.of("u1", "u2") : List.of("u1", "c1", "u2", "c2"));
        }
        assertThat(onLoop(fanout::quietCount)).isEqualTo(150);
        assertThat(backlog).as("every queued byte was released").hasValue(0);
    }

    @Test
    void batchesForLoudMembersOnlyNeverVisitTheQuietOnes() throws Exception {
        List<Session> quiet = onLoop(() -> join(500));
        List<Session> loud = onLoop(() -> {
            quiet.forEach(s -> fanout.quiet(s, true));
            return join(3);
        });
        Set<Session> visitedQuiet = ConcurrentHashMap.newKeySet();
        onVisit = s -> {
            if (quiet.contains(s)) {
                visitedQuiet.add(s);
            }
        };
        for (int b = 0; b < 20; b++) {
            String text = "c" + b;
            onLoop(() -> {
                fanout.accept(frame(text), List.of(), System.nanoTime(), new BacklogShare(backlog, 2, 1), false);
                return null;
            });
        }
        awaitDrained();
        assertThat(visitedQuiet).as("quiet members looked at by claim traffic").isEmpty();
        for (Session s : loud) {
            assertThat(received(s)).hasSize(20);
        }
        onLoop(() -> {
            fanout.accept(frame("u"), List.of());
            return null;
        });
        awaitDrained();
        assertThat(visitedQuiet).as("a batch for every member visits them all").hasSize(500);
        for (Session s : quiet) {
            assertThat(received(s)).containsExactly("u");
        }
        assertThat(backlog).hasValue(0);
    }

    @Test
    void aBatchEntersThePipelineAtTheWebSocketEncoderAndPrivateFramesStillPassEveryHandler() throws Exception {
        List<String> nearSocket = new ArrayList<>();
        List<String> afterEncoder = new ArrayList<>();
        EmbeddedChannel channel = new EmbeddedChannel();
        channel.pipeline().addLast("tls", recorder(nearSocket))
                .addLast("wsencoder", new ChannelOutboundHandlerAdapter())
                .addLast("idle", recorder(afterEncoder));
        Session member = new Session(++ids, channel, "127.0.0.1");
        onLoop(() -> {
            fanout.join(member);
            fanout.accept(frame("batch"), List.of());
            return null;
        });
        awaitDrained();
        channel.writeAndFlush(frame("private"));
        assertThat(nearSocket).as("TLS sees both, in order").containsExactly("batch", "private");
        assertThat(afterEncoder).as("the handlers after the encoder: only the private frame").containsExactly("private");
        assertThat(received(member)).containsExactly("batch", "private");
    }

    @Test
    void aMemberPipelineThatAppendsToAWrittenBatchCannotTouchTheSharedBatchAndEveryReferenceComesBack() throws Exception {
        // TLS's write queue appends a later buffer into an earlier one in place when the earlier
        // one has room (or can grow): the shared batch's spare capacity must not be that room
        ByteBuf b1 = Unpooled.buffer(64).writeBytes("b1".getBytes(StandardCharsets.UTF_8));
        b1.setBytes(2, "#".repeat(62).getBytes(StandardCharsets.UTF_8));
        ByteBuf b2 = frame("b2");
        b1.retain(); // the test's own, to look at it after delivery
        b2.retain();
        EmbeddedChannel channel = new EmbeddedChannel();
        channel.pipeline().addLast("tls", appendingInPlace()).addLast("wsencoder", new ChannelOutboundHandlerAdapter());
        Session appending = new Session(++ids, channel, "127.0.0.1");
        List<Session> plain = onLoop(() -> {
            fanout.join(appending);
            return join(2);
        });
        onLoop(() -> {
            fanout.accept(b1, List.of());
            fanout.accept(b2, List.of()); // both owed in one pass: two writes, then one flush
            return null;
        });
        awaitDrained();
        assertThat(String.join("", received(appending))).isEqualTo("b1b2");
        for (Session s : plain) {
            assertThat(received(s)).containsExactly("b1", "b2");
        }
        assertThat(b1.capacity()).as("not grown").isEqualTo(64);
        assertThat(b1.toString(2, 62, StandardCharsets.UTF_8)).as("spare bytes untouched").isEqualTo("#".repeat(62));
        assertThat(b1.refCnt()).as("every member's reference released, once").isEqualTo(1);
        assertThat(b2.refCnt()).isEqualTo(1);
        b1.release();
        b2.release();
    }

    /**
     * Holds each write and appends the next one into it while it has room or can grow, passing
     * it on at the flush: what SslHandler's queue of unencrypted writes does before wrapping.
     */
    private static ChannelOutboundHandlerAdapter appendingInPlace() {
        return new ChannelOutboundHandlerAdapter() {
            private ByteBuf held;

            @Override
            public void write(ChannelHandlerContext ctx, Object msg, io.netty.channel.ChannelPromise promise) {
                ByteBuf next = (ByteBuf) msg;
                if (held != null && (held.isWritable(next.readableBytes())
                        || io.netty.buffer.ByteBufUtil.ensureWritableSuccess(held.ensureWritable(next.readableBytes(), false)))) {
                    held.writeBytes(next);
                    next.release();
                    return;
                }
                if (held != null) {
                    ctx.write(held);
                }
                held = next;
            }

            @Override
            public void flush(ChannelHandlerContext ctx) {
                if (held != null) {
                    ctx.write(held);
                    held = null;
                }
                ctx.flush();
            }
        };
    }

    /** An outbound handler that notes the text of every buffer written through it. */
    private static ChannelOutboundHandlerAdapter recorder(List<String> seen) {
        return new ChannelOutboundHandlerAdapter() {
            @Override
            public void write(ChannelHandlerContext ctx, Object msg, io.netty.channel.ChannelPromise promise) {
                seen.add(((ByteBuf) msg).toString(StandardCharsets.UTF_8));
                ctx.write(msg, promise);
            }
        };
    }

    private List<Session> join(int n) {
        return join(fanout, n, new ConcurrentHashMap<>());
    }

    /** Joins {@code n} members to {@code to}, counting each one's flushes. */
    private List<Session> join(LoopFanout to, int n, Map<Session, AtomicInteger> flushes) {
        List<Session> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            AtomicInteger count = new AtomicInteger();
            Session s = new Session(++ids, new EmbeddedChannel(new ChannelOutboundHandlerAdapter() {
                @Override
                public void flush(ChannelHandlerContext ctx) {
                    count.incrementAndGet();
                    ctx.flush();
                }
            }), "127.0.0.1");
            flushes.put(s, count);
            to.join(s);
            out.add(s);
        }
        return out;
    }

    private void awaitDrained() throws Exception {
        awaitDrained(fanout);
    }

    private void awaitDrained(LoopFanout drained) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (onLoop(drained::pendingBatches) > 0) {
            assertThat(System.nanoTime()).as("drained within 10 s").isLessThan(deadline);
            Thread.sleep(5);
        }
    }

    private <T> T onLoop(Callable<T> task) throws Exception {
        return loop.submit(task).get(10, TimeUnit.SECONDS);
    }

    private static ByteBuf frame(String text) {
        return Unpooled.copiedBuffer(text, StandardCharsets.UTF_8);
    }

    /** Drains what was written to the member's channel so far. */
    private static List<String> received(Session s) {
        EmbeddedChannel ch = (EmbeddedChannel) s.channel();
        List<String> out = new ArrayList<>();
        for (Object m = ch.readOutbound(); m != null; m = ch.readOutbound()) {
            ByteBuf b = (ByteBuf) m;
            out.add(b.toString(StandardCharsets.UTF_8));
            b.release();
        }
        return out;
    }
}
