package dev.synapsehub.cli;

import java.util.ArrayList;
import java.util.List;

/** What a process test opened (hubs, clients), closed in reverse order; the first failure is rethrown. */
final class Closer implements AutoCloseable {
    private final List<AutoCloseable> open = new ArrayList<>();

    /** Remembers {@code c} for closing and returns it. */
    synchronized <T extends AutoCloseable> T keep(T c) {
        open.add(c);
        return c;
    }

    @Override
    public synchronized void close() throws Exception {
        Exception first = null;
        for (int i = open.size() - 1; i >= 0; i--) {
            try {
                open.get(i).close();
            } catch (Exception e) {
                first = first == null ? e : first;
            }
        }
        open.clear();
        if (first != null) {
            throw first;
        }
    }
}
