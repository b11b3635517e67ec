package dev.synapsehub.net.session;

import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Binds and unbinds from several threads at once, with frames and readers in between: a name is
 * held by at most one socket at a time, every view agrees with the bound sessions afterwards, and
 * nothing a departed name declared is left behind. Bounded in rounds; no assumption about which
 * thread runs when.
 */
class ConcurrentBindTest {
    private static final int THREADS = 4;
    private static final int ROUNDS = 400;
    private final SessionRegistry registry = new SessionRegistry(10_000, 0, 10_000, false, 60);
    private final ConcurrentLinkedQueue<EmbeddedChannel> channels = new ConcurrentLinkedQueue<>();
    private final java.util.concurrent.atomic.AtomicLong ids = new java.util.concurrent.atomic.AtomicLong();

    private Session connected() {
        EmbeddedChannel channel = new EmbeddedChannel();
        channels.add(channel);
        Session s = new Session(ids.incrementAndGet(), channel, "127.0.0.1");
        assertThat(registry.admit(s)).isNull();
        return s;
    }

    @AfterEach
    void closeChannels() {
        channels.forEach(EmbeddedChannel::finishAndReleaseAll);
    }

    @Test
    void concurrentBindsAndDeparturesKeepOneHolderPerNameAndConsistentViews() throws Exception {
        AtomicReference<Session> sharedHolder = new AtomicReference<>();
        ConcurrentLinkedQueue<String> violations = new ConcurrentLinkedQueue<>();
        CountDownLatch start = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(THREADS + 1);
        try {
            List<Future<?>> work = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                int thread = t;
                work.add(pool.submit(() -> {
                    start.await();
                    for (int round = 0; round < ROUNDS; round++) {
                        double now = round;
                        // a name of this thread's own: bound, used, and left every other round
                        String own = "p/t" + thread + "-" + (round % 8);
                        Session mine = connected();
                        if (registry.bind(mine, own, false, null, round % 3 == 0, now).kind()
                                == SessionRegistry.Bind.Kind.BOUND) {
                            registry.touch(mine, now, round % 2 == 0);
                            registry.roles(own, List.of("r" + thread));
                            registry.wake(own, "direct");
                            registry.addWait(own, "T" + round);
                        }
                        // one name every thread contends for, without takeover
                        Session contender = connected();
                        SessionRegistry.Bind shared = registry.bind(contender, "p/shared", false, null, false, now);
                        if (shared.kind() == SessionRegistry.Bind.Kind.BOUND
                                && !sharedHolder.compareAndSet(null, contender)) {
                            violations.add("p/shared bound twice at once");
                        }
                        registry.presence(); // readers in between
                        registry.lastSeen();
                        if (shared.kind() == SessionRegistry.Bind.Kind.BOUND) {
                            sharedHolder.set(null); // cleared before it leaves, so the next holder finds it empty
                        }
                        registry.remove(contender, now);
                        if (round % 2 == 1) {
                            registry.remove(mine, now);
                        } else if (registry.session(own) != mine) {
                            registry.remove(mine, now); // refused (its name was bound): just a closed socket
                        }
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> f : work) {
                f.get(120, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(violations).isEmpty();

        assertThat(registry.isOnline("p/shared")).isFalse();
        List<String> online = registry.online();
        Set<String> expected = new HashSet<>();
        for (SessionRegistry.Presence p : registry.presence()) {
            expected.add(p.name());
            Session s = registry.session(p.name());
            assertThat(s.name()).isEqualTo(p.name());
            assertThat(p.roles()).hasSize(1);
            assertThat(p.lastSeen()).isNotNaN();
        }
        Set<String> stayed = new HashSet<>(); // even rounds keep their name; a name's later rounds find it held
        for (int t = 0; t < THREADS; t++) {
            for (int k = 0; k < 8; k += 2) {
                stayed.add("p/t" + t + "-" + k);
            }
        }
        assertThat(expected).isEqualTo(stayed);
        assertThat(online).containsExactlyInAnyOrderElementsOf(expected).isSorted();
        assertThat(registry.roles().keySet()).isEqualTo(new java.util.TreeSet<>(expected));
        assertThat(registry.wake().keySet()).isEqualTo(new java.util.TreeSet<>(expected));
        assertThat(registry.lastReactions().keySet()).isEqualTo(new java.util.TreeSet<>(expected));
        assertThat(expected).allSatisfy(name -> assertThat(registry.waitGraph()).containsKey(name));
        assertThat(registry.waitGraph().keySet()).isSubsetOf(expected);
        assertThat(registry.lastSeen().keySet()).as("every name ever bound is remembered")
                .contains("p/shared").containsAll(expected);
        // every socket that left is gone: only the bound ones stay connected
        assertThat(registry.connectedClients()).isEqualTo(expected.size());
    }
}
