package dev.synapsehub.federation.testing;

import java.util.ArrayList;
import java.util.List;

/** What a test opened (hubs, peers, clients), closed in reverse order when the test ends. */
public final class Closer implements AutoCloseable {
    private final List<AutoCloseable> open = new ArrayList<>();

    /** Keeps {@code c} to close later; returns it. */
    public <T extends AutoCloseable> T keep(T c) {
        open.add(c);
        return c;
    }

    @Override
    public void close() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
        open.clear();
    }
}
