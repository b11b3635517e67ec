package dev.synapsehub.journal;

import dev.synapsehub.core.journal.JournalException;

import java.util.concurrent.atomic.AtomicInteger;

/** A {@link WriterAccess} that runs a hook on the calling thread just before its n-th writer turn. */
final class WriterTurnGate implements WriterAccess {
    private final WriterAccess inner;
    private final int beforeTurn;
    private final Runnable hook;
    private final AtomicInteger turns = new AtomicInteger();

    WriterTurnGate(WriterAccess inner, int beforeTurn, Runnable hook) {
        this.inner = inner;
        this.beforeTurn = beforeTurn;
        this.hook = hook;
    }

    @Override
    public <T> T run(Work<T> work) throws JournalException {
        if (turns.incrementAndGet() == beforeTurn) {
            hook.run();
        }
        return inner.run(work);
    }

    @Override
    public long longestNanos() {
        return inner.longestNanos();
    }

    @Override
    public void resetLongest() {
        inner.resetLongest();
    }
}
