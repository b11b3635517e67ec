package dev.synapsehub.cli;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;

/** Three mesh nodes n1..n3 started in this JVM from command-line arguments, as tests of the daemon need them. */
final class MeshNodes {
    private MeshNodes() {
    }

    /**
     * Starts the three nodes together (each waits to catch up with a leader before it serves),
     * each with its journal {@code <id>.db} in {@code dir} and {@code flags}; adds each to
     * {@code hubs} so the caller stops them.
     */
    static List<HubDaemon> start(List<LoopbackHub> hubs, Path dir, List<String> flags) throws Exception {
        String peers = "n1=127.0.0.1:" + HubProcess.freePort() + ",n2=127.0.0.1:" + HubProcess.freePort()
                + ",n3=127.0.0.1:" + HubProcess.freePort();
        List<Callable<HubDaemon>> starts = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            LoopbackHub hub = new LoopbackHub();
            hubs.add(hub);
            String id = "n" + (i + 1);
            starts.add(() -> {
                List<String> args = new ArrayList<>(List.of("--port", "0", "--db", dir.resolve(id + ".db").toString(),
                        "--mesh-id", id, "--mesh-peers", peers, "--mesh-bootstrap"));
                args.addAll(flags);
                return hub.start(args.toArray(String[]::new));
            });
        }
        return together(starts);
    }

    /**
     * Runs each start on a thread of its own, all at once (a mesh node waits for a leader before it
     * serves, so nodes started one by one would wait on each other), and fails unless every one
     * succeeded; the results in the order given.
     */
    static <T> List<T> together(List<Callable<T>> starts) throws Exception {
        List<T> out = new CopyOnWriteArrayList<>(Collections.<T>nCopies(starts.size(), null));
        List<Exception> failures = new CopyOnWriteArrayList<>();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < starts.size(); i++) {
            Callable<T> start = starts.get(i);
            int index = i;
            Thread t = new Thread(() -> {
                try {
                    out.set(index, start.call());
                } catch (Exception e) {
                    failures.add(e);
                }
            });
            t.start();
            threads.add(t);
        }
        for (Thread t : threads) {
            t.join();
        }
        assertThat(failures).isEmpty();
        return new ArrayList<>(out);
    }
}
