package dev.synapsehub.net.protocol;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.Clock;
import dev.synapsehub.net.delivery.Delivery;
import dev.synapsehub.net.session.AnswerOrder;
import dev.synapsehub.net.session.Session;
import dev.synapsehub.net.wire.HubFrames;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.SingleThreadEventExecutor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiConsumer;

/**
 * Writes frames to connections. Actor outcomes are published from one single-threaded
 * executor, so every client sees broadcasts in the actor's commit order. Broadcasts published
 * in one run of that executor (typically one group commit) are encoded once, as WebSocket
 * frames, into one batch that each event loop's {@link LoopFanout} hands to its connections;
 * a private frame first catches its connection up with every earlier batch. A connection
 * whose unread output exceeds twice the high-water mark is dropped instead of growing the hub.
 *
 * <p>The outbox thread's queue is bounded (see {@link dev.synapsehub.net.HubConfig#outboxQueueCapacity()});
 * the edge answers new requests busy long before it fills ({@link #overloaded()}). Should it
 * refuse a task anyway, nothing is dropped silently: a broadcast goes out without batching, a
 * private frame is written directly, and the refusal is logged and counted as a fault.
 */
public final class Outbox {
    private static final Logger LOG = LoggerFactory.getLogger(Outbox.class);
    /** The work of an answer that is ready now. */
    private static final CompletableFuture<Void> NOTHING = CompletableFuture.completedFuture(null);

    private final EventExecutor executor;
    private final int busyTasks;
    private final HubFrames frames;
    private final long hardLimitBytes;
    private final long lingerNanos;
    private final HubMetrics metrics;
    private final Map<EventLoop, LoopFanout> fanouts = new ConcurrentHashMap<>();
    private final Runnable dispatchTask = this::dispatch;
    private final ScopedDelivery scoped;
    /** The batch being collected on the outbox thread, null when empty. */
    private ByteBuf batch;
    /** When the first broadcast of {@link #batch} was published ({@link System#nanoTime()}). */
    private long batchStartedAt;
    private List<Session> origins = new ArrayList<>();
    /** Broadcast batches started so far (outbox thread). */
    private long batchesStarted;
    /** Broadcast batches handed to the I/O loops so far: all up to this one (written on the outbox thread). */
    private volatile long batchesDispatched;
    /** Whether {@link #batch} is for every connection, or for the loud (broadcast-delivery) ones only. */
    private boolean batchUniversal;
    /** Told every frame the hub fans out (the relay log, A5.2); null when nobody listens. */
    private volatile java.util.function.Consumer<String> mirror;

    /**
     * @param busyTasks above this many tasks waiting for {@code executor}, {@link #overloaded()}
     *        is true
     */
    public Outbox(EventExecutor executor, HubFrames frames, int highWaterBytes, Duration linger,
                  HubMetrics metrics, int busyTasks) {
        this(executor, frames, highWaterBytes, linger, metrics, busyTasks, Delivery.EVERYTHING, Clock.system());
    }

    /**
     * @param defaultDelivery the delivery of connections that declare none ({@code --default-delivery})
     * @param clock the hub's clock (lease ends, for scoped delivery)
     */
    public Outbox(EventExecutor executor, HubFrames frames, int highWaterBytes, Duration linger,
                  HubMetrics metrics, int busyTasks, Delivery defaultDelivery, Clock clock) {
        this.scoped = new ScopedDelivery(this, defaultDelivery, clock);
        this.executor = executor;
        this.busyTasks = busyTasks;
        this.frames = frames;
        this.hardLimitBytes = 2L * highWaterBytes;
        this.lingerNanos = linger.toNanos();
        this.metrics = metrics;
    }

    /** The publishing thread: continue actor futures here with {@code *Async}. */
    public EventExecutor executor() {
        return executor;
    }

    /** Scoped delivery of claim traffic and presence. */
    public ScopedDelivery scoped() {
        return scoped;
    }

    /** Runs {@code task} on the outbox thread after everything handed to it before; a refusal is logged and counted. */
    void runInOrder(Runnable task) {
        offer(task, "a delivery change is dropped");
    }

    /**
     * Runs {@code task} on the outbox thread after everything handed to it before; should the
     * thread refuse it (queue full, or stopping), runs it on the calling thread instead, so it
     * is never dropped: for work that must happen even out of order (ending a reclaimed
     * identity's socket and lease), which therefore may touch only thread-safe state. A refusal
     * while running is counted and logged.
     */
    public void runInOrderOrHere(Runnable task, String what) {
        try {
            executor.execute(task);
        } catch (RejectedExecutionException refused) {
            if (!executor.isShuttingDown()) {
                metrics.faults.incrementAndGet();
                LOG.error("the outbox thread's queue is full ({} tasks); {} on the calling thread instead",
                        queuedTasks(), what);
            }
            task.run();
        }
    }

    /** Tasks waiting for the outbox thread. */
    public int queuedTasks() {
        return executor instanceof SingleThreadEventExecutor single ? single.pendingTasks() : 0;
    }

    /** True while more tasks wait for the outbox thread than the busy threshold: answer new requests busy. */
    public boolean overloaded() {
        return queuedTasks() > busyTasks;
    }

    /**
     * Hands {@code task} to the outbox thread; false when it refused (full or stopping). A full
     * queue is a fault (logged, counted): admission should have answered busy long before.
     */
    private boolean offer(Runnable task, String what) {
        try {
            executor.execute(task);
            return true;
        } catch (RejectedExecutionException refused) {
            if (!executor.isShuttingDown()) {
                metrics.faults.incrementAndGet();
                LOG.error("the outbox thread's queue is full ({} tasks); {} without it", queuedTasks(), what);
            }
            return false;
        }
    }

    /**
     * How long ago ({@code now}, {@link System#nanoTime()}) the oldest broadcast that some I/O
     * loop has not yet handed to all its sockets was published; 0 when none waits. From any
     * thread: each loop publishes its oldest batch's time as it queues and releases batches.
     */
    public long oldestUndeliveredNanos(long now) {
        long oldest = 0;
        for (LoopFanout fanout : fanouts.values()) {
            long at = fanout.oldestPublishedAt();
            if (at != LoopFanout.NONE_PENDING) {
                oldest = Math.max(oldest, now - at);
            }
        }
        return oldest;
    }

    /**
     * The most writes any one I/O loop owes its sockets for the broadcasts waiting there (each
     * batch once per socket it is for); from any thread. Per loop, as the loops write in parallel.
     */
    public long writesOwed() {
        long most = 0;
        for (LoopFanout fanout : fanouts.values()) {
            most = Math.max(most, fanout.writesOwed());
        }
        return most;
    }

    /** True while some broadcast has waited longer than {@code maxNanos} for a socket: answer new requests busy. */
    public boolean fanoutOverdue(long maxNanos) {
        return oldestUndeliveredNanos(System.nanoTime()) > maxNanos;
    }

    /** Makes a newly admitted connection a broadcast member (on its event loop). */
    public void join(Session session) {
        join(session, false);
    }

    /**
     * Makes a newly admitted connection a broadcast member (on its event loop); a {@code quiet}
     * one takes only the broadcasts for every connection (scoped delivery).
     */
    public void join(Session session, boolean quiet) {
        EventLoop loop = session.channel().eventLoop();
        fanouts.computeIfAbsent(loop, l -> new LoopFanout(l, lingerNanos, this::deliverable, this::deliverableWhileClosing,
                        metrics.fanoutBacklogBytes, metrics::fanoutDelivered, System::nanoTime, this::overLimit))
                .join(session, quiet);
    }

    /**
     * Moves a connection to the quiet or the loud roster of its loop, after every broadcast
     * published before this call (outbox thread): frames published after it follow the new mode.
     */
    void quiet(Session session, boolean quiet) {
        if (executor.inEventLoop()) {
            dispatch();
        }
        EventLoop loop = session.channel().eventLoop();
        Runnable move = () -> {
            LoopFanout fanout = fanouts.get(loop);
            if (fanout != null) {
                fanout.quiet(session, quiet);
            }
        };
        if (loop.inEventLoop()) {
            move.run();
        } else {
            try {
                loop.execute(move);
            } catch (RejectedExecutionException shuttingDown) {
                // the connection's loop is shutting down: nothing left to deliver to
            }
        }
    }

    /** True while the relay log mirrors every broadcast (it wants loud frames even with no loud socket). */
    boolean mirroring() {
        return mirror != null;
    }

    /** Ends a closed connection's membership (on its event loop). */
    public void leave(Session session) {
        LoopFanout fanout = fanouts.get(session.channel().eventLoop());
        if (fanout != null) {
            fanout.leave(session);
        }
    }

    /**
     * A connection just authenticated (on its event loop): broadcasts published before that
     * are not for it, so the frames that follow (its auth outcome first) come before any.
     */
    public void skipQueuedBroadcasts(Session session) {
        LoopFanout fanout = fanouts.get(session.channel().eventLoop());
        if (fanout != null) {
            fanout.skipQueued(session);
        }
    }

    /** Sends one frame to one connection. */
    public void send(Session session, ObjectNode frame) {
        send(session, frames.write(frame));
    }

    /**
     * Sends one serialised frame to one connection, after every broadcast published before it
     * and, sent from any other thread than the outbox's, after the answers to the connection's
     * earlier requests (see {@link #afterEarlierAnswers}).
     */
    public void send(Session session, String text) {
        afterEarlierAnswers(session, () -> write(session, text));
    }

    /**
     * Sends a frame addressed to the name {@code session} is bound to (a directed or channel
     * chat): as {@link #send(Session, String)}, but while the session's admission waits for its
     * pin decision, only once it is admitted, after its welcome (dropped, and counted, if it is
     * refused; the pipeline logs the drops once per admission).
     */
    public void sendNamed(Session session, String text) {
        session.deliverWhenAdmitted(() -> send(session, text), metrics.heldDeliveriesDropped::incrementAndGet);
    }

    /**
     * Runs a write to {@code session} that does not come from the outbox thread (an answer the
     * edge gives at once, such as an error on the connection's I/O loop, or a close) after the
     * answers to the connection's earlier requests that are answered on a path of their own
     * ({@link #answerAfter}): a connection's answers go back in the order of its requests, as
     * the contract's sequential pipeline (§4.3) gives them, and an error names no request. Never
     * blocks: the write follows once those answers were handed on, through the outbox thread,
     * which hands the connection's pending broadcast batch (a reply to its requester) over first.
     * On the outbox thread a write is in that order already, and runs at once.
     */
    private void afterEarlierAnswers(Session session, Runnable write) {
        if (executor.inEventLoop()) {
            write.run();
            return;
        }
        AnswerOrder answers = session.answers();
        CompletableFuture<?> before;
        CompletableFuture<Void> handedOn = null;
        synchronized (answers) {
            before = answers.tail();
            if (before.isDone() && answers.publishedInBatch() <= batchesDispatched) {
                before = null; // every earlier answer is queued on the connection's loop already
            } else {
                handedOn = new CompletableFuture<>();
                answers.waiting(handedOn); // an edge answer after this one waits for it too
            }
        }
        if (before == null) {
            if (answers.neverWaited()) {
                write.run();
            } else {
                afterQueuedWrites(session, write);
            }
            return;
        }
        CompletableFuture<Void> done = handedOn;
        before.whenComplete((ignored, failed) -> {
            Runnable ordered = () -> {
                try {
                    write.run();
                } finally {
                    done.complete(null);
                }
            };
            if (executor.inEventLoop() || !offer(ordered, "an edge answer is written out of order")) {
                ordered.run();
            }
        });
    }

    /**
     * Answers a request of {@code session} that is answered later, on a path of its own (the
     * writer's, or an extension's: a federation verb, a mesh node asking its leader): once
     * {@code work} completes, {@code answer} runs on the outbox thread with its value or failure,
     * after everything handed to that thread before. The connection's edge answers given after
     * this call (an error on its loop, a close) wait until {@code answer} ran, so none overtakes
     * it (see {@link #afterEarlierAnswers}). Any thread; an extension calls it while handling the
     * request, on the connection's loop: registered only once the answer is ready, it could no
     * longer hold back an edge answer given meanwhile.
     *
     * @param session the requester's connection; null (another mesh node's request): nothing waits
     * @return completes once {@code answer} ran; fails with what it threw, or with the outbox's
     *     {@link RejectedExecutionException} (full or stopping) when it did not run: the caller
     *     then answers some other way
     */
    public <T> CompletableFuture<Void> answerAfter(Session session, CompletionStage<T> work,
            BiConsumer<? super T, ? super Throwable> answer) {
        return answerAfter(session, work, answer, null);
    }

    /**
     * {@link #answerAfter(Session, CompletionStage, BiConsumer)}, with {@code refused} run (on the
     * thread that saw the refusal) when the outbox thread will not take {@code answer}: before the
     * returned future fails, so the edge answers that wait for it still come after what
     * {@code refused} writes.
     */
    private <T> CompletableFuture<Void> answerAfter(Session session, CompletionStage<T> work,
            BiConsumer<? super T, ? super Throwable> answer, Runnable refused) {
        CompletableFuture<Void> answered = new CompletableFuture<>();
        if (session != null) {
            session.answers().started(answered);
        }
        work.whenComplete((value, failure) -> {
            Runnable run = () -> {
                Throwable fault = null;
                try {
                    answer.accept(value, failure);
                } catch (RuntimeException | Error e) {
                    fault = e;
                    if (e instanceof Error) {
                        throw e;
                    }
                } finally {
                    if (session != null) {
                        session.answers().published(batchesStarted); // before the edge answers behind it go on
                    }
                    if (fault == null) {
                        answered.complete(null);
                    } else {
                        answered.completeExceptionally(fault);
                    }
                }
            };
            try {
                executor.execute(run);
            } catch (RejectedExecutionException notTaken) {
                try {
                    if (refused != null) {
                        refused.run();
                    }
                } finally {
                    answered.completeExceptionally(notTaken);
                }
            }
        });
        return answered;
    }

    /**
     * Runs {@code write} on the session's loop after the tasks already queued there (answers the
     * outbox thread handed over), not inline before them.
     */
    private static void afterQueuedWrites(Session session, Runnable write) {
        try {
            session.channel().eventLoop().execute(write);
        } catch (RejectedExecutionException shuttingDown) {
            // the connection's loop is shutting down: nothing left to write to
        }
    }

    /** Writes one frame to one connection after every broadcast published before it. */
    private void write(Session session, String text) {
        onLoop(session, false, () -> {
            Channel channel = session.channel();
            if (channel.isActive() && !overLimit(session)) {
                channel.writeAndFlush(new TextWebSocketFrame(text));
            }
        }, () -> { });
    }

    /** Told once whether a private frame reached its socket; must not block (it runs on an I/O thread). */
    @FunctionalInterface
    public interface Written {
        /**
         * @param written true once the frame was written to the socket; false when it was not
         *        (the connection was closed, dropped as a slow reader, or the write failed)
         */
        void outcome(boolean written);
    }

    /**
     * Like {@link #send(Session, String)}, and tells {@code written} whether the frame reached
     * the socket: for frames that may be settled only once delivered (owed receipts, §8.5). Told
     * exactly once on every path, a fault included (logged once, counted, told not written):
     * a batch of receipts settles only once every frame's outcome came.
     */
    void send(Session session, String text, Written written) {
        Written once = new OnceWritten(written);
        try {
            boolean handedToLoop = onLoop(session, false, () -> {
                try {
                    Channel channel = session.channel();
                    if (channel.isActive() && !overLimit(session)) {
                        channel.writeAndFlush(new TextWebSocketFrame(text)).addListener(f -> once.outcome(f.isSuccess()));
                    } else {
                        once.outcome(false);
                    }
                } catch (RuntimeException fault) {
                    awaitedWriteFailed(session, fault, once);
                }
            }, () -> once.outcome(false));
            if (!handedToLoop) {
                once.outcome(false);
            }
        } catch (RuntimeException fault) {
            awaitedWriteFailed(session, fault, once);
        }
    }

    /** A frame whose outcome {@code written} waits for could not be written: logged once, counted, told. */
    private void awaitedWriteFailed(Session session, RuntimeException fault, Written written) {
        metrics.faults.incrementAndGet();
        LOG.error("fault writing a frame whose delivery is awaited to {}; it counts as not written", session, fault);
        written.outcome(false);
    }

    /** Passes on the first outcome only: a fault after the write was handed over must not count it twice. */
    private static final class OnceWritten implements Written {
        private final Written delegate;
        private final AtomicBoolean told = new AtomicBoolean();

        OnceWritten(Written delegate) {
            this.delegate = delegate;
        }

        @Override
        public void outcome(boolean written) {
            if (told.compareAndSet(false, true)) {
                delegate.outcome(written);
            }
        }
    }

    /**
     * {@link #answerAfter} for an answer that its path hands to the outbox itself (through
     * {@link #sendInOrder}, {@link #send} or {@link #broadcast}) before {@code handedOn} completes:
     * the connection's edge answers given after this call wait until then. {@code handedOn} must
     * complete on every path (a failure counts as completed).
     */
    public void answeredWhen(Session session, CompletionStage<?> handedOn) {
        answerAfter(session, handedOn, (ignored, failure) -> { });
    }

    /** Like {@link #sendInOrder(Session, String)}, and tells {@code written} whether the frame reached the socket. */
    void sendInOrder(Session session, String text, Written written) {
        inOrder(session, () -> send(session, text, written));
    }

    /**
     * {@link #sendInOrder(Session, String, Written)} for a frame addressed to the session's name,
     * held as {@link #sendNamed} holds it: a refused admission tells {@code written} false.
     */
    void sendNamedInOrder(Session session, String text, Written written) {
        inOrder(session, () -> session.deliverWhenAdmitted(() -> send(session, text, written),
                () -> written.outcome(false)));
    }

    /**
     * Runs a private {@code write} on the outbox thread, after everything handed to it before: at
     * once on that thread; from any other, as an answer ({@link #answerAfter}) that the
     * connection's later edge answers wait for. Should the thread refuse it, it runs here instead
     * (logged, counted: it may be out of order, but is never dropped).
     */
    private void inOrder(Session session, Runnable write) {
        if (executor.inEventLoop()) {
            write.run();
            return;
        }
        // refused: written here, before the edge answers waiting for this one are let go
        answerAfter(session, NOTHING, (ignored, none) -> write.run(), () -> {
            if (!executor.isShuttingDown()) {
                metrics.faults.incrementAndGet();
                LOG.error("the outbox thread's queue is full ({} tasks); a private frame is written out of order"
                        + " without it", queuedTasks());
            }
            write.run();
        });
    }

    /**
     * From now on every broadcast (in commit order, on the outbox thread) and every frame passed
     * to {@link #mirror(String)} is also handed to {@code sink}, which must not block.
     */
    public void mirrorTo(java.util.function.Consumer<String> sink) {
        this.mirror = sink;
    }

    /** Hands a fanned-out frame that is not a broadcast (a private-directed or channel chat) to the mirror. */
    public void mirror(String text) {
        java.util.function.Consumer<String> m = mirror;
        if (m != null) {
            m.accept(text);
        }
    }

    /** Sends a frame to every connection allowed to receive broadcasts (from any thread, in one global order). */
    public void broadcast(ObjectNode frame) {
        broadcast(frames.write(frame), null);
    }

    /**
     * Sends a serialised frame to every connection allowed to receive broadcasts; {@code origin}
     * (the requester, may be null) gets it at once, the others after the broadcast linger.
     * Called off the outbox thread, the broadcast is handed to it first.
     */
    public void broadcast(String text, Session origin) {
        publish(text, origin, true);
    }

    /**
     * Sends a serialised frame to every loud connection (those taking every broadcast); quiet
     * ones (scoped delivery) are left to the caller, which sends them their share privately.
     * Outbox thread only.
     */
    void broadcastLoud(String text, Session origin) {
        publish(text, origin, false);
    }

    private void publish(String text, Session origin, boolean universal) {
        if (!executor.inEventLoop()) {
            // refused only when stopping, or (a logged fault) full: then no thread can order it
            offer(() -> publish(text, origin, universal), "a broadcast is dropped");
            return;
        }
        if (batch != null && batchUniversal != universal) {
            dispatch(); // a batch has one audience: the next frame starts another, in order
        }
        mirror(text); // lines are written even when no socket is open (A5.2)
        boolean dispatchNow = false;
        if (batch == null) {
            batchUniversal = universal;
            if (executor.isShuttingDown()) {
                return;
            }
            dispatchNow = !offer(dispatchTask, "a broadcast goes out unbatched");
            batch = PooledByteBufAllocator.DEFAULT.directBuffer(Math.max(256, text.length() + 16));
            batchStartedAt = System.nanoTime();
            batchesStarted++;
        }
        WebSocketText.encode(text, batch);
        if (origin != null) {
            origins.add(origin);
        }
        if (dispatchNow) {
            dispatch();
        }
    }

    /**
     * Sends one serialised frame to one connection from the outbox thread, so it follows every
     * reply and broadcast published before it (for callers on an I/O thread).
     */
    public void sendInOrder(Session session, String text) {
        inOrder(session, () -> write(session, text));
    }

    /**
     * Like {@link #sendInOrder(Session, String)} for a frame already written as UTF-8 JSON (a
     * large reply serialised straight to bytes: no String, no second encoding); takes ownership
     * of {@code utf8}.
     */
    public void sendInOrder(Session session, ByteBuf utf8) {
        inOrder(session, () -> send(session, utf8));
    }

    private void send(Session session, ByteBuf utf8) {
        onLoop(session, false, () -> {
            Channel channel = session.channel();
            if (channel.isActive() && !overLimit(session)) {
                channel.writeAndFlush(new TextWebSocketFrame(utf8));
            } else {
                utf8.release();
            }
        }, utf8::release);
    }

    /**
     * Sends {@code before} (if any), then a close frame with {@code code}/{@code reason}, then
     * closes; off the outbox thread after the answers to the connection's earlier requests.
     */
    public void close(Session session, ObjectNode before, int code, String reason) {
        session.markClosing();
        String text = before == null ? null : frames.write(before);
        afterEarlierAnswers(session, () -> onLoop(session, true, () -> {
            Channel channel = session.channel();
            if (!channel.isActive()) {
                return;
            }
            if (text != null) {
                channel.write(new TextWebSocketFrame(text));
            }
            closeGracefully(channel, new CloseWebSocketFrame(code, reason));
        }, () -> { }));
    }

    /**
     * Runs a private write on the session's event loop once the session has every broadcast
     * published before it: from the outbox thread the pending batch is dispatched first. False
     * when the loop refused it (shutting down): the write will never run. Should catching the
     * session up fail, {@code abandon} runs instead of a (non-closing) write: see {@link #catchUpFailed}.
     */
    private boolean onLoop(Session session, boolean closing, Runnable write, Runnable abandon) {
        if (executor.inEventLoop()) {
            dispatch();
        }
        EventLoop loop = session.channel().eventLoop();
        Runnable ordered = () -> {
            LoopFanout fanout = fanouts.get(loop);
            if (fanout != null) {
                try {
                    if (closing) {
                        fanout.finish(session);
                    } else {
                        fanout.catchUp(session);
                    }
                } catch (RuntimeException fault) {
                    catchUpFailed(session, closing, fault, abandon);
                    if (!closing) {
                        return;
                    }
                }
            }
            write.run();
        };
        if (loop.inEventLoop()) {
            ordered.run();
            return true;
        }
        try {
            loop.execute(ordered);
            return true;
        } catch (RejectedExecutionException shuttingDown) {
            return false; // the connection's loop is shutting down: nothing left to write to
        }
    }

    /**
     * Shutdown, before the I/O loops stop: hands out what was broadcast so far, lingering or not,
     * to every connection still open. Waits at most {@code timeoutMillis} per thread.
     */
    public void deliverPending(long timeoutMillis) {
        try {
            executor.submit(this::dispatch).await(timeoutMillis);
            for (LoopFanout fanout : fanouts.values()) {
                fanout.loop().submit(fanout::deliverAll).await(timeoutMillis);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RejectedExecutionException alreadyStopping) {
            // nothing left to deliver to
        }
    }

    /**
     * Catching {@code session} up with the broadcasts before a private frame failed (event loop):
     * it may have missed some of them, so the frame must not follow. Logged once, counted as a
     * fault, the frame abandoned ({@code abandon}: a waiting {@link Written} is told it was not
     * written), and the connection closed 1011, its state in doubt; a close the hub was already
     * making (its {@code closing} write, run by the caller) goes ahead instead.
     */
    private void catchUpFailed(Session session, boolean closing, RuntimeException fault, Runnable abandon) {
        metrics.faults.incrementAndGet();
        LOG.error("fault catching {} up with the broadcasts before a private frame; {}", session,
                closing ? "closing it as asked" : "the frame is dropped and the connection closed 1011", fault);
        if (closing) {
            return;
        }
        try {
            abandon.run();
        } finally {
            session.markClosing();
            Channel channel = session.channel();
            try {
                closeGracefully(channel, new CloseWebSocketFrame(1011, "unexpected fault"));
            } catch (RuntimeException closeFailed) { // the pipeline itself is broken: no close frame then
                channel.close();
            }
        }
    }

    /** Hands the collected batch to every event loop (outbox thread). */
    private void dispatch() {
        ByteBuf frames = batch;
        if (frames == null) {
            return;
        }
        List<Session> from = origins;
        long publishedAt = batchStartedAt;
        boolean universal = batchUniversal;
        batch = null;
        origins = new ArrayList<>();
        List<LoopFanout> loops = new ArrayList<>(fanouts.values());
        // the loops share one buffer: its bytes count once in the backlog
        BacklogShare backlog = new BacklogShare(metrics.fanoutBacklogBytes, frames.readableBytes(), loops.size());
        try {
            for (LoopFanout fanout : loops) {
                List<Session> mine = new ArrayList<>(0);
                for (Session origin : from) {
                    if (origin.channel().eventLoop() == fanout.loop()) {
                        mine.add(origin); // a loop touches only its own sessions
                    }
                }
                ByteBuf share = frames.retainedDuplicate();
                fanout.handOver(publishedAt, universal); // waiting from now, for admission by fan-out delay
                try {
                    fanout.loop().execute(() -> fanout.acceptHandedOver(share, mine, publishedAt, backlog, universal));
                } catch (RejectedExecutionException shuttingDown) {
                    fanout.handOverRefused();
                    share.release(); // the loop and its connections are going away
                    backlog.release();
                }
            }
        } finally {
            frames.release();
            batchesDispatched = batchesStarted; // after the hand-overs: an edge answer may follow them now
        }
    }

    private boolean deliverable(Session session) {
        return !session.closing() && deliverableWhileClosing(session);
    }

    private boolean deliverableWhileClosing(Session session) {
        return session.authenticated() && session.channel().isActive() && !overLimit(session);
    }

    /** How long a closed-by-the-hub peer has to answer the close frame before TCP is closed. */
    private static final long CLOSE_GRACE_MILLIS = 500;

    /**
     * Sends the close frame, then closes TCP when the peer answers it (the protocol handler does
     * that) or after a short grace. Closing TCP at once while the peer's next frames are still
     * unread makes the kernel reset the connection, and a reset can discard the close frame (and
     * with it the close code) before the client reads it.
     */
    public static void closeGracefully(Channel channel, CloseWebSocketFrame close) {
        channel.writeAndFlush(close).addListener(done -> channel.eventLoop()
                .schedule(() -> channel.close(), CLOSE_GRACE_MILLIS, java.util.concurrent.TimeUnit.MILLISECONDS));
    }

    private boolean overLimit(Session session) {
        return overLimit(session, 0);
    }

    /**
     * True (and the connection dropped as a slow reader) when what its socket has yet to write,
     * plus {@code heldBytes} of broadcasts held for its close, is over the hard limit.
     */
    private boolean overLimit(Session session, long heldBytes) {
        ChannelOutboundBuffer buffer = session.channel().unsafe().outboundBuffer();
        if (buffer != null && buffer.totalPendingWriteBytes() + heldBytes > hardLimitBytes) {
            if (session.dropAsSlowReader()) {
                metrics.slowReadersDisconnected.incrementAndGet();
            }
            session.channel().close();
            return true;
        }
        return false;
    }
}
