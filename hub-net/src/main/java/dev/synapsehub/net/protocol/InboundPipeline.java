package dev.synapsehub.net.protocol;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.Clock;
import dev.synapsehub.core.PythonWhitespace;
import dev.synapsehub.core.SpecConstants;
import dev.synapsehub.core.actor.CoordinationActor;
import dev.synapsehub.core.actor.Outcome;
import dev.synapsehub.net.HubConfig;
import dev.synapsehub.net.auth.AuthThrottle;
import dev.synapsehub.net.auth.ConnectTokenAuth;
import dev.synapsehub.net.auth.MessageAuthenticator;
import dev.synapsehub.net.auth.SigningTime;
import dev.synapsehub.net.extension.HubExtensions;
import dev.synapsehub.net.extension.ClaimService;
import dev.synapsehub.core.actor.ResponseRenderer;
import dev.synapsehub.core.event.IdentityPinReclaimEvent;
import dev.synapsehub.core.journal.JournaledEvent;
import dev.synapsehub.core.messaging.AddressMatcher;
import dev.synapsehub.core.messaging.ChatFrameRenderer;
import dev.synapsehub.core.reply.Reply;
import dev.synapsehub.net.session.Session;
import dev.synapsehub.net.session.SessionRegistry;
import dev.synapsehub.net.wire.AgentNames;
import dev.synapsehub.net.wire.FieldCoercion;
import dev.synapsehub.net.wire.HubFrames;
import dev.synapsehub.net.wire.PythonFloatFormat;
import dev.synapsehub.net.wire.WireJson;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The inbound processing pipeline of contract §4.3, run on the connection's event loop:
 * decode, shape checks, normalisation, token, name binding, rate limit, HMAC gate, dispatch.
 * It never blocks and never touches coordination state (that goes through the actor).
 */
public final class InboundPipeline {
    private static final Logger LOG = LoggerFactory.getLogger(InboundPipeline.class);
    private static final List<String> ROUTING_FIELDS = List.of("sender", "target", "type", "channel");
    /**
     * The registration secret (§3.5): read by registration, then never echoed, stored or relayed
     * (ours; the reference echoes it in chat). {@code lease} and {@code takeover} are no secrets and
     * stay, as A6 echoes every other member verbatim.
     */
    private static final String REGISTRATION_SECRET = "owner_lease";
    /**
     * The per-message results that can be a guess of a key (a wrong MAC): they count against the
     * host's {@link AuthThrottle}. An unknown key id is not: it reveals nothing a guesser could use
     * (the MAC is never computed), and after a key rotation it is what an agent still signing with
     * its retired key gets on every frame, which must not lock out its healthy neighbours. A stale
     * timestamp or a replay is a client's clock or retry, not a guess.
     */
    private static final Set<String> GUESSES = Set.of("bad_authentication");
    /**
     * The close of a first frame from a host in its {@link AuthThrottle} back-off: a capacity
     * refusal (contract §3.2: 4014 with "too many"), which clients retry, not 4010 "auth", which
     * they take as their own bad token and stop for good.
     */
    private static final int AUTH_THROTTLED_CLOSE_CODE = 4014;
    private static final String AUTH_THROTTLED_CLOSE_REASON = "too many failed authentication attempts";

    /** Set once the hub is stopping ({@link #stopping()}). */
    private volatile boolean stopping;
    private final Services hub;
    /** Numbers the {@code anon-N} names of unnamed senders on an open hub. */
    private final AtomicLong anonymousNames = new AtomicLong();
    private final ClaimVerbs claims;
    private final QueryVerbs queries;
    private final BoardVerbs board;
    private final MessagingVerbs messaging;
    private final CapabilityCards cards;
    private final VerbSupport support;
    private final UnavailableFeatureVerbs unavailable;
    private final ChannelVerbs channels;
    private final DeliveryVerbs delivery;
    private final IdentityPinGate pins;
    private final IdentityPinReclaimVerb pinReclaim;
    private final MemoryVerbs memory;
    private final GuardEvidenceVerb guardEvidence;
    private final DeferredReplays deferredReplays;
    /** {@code --host-rate}'s buckets, or null when it is off. */
    private final dev.synapsehub.net.session.HostRates hostRates;

    /**
     * What the pipeline and the verbs it builds use, wired once by {@code HubServer}: every
     * verb is built here, so this is the union of their needs (each verb gets only its part).
     *
     * @param authThrottle the per-host throttle of failed connect-token and HMAC checks
     * @param configEpoch fingerprint of the effective configuration (who_snapshot)
     * @param journaled whether the hub has a durable journal: seqs on chats, mailbox, deferred receipts
     * @param history historical reads of the journal (mailbox replay, ack resolution), off the writer
     * @param extensions the modules plugged in by the composition root (federation), possibly none
     */
    public record Services(
            HubConfig config,
            CoordinationActor actor,
            Clock clock,
            WireJson json,
            HubFrames frames,
            SessionRegistry registry,
            Outbox outbox,
            HubMetrics metrics,
            ConnectTokenAuth tokens,
            AuthThrottle authThrottle,
            MessageAuthenticator messageAuth,
            String configEpoch,
            boolean journaled,
            HistoricalReads history,
            HubExtensions extensions) {
    }

    public InboundPipeline(Services hub) {
        this.hub = hub;
        // each verb gets the parts of the hub it uses, and no more
        this.support = new VerbSupport(hub.actor(), hub.outbox(), hub.frames(), hub.json(), hub.metrics(),
                hub.clock()); // one for every verb: it holds no state of its own
        this.cards = new CapabilityCards(hub.actor(), hub.outbox(), hub.frames(), hub.json(), hub.clock());
        this.board = new BoardVerbs(support, cards, hub.actor(), hub.outbox(), hub.frames(), hub.json(),
                hub.extensions());
        LivenessSettings liveness = LivenessSettings.of(hub.config());
        this.messaging = new MessagingVerbs(support, hub.actor(), hub.history(), hub.registry(), hub.outbox(),
                hub.frames(), hub.json(), hub.metrics(), hub.extensions()::deadLetterEscalated,
                new MessagingVerbs.Settings(hub.journaled(), hub.config().privateDirectedMessages(),
                        hub.config().maxFrameBytes(), liveness));
        this.claims = new ClaimVerbs(support, board, hub.registry(), hub.outbox(), hub.frames(),
                hub.json(), hub.metrics());
        this.queries = new QueryVerbs(support, board, hub.actor(), hub.registry(), hub.outbox(), hub.frames(),
                hub.extensions(), new QueryVerbs.WhoFacts(hub.config().hubVersion(), hub.configEpoch(),
                        hub.journaled(), liveness));
        this.unavailable = new UnavailableFeatureVerbs(hub.outbox(), hub.frames(), hub.clock());
        this.channels = new ChannelVerbs(support, hub.actor(), hub.frames(), hub.outbox(), hub.config().maxFrameBytes());
        this.delivery = new DeliveryVerbs(hub.outbox(), hub.frames(), hub.clock());
        this.pins = new IdentityPinGate(hub.config().identityPins(), hub.actor(), hub.outbox(), hub.frames(),
                hub.metrics(), hub.clock());
        this.pinReclaim = new IdentityPinReclaimVerb(support, hub.actor(), hub.registry(), hub.outbox(),
                hub.frames(), hub.config().identityPins(), hub.config().leaseOfflineTtlSeconds(),
                liveness, hub.journaled(),
                hub.extensions()::presenceIsNodeLocal);
        this.memory = new MemoryVerbs(support, hub.outbox(), hub.frames(), hub.json(), hub.metrics(),
                hub.journaled(), hub.config().maxFindingsPerAgent());
        this.guardEvidence = new GuardEvidenceVerb(support, hub.outbox(), hub.frames(), hub.journaled(),
                hub.config().token());
        this.deferredReplays = new DeferredReplays(this::busyReason, hub.registry(), new DeferredReplays.Replay() {
            @Override
            public CompletableFuture<Void> replay(Session session, String name, ObjectNode registration,
                    Consumer<Throwable> unserved) {
                return messaging.replayDeferred(session, name, registration, unserved);
            }
        }, hub.metrics());
        this.hostRates = hub.config().hostRatePerSecond() > 0
                ? new dev.synapsehub.net.session.HostRates(hub.config().hostRatePerSecond(), hub.config().hostRateBurst())
                : null;
    }

    /** The hub's claim path, as extensions use it to decide claims on behalf of another hub. */
    public ClaimService claimService() {
        return new ClaimService() {
            @Override
            public void claimOnBehalf(Request claim, String principal, String ledgerScope, Answer answer) {
                claims.claimOnBehalf(claim, principal, ledgerScope, answer);
            }

            @Override
            public boolean answerIfKeyed(Request claim, String ledgerScope, Answer answer) {
                return claims.answerIfKeyed(claim, ledgerScope, answer);
            }
        };
    }

    /**
     * The stored-response renderer of a keyed request decided on this node for another mesh
     * node's agent: the same frame its own node would have stored.
     */
    public ResponseRenderer storedResponse(RequestContext origin) {
        Request r = origin.detached();
        if (ClaimVerbs.renders(r.type())) {
            return (reply, at) -> hub.frames().write(claims.renderer(r).render(reply, at));
        }
        if (BoardVerbs.handles(r.type())) {
            return (reply, at) -> hub.frames().write(board.renderer(r).render(reply, at));
        }
        var extension = hub.extensions().handler(r.type());
        var rendered = extension == null ? null : extension.storedResponse(r);
        if (rendered != null) {
            return rendered;
        }
        throw new IllegalArgumentException("verb '" + r.type() + "' keeps no stored response");
    }

    /** The frame renderer of a chat decided on this node for another mesh node's agent. */
    public ChatFrameRenderer chatFrame(RequestContext origin) {
        return messaging.chatRenderer(origin.detached());
    }

    /**
     * Publishes to this node's connections a decision committed for another mesh node's agent:
     * what every connection but the requester's would see (that node answers its agent). Runs on
     * the outbox thread, in order with this node's own publications.
     */
    public void publishCommitted(RequestContext origin, Reply reply, String stored, List<JournaledEvent> committed) {
        hub.outbox().executor().execute(() -> {
            try {
                CommittedDecision d = new CommittedDecision(origin.detached(), reply, stored, committed,
                        hub.clock().nowSeconds());
                String type = d.request().type();
                if (ClaimVerbs.renders(type)) {
                    claims.publishCommitted(d);
                } else if (BoardVerbs.handles(type)) {
                    board.publishCommitted(d);
                } else if (MessagingVerbs.handles(type)) {
                    messaging.publishCommitted(d);
                } else if (IdentityPinReclaimVerb.TYPE.equals(type)) {
                    pinReclaim.publishCommitted(d);
                } else if (hub.extensions().handler(type) != null) {
                    hub.extensions().handler(type).publishCommitted(d.request(), d.reply());
                }
            } catch (RuntimeException fault) {
                hub.metrics().faults.incrementAndGet();
                LOG.warn("cannot publish a committed {} of another node", origin.type(), fault);
            }
        });
    }

    /**
     * Ends on this node what events committed for another mesh node end on every node, whether
     * or not the decision is announced here (a node catching up applies history silently): an
     * applied identity-pin reclaim closes the name's socket and revokes its lease. Runs on the
     * outbox thread, in order with this node's publications; should that thread refuse it, on
     * the calling thread (an eviction is never dropped: the old holder would keep a live lease).
     */
    public void appliedRemote(List<JournaledEvent> committed) {
        hub.outbox().runInOrderOrHere(() -> {
            try {
                for (JournaledEvent j : committed) {
                    if (j.event() instanceof IdentityPinReclaimEvent reclaim && reclaim.applied()) {
                        pinReclaim.evict(reclaim.pinName());
                    }
                }
            } catch (RuntimeException fault) {
                hub.metrics().faults.incrementAndGet();
                LOG.warn("cannot end here what another node's committed events end", fault);
            }
        }, "ending what another node's committed events end");
    }

    /**
     * Ends on this node identity pins a state replaced from a mesh snapshot no longer holds (a
     * reclaim this node never applied as a record): as for an applied reclaim, each name's socket
     * is closed and its ownership lease revoked. Runs on the outbox thread, in order with
     * {@link #appliedRemote}; should that thread refuse it, on the calling thread (never dropped).
     */
    public void pinsEnded(List<String> names) {
        List<String> ended = List.copyOf(names);
        hub.outbox().runInOrderOrHere(() -> {
            for (String name : ended) {
                try {
                    pinReclaim.evict(name);
                } catch (RuntimeException fault) {
                    hub.metrics().faults.incrementAndGet();
                    LOG.warn("cannot end here the identity pin of {} a snapshot ended", name, fault);
                }
            }
        }, "ending the identity pins a snapshot ended");
    }

    /** Open hub: the private {@code welcome} sent at connect, before any frame. */
    public void onAdmitted(Session session) {
        if (!hub.config().secured()) {
            hub.outbox().send(session, welcome(hub.registry().online(), hub.registry().connectedClients()));
        }
    }

    /** One inbound text or binary frame. */
    public void onFrame(Session session, byte[] bytes) {
        if (session.closing()) {
            return;
        }
        if (session.holdingFrames()) {
            session.holdFrame(bytes); // the first frame is not finished: this one applies after it
            return;
        }
        double now = hub.clock().nowSeconds();
        WireJson.Decoded decoded = hub.json().decode(bytes);
        JsonNode node = decoded.node();
        if (decoded.illFormedUnicode()) {
            ObjectNode e = hub.frames().error("all", "Ill-formed Unicode: a string holds a lone UTF-16 surrogate"
                    + (decoded.field() == null ? "" : " (in '" + decoded.field() + "')")
                    + "; nothing was applied.", now);
            e.put("error_code", "invalid_unicode");
            if (decoded.field() != null) {
                e.put("field", decoded.field());
            }
            earlyError(session, e);
            return;
        }
        if (node == null) {
            earlyError(session, "Malformed JSON.", now);
            return;
        }
        if (!node.isObject()) {
            earlyError(session, "Malformed frame: expected a JSON object.", now);
            return;
        }
        ObjectNode frame = (ObjectNode) node;
        // §4.3 step 3: the host's bucket, heartbeats included. A keyed frame past it on a socket already
        // bound to its sender goes on only as far as the idempotency ledger (a keyed retry gets its first
        // answer); nothing past the limit binds, takes over or registers a name
        boolean hostLimited = hostRates != null && !hostRates.take(session.remoteHost(), System.nanoTime());
        if (hostLimited && !(keyedRequest(frame) && boundSender(session, frame))) {
            hostRateLimited(session, now);
            return;
        }
        for (String field : ROUTING_FIELDS) {
            if (FieldCoercion.notText(frame.get(field))) {
                earlyError(session, "Malformed frame: '" + field + "' must be a string.", now);
                return;
            }
        }
        String token = FieldCoercion.text(frame.get("token"));
        // the identity proof signs the frame as received, connect token included (A2.2)
        ObjectNode asReceived = session.name() == null && pins.wantsReceived(frame) ? frame.deepCopy() : null;
        frame.remove("token");
        ObjectNode received = hub.messageAuth().appliesTo(normalisedType(frame)) ? frame.deepCopy() : null;

        String sender = strip(FieldCoercion.text(frame.get("sender")));
        if (sender.isEmpty()) {
            sender = "anon-" + anonymousNames.incrementAndGet();
        }
        String type = normalisedType(frame);
        String target = FieldCoercion.text(frame.get("target"));
        if (target == null || target.isEmpty()) {
            target = "all";
        }
        boolean unbound = session.name() == null;
        if (unbound || !sender.equals(session.name())) { // a bound name passed these checks when it bound
            String refusal = AgentNames.refusal(sender);
            if (refusal != null) {
                ObjectNode e = hub.frames().error("all", "Invalid agent name: it " + refusal + ".", now);
                e.put("error_code", "invalid_name");
                e.put("field", "sender");
                if (unbound) {
                    hub.outbox().close(session, e, 4010, "invalid name");
                } else { // a bound socket's frame under another name is a name switch, whatever that name is (§3.4)
                    hub.outbox().close(session, nameConflict(session.name(), "Sender name switch denied: '"
                            + session.name() + "' -> an invalid name (it " + refusal + "). Reconnect with a new --name.",
                            now), 4009, "name switch");
                }
                return;
            }
        }
        if ((unbound || !sender.equals(session.name())) && AgentNames.reserved(sender)) {
            hub.outbox().close(session, nameConflict(sender, "Name '" + sender
                    + "' is reserved for hub protocol provenance. Choose a non-reserved agent name.", now),
                    4009, "reserved identity");
            return;
        }
        Inbound in = new Inbound(session, frame, received, sender, type, target, hostLimited, now);
        if (session.name() == null) {
            register(in, asReceived, token); // dispatches the frame once admitted, possibly later
            return;
        }
        if (!sender.equals(session.name())) {
            hub.outbox().close(session, nameConflict(session.name(), "Sender name switch denied: '"
                    + session.name() + "' -> '" + sender + "'. Reconnect with a new --name.", now), 4009, "name switch");
            return;
        }
        hub.registry().touch(session, now, !"heartbeat".equals(type));
        dispatch(in, false);
    }

    /**
     * A frame past the shape checks, on its way to binding (a first frame) and dispatch.
     *
     * @param received the frame kept for the per-message HMAC gate, else null
     * @param hostLimited the host's rate bucket was empty (a keyed retry may still be answered)
     */
    private record Inbound(Session session, ObjectNode frame, ObjectNode received, String sender, String type,
            String target, boolean hostLimited, double now) {
        /** The same frame taken up again at {@code t}, after waiting for its name's turn. */
        Inbound at(double t) {
            return new Inbound(session, frame, received, sender, type, target, hostLimited, t);
        }
    }

    /** A frame from its bound sender (for {@code first}, the frame that just bound it): the verb. */
    private void dispatch(Inbound in, boolean first) {
        Session session = in.session();
        ObjectNode frame = in.frame();
        ObjectNode received = in.received();
        String sender = in.sender();
        String type = in.type();
        String target = in.target();
        boolean hostLimited = in.hostLimited();
        double now = in.now();
        frame.remove(REGISTRATION_SECRET); // the lease token protects the name: the hub keeps only its hash
        frame.put("sender", sender);
        frame.put("type", type);
        if ("heartbeat".equals(type)) {
            heartbeatSideEffects(session, sender, frame, now);
            BusyReason behind = FieldCoercion.truthy(frame.get("mailbox")) ? busyReason() : null;
            if (behind != null && first) {
                // this frame bound the name: it is not refused, only its replay waits
                if (hub.journaled()) {
                    deferredReplays.defer(session, sender, frame, null);
                }
                return;
            }
            if (behind != null) {
                busy(session, sender, now, behind); // the replay is work; the liveness refresh above is not
                return;
            }
            messaging.onHeartbeat(session, sender, frame, cause -> deferredReplays.defer(session, sender, frame, cause));
            return;
        }
        if (!"chat".equals(type)) {
            messaging.onActivity(sender); // a chat clears its sender's dead letter by itself
        }
        Request request = new Request(session, sender, type, target, frame);
        if (hostLimited) {
            if (!answeredFromLedger(request, received, now)) {
                hostRateLimited(session, now);
            }
            return;
        }
        if (hub.config().ratePerSecond() > 0
                && !session.takeRateToken(hub.config().ratePerSecond(), hub.config().rateBurst(), System.nanoTime())) {
            if (answeredFromLedger(request, received, now)) {
                return;
            }
            hub.metrics().rateLimited.incrementAndGet();
            ObjectNode e = hub.frames().error(sender, "Rate limit exceeded; slow down.", now);
            e.put("error_code", "rate_limited");
            hub.outbox().send(session, e);
            return;
        }
        if (received != null && !signedFrameVerified(session, sender, received, now)) {
            return;
        }
        BusyReason behind = busyReason();
        if (behind != null) {
            if (answeredFromLedger(request, null, now)) {
                return;
            }
            if (received != null) {
                hub.messageAuth().release(received, sender); // nothing applied: the resend must not be 'replayed'
            }
            busy(session, sender, now, behind);
            return;
        }
        if (!hub.extensions().admits(request)) { // the federation frame gate (F8): after auth, before the verb
            return;
        }
        if (ClaimVerbs.handles(type)) {
            // a keyed retry about to be refused or forwarded for ownership, which depends on the present moment (a
            // namespace turns partitioned when a peer asserts a claim in it), is answered from the ledger (INV-CR-1);
            // one decided here goes through the actor, in order with this connection's other replies
            Optional<Outcome> prior = "claim".equals(type) ? support.priorAnswer(request) : Optional.empty();
            if (prior.isPresent() && !hub.extensions().claimResolvesLocal(request)) { // ownership asked only then
                support.answerLater(request, prior.get());
                return;
            }
            if (!"claim".equals(type) || hub.extensions().claimIsLocal(request)) {
                claims.handle(request);
            }
        } else if (QueryVerbs.handles(type)) {
            queries.handle(request);
        } else if (MessagingVerbs.handles(type)) {
            messaging.handle(request);
        } else if (BoardVerbs.handles(type)) {
            board.handle(request);
        } else if (ChannelVerbs.handles(type)) {
            channels.handle(request);
        } else if (DeliveryVerbs.handles(type)) {
            delivery.handle(request);
        } else if (IdentityPinReclaimVerb.TYPE.equals(type)) {
            pinReclaim.handle(request);
        } else if (MemoryVerbs.handles(type)) {
            memory.handle(request);
        } else if (GuardEvidenceVerb.TYPE.equals(type)) {
            guardEvidence.handle(request);
        } else if (hub.extensions().handler(type) != null) {
            hub.extensions().handler(type).handle(request);
        } else if (!unavailable.answer(request)) {
            hub.outbox().send(session, hub.frames().error(sender, "Unknown message type '" + type + "'.", now));
        }
    }

    /**
     * A keyed retry of an applied mutation about to be refused for a reason of the present
     * moment (rate, busy) gets its first answer instead: such a check must never override it
     * (INV-CR-1). Authentication still comes first: {@code unverified} is the signed frame when
     * the HMAC gate has not run yet. True when the request was answered.
     */
    private boolean answeredFromLedger(Request request, ObjectNode unverified, double now) {
        Optional<Outcome> prior = support.priorAnswer(request);
        if (prior.isEmpty()) {
            return false;
        }
        if (unverified == null || signedFrameVerified(request.session(), request.sender(), unverified, now)) {
            support.answerLater(request, prior.get());
        }
        return true;
    }

    /** The per-message HMAC gate (§9); false after answering the refusal. */
    private boolean signedFrameVerified(Session session, String sender, ObjectNode received, double now) {
        long wait = hub.authThrottle().blockedFor(session.remoteHost()); // counted and logged by the throttle
        if (wait > 0) { // unchecked: the rate refusal of §4.3 (the socket is kept, as for a failed check)
            ObjectNode e = hub.frames().error(sender, "Too many failed authentication attempts from this host; retry in "
                    + wait + " s.", now);
            e.put("error_code", "rate_limited");
            hub.outbox().send(session, e);
            return false;
        }
        String result = hub.messageAuth().verify(received, sender, SigningTime.of(hub.clock())); // wall clock (INV-CK-2)
        if ("ok".equals(result)) {
            return true;
        }
        hub.metrics().authFailures.incrementAndGet();
        if (GUESSES.contains(result)) {
            hub.authThrottle().failed(session.remoteHost());
        }
        ObjectNode e = hub.frames().error(sender, "Per-message authentication failed: " + result + ".", now);
        e.put("verification_result", result);
        hub.outbox().send(session, e);
        return false;
    }

    /** First frame: token, then the rest in its name's turn ({@link #admitInTurn}). */
    private void register(Inbound in, ObjectNode asReceived, String token) {
        Session session = in.session();
        if (hub.tokens().secured()) {
            long wait = hub.authThrottle().blockedFor(session.remoteHost()); // counted and logged by the throttle
            if (wait > 0) { // the token is not even compared, so the refusal says nothing of it
                ObjectNode e = hub.frames().error(in.sender(), "Too many failed authentication attempts from this host;"
                        + " retry in " + wait + " s.", in.now());
                e.put("error_code", "rate_limited");
                hub.outbox().close(session, e, AUTH_THROTTLED_CLOSE_CODE, AUTH_THROTTLED_CLOSE_REASON);
                return;
            }
            String refusal = hub.tokens().check(token);
            if (refusal != null) {
                hub.metrics().authFailures.incrementAndGet();
                hub.authThrottle().failed(session.remoteHost());
                hub.outbox().close(session, hub.frames().envelope(in.sender(), "auth_denied", refusal, in.now()),
                        4010, "auth denied");
                return;
            }
            session.markAuthenticated();
            hub.outbox().skipQueuedBroadcasts(session);
        }
        admitInTurn(in, asReceived);
    }

    /**
     * Identity pin check, binding and the first frame, in the name's admission turn (see
     * {@code IdentityPinGate.turn}): while another socket's first frame for the name is being
     * admitted, this one waits (its later frames held) and is then checked against the pin that
     * one left, so a socket that loses a pin race is refused before it binds or changes anything.
     */
    private void admitInTurn(Inbound in, ObjectNode asReceived) {
        Session session = in.session();
        IdentityPinGate.Turn turn = pins.turn(in.sender());
        if (turn != null && !turn.taken()) {
            session.holdFrames();
            hub.metrics().identityPinWaits.incrementAndGet();
            turn.ended().whenComplete((done, never) -> onSessionLoop(session, () -> {
                if (session.closing() || !session.channel().isActive()) {
                    session.releaseFrames(); // closed while it waited: nothing of it applies
                    return;
                }
                admitInTurn(in.at(hub.clock().nowSeconds()), asReceived);
            }));
            return;
        }
        boolean pinning = false;
        try {
            pinning = admit(in, asReceived, turn);
        } finally {
            if (!pinning && turn != null) {
                turn.end();
            }
        }
        if (!pinning) {
            releaseHeld(session);
        }
    }

    /**
     * Pin check, then binding; the first frame applies at once, or, when its binding brings a
     * first-use pin, only once the writer decided that pin (it is refused 4013 if another key got
     * the name first). True when that decision is pending: it ends {@code turn} and releases the
     * frames held meanwhile.
     */
    private boolean admit(Inbound in, ObjectNode asReceived, IdentityPinGate.Turn turn) {
        Session session = in.session();
        String sender = in.sender();
        ObjectNode frame = in.frame();
        double now = in.now();
        IdentityPinGate.Admission identity = pins.check(session, asReceived, sender, now);
        if (!identity.admitted()) {
            return false;
        }
        session.principal(hub.tokens().principalFor(session.remoteHost()));
        boolean pinning = identity.pin() != null;
        if (pinning) {
            // before the bind makes the name visible: a fan-out finding it from then on holds its deliveries
            session.admissionPending();
        }
        SessionRegistry.Bind bind = hub.registry().bind(session, sender,
                FieldCoercion.truthy(frame.get("takeover")), FieldCoercion.text(frame.get("owner_lease")),
                FieldCoercion.truthy(frame.get("lease")), now);
        if (pinning && bind.kind() != SessionRegistry.Bind.Kind.BOUND) {
            session.admissionAbandoned(); // not bound: the name never became this socket's
        }
        switch (bind.kind()) {
            case OWNED:
                hub.outbox().close(session, nameConflict(sender, "Name '" + sender
                        + "' is protected by an ownership lease. Reconnect presenting its owner_lease token, wait "
                        + seconds(hub.config().leaseOfflineTtlSeconds())
                        + "s after its holder disconnects for the lease to lapse, or choose a unique --name.", now),
                        SpecConstants.NAME_OWNED_CLOSE_CODE, "name owned");
                return false;
            case OWNER_LEASED:
                hub.outbox().close(session, nameConflict(sender, "Name '" + sender + "' is the receive sidecar of '"
                        + AddressMatcher.logicalName(sender) + "', which is protected by an ownership lease. Reconnect"
                        + " presenting that name's owner_lease token, or choose a unique --name.", now),
                        SpecConstants.NAME_OWNED_CLOSE_CODE, "name owned");
                return false;
            case CONFLICT:
                hub.outbox().close(session, nameConflict(sender, "Name '" + sender
                        + "' is already online from another session. Use a unique --name.", now), 4009, "name conflict");
                return false;
            case TAKEOVER_COOLDOWN:
                hub.outbox().close(session, null, 4014, "takeover cooldown");
                return false;
            case TAKEOVER_QUARANTINE:
                hub.outbox().close(session, null, 4014, "takeover quarantine");
                return false;
            default:
                break;
        }
        if (session.authTimer() != null) {
            session.authTimer().cancel(false);
        }
        if (bind.superseded() != null) {
            hub.metrics().takeovers.incrementAndGet();
            hub.outbox().close(bind.superseded(), null, 4010, "superseded");
        }
        if (!pinning) {
            bound(in, bind);
            return false;
        }
        // only once the name is bound (A10.3); the frame waits for the decision, so a refused one applies nothing.
        // Deliveries addressed to the name wait too (held since before the bind): until the welcome, the client
        // is not admitted
        session.admissionBound(bind.joined());
        session.holdFrames();
        // the lease this bind made goes with a refusal, before the socket's close unbinds the name (and before
        // the next turn): the pin's owner binding next never meets it
        Runnable revokeLease = () -> {
            if (bind.leaseToken() != null) {
                hub.registry().revokeLease(sender);
            }
        };
        pins.pinAfterBinding(session, identity.pin(), revokeLease).whenComplete((admitted, fault) -> {
            try {
                if (fault != null) {
                    revokeLease.run(); // closed 1011 below: not admitted either
                }
            } finally {
                if (turn != null) {
                    turn.end(); // the pin is committed and visible: the next first frame is checked against it
                }
            }
            onSessionLoop(session, () -> {
                if (fault != null) {
                    hub.metrics().faults.incrementAndGet();
                    LOG.warn("cannot finish the registration of '{}' after its pin decision; closing 1011", sender,
                            fault);
                    hub.outbox().close(session, null, 1011, "unexpected fault");
                } else if (Boolean.TRUE.equals(admitted) && !session.closing() && session.channel().isActive()) {
                    bound(in, bind);
                }
                // not admitted (bound() decided it otherwise): its deliveries dropped
                heldDropped(sender, session.admissionDecided(false), "its admission was refused");
                releaseHeld(session);
            });
        });
        return true;
    }

    /** The name bound and admitted: lease, welcome, presence, then the first frame's verb. */
    private void bound(Inbound in, SessionRegistry.Bind bind) {
        Session session = in.session();
        String sender = in.sender();
        ObjectNode frame = in.frame();
        double now = in.now();
        if (bind.leaseToken() != null) {
            ObjectNode lease = hub.frames().envelope(sender, "lease_granted", "Ownership lease granted for '"
                    + sender + "'. Persist the token and present it as owner_lease on every reconnect.", now);
            lease.put("owner_lease", bind.leaseToken());
            lease.put("lease_name", sender);
            hub.outbox().send(session, lease);
        }
        if (hub.config().secured()) {
            hub.outbox().send(session, welcome(bind.onlineAgents(), bind.connectedClients()));
        }
        delivery.onRegistered(session, frame, now); // before presence: the joiner's own mode applies to it
        messaging.onBound(session, sender); // owed receipts first, then presence (§3.7 step 4)
        if (bind.joined()) {
            Supplier<String> joined = () -> hub.frames().write(presence("joined", sender, now));
            hub.outbox().scoped().presence(presenceFannedOut() ? joined : null, joined, session, sender);
        }
        session.admissionDecided(true); // deliveries that waited for its pin decision, after its welcome
        dispatch(in, true);
    }

    /**
     * Logs, once per admission, the deliveries held for it that were dropped (each chat counted
     * in {@code synapse_held_deliveries_dropped_total} as it is dropped; receipts stay owed).
     */
    private static void heldDropped(String name, int dropped, String why) {
        if (dropped > 0) {
            LOG.info("{} deliveries held for '{}' were dropped: {} (chats are replayed at its next registration"
                    + " only with a journal; receipts stay owed)", dropped, name, why);
        }
    }

    /** The first frame is finished: the frames read meanwhile, in order. */
    private void releaseHeld(Session session) {
        if (session.holdingFrames()) {
            for (byte[] later : session.releaseFrames()) {
                onFrame(session, later); // a closing session drops them
            }
        }
    }

    /**
     * Takes a first frame up again on its connection's event loop (after the writer or another
     * socket's turn). A fault there is logged, counted and closes the connection 1011, as a
     * fault in a frame read would.
     */
    private void onSessionLoop(Session session, Runnable step) {
        Runnable guarded = () -> {
            try {
                step.run();
            } catch (RuntimeException fault) {
                hub.metrics().faults.incrementAndGet();
                LOG.warn("unexpected fault on {}; closing 1011", session, fault);
                hub.outbox().close(session, null, 1011, "unexpected fault");
            }
        };
        try {
            session.channel().eventLoop().execute(guarded);
        } catch (RejectedExecutionException stopping) {
            LOG.debug("{} is closing with the hub: its first frame is dropped", session);
        }
    }

    /** Socket closed: unbind, presence {@code left} (contract §3.8). Claims are not released. */
    public void onClosed(Session session) {
        if (session.authTimer() != null) {
            session.authTimer().cancel(false);
        }
        double now = hub.clock().nowSeconds();
        SessionRegistry.Departure departure = hub.registry().remove(session, now);
        // gone before its pin decision: nothing waits for it any more
        heldDropped(session.name(), session.admissionDecided(false), "its socket closed before its pin decision");
        if (departure.left()) {
            cards.dropFor(departure.name());
        }
        if (departure.left() && !session.joinUnannounced()) { // never announced joined: no left either
            Supplier<String> left = () -> hub.frames().write(presenceFrame("left", departure.name(),
                    departure.onlineAgents(), now));
            hub.outbox().scoped().presence(presenceFannedOut() ? left : null, left, session, departure.name());
        }
        hub.outbox().scoped().forget(session);
    }

    /** No first frame within the auth timeout. */
    public void onAuthTimeout(Session session) {
        if (session.name() == null && !session.closing()) {
            hub.outbox().close(session, null, 4012, hub.config().secured() ? "auth timeout" : "registration timeout");
        }
    }

    private void heartbeatSideEffects(Session session, String sender, ObjectNode frame, double now) {
        JsonNode roles = frame.get("roles");
        if (roles != null && roles.isArray()) {
            Set<String> clean = new LinkedHashSet<>();
            for (JsonNode role : roles) {
                if (role.isTextual() && !PythonWhitespace.isBlank(role.textValue()) && clean.size() < 64) {
                    clean.add(PythonWhitespace.strip(role.textValue()));
                }
            }
            List<String> refused = new ArrayList<>();
            clean.removeIf(role -> {
                String why = roleRefusal(sender, role, now);
                return why != null && refused.add("'" + role + "' (" + why + ")");
            });
            // told once per change: a keepalive declaring the same roles every 20 s gets no error each time
            // (a one-shot client would take it for its command's answer); they are dropped every time
            if (session.refusedRolesChanged(refused.isEmpty() ? null : String.join(", ", refused))
                    && !refused.isEmpty()) {
                hub.metrics().authFailures.incrementAndGet();
                ObjectNode e = hub.frames().error(sender, "Roles refused: " + String.join(", ", refused)
                        + ". A role is an address of its own, never another agent's name; the other roles apply.", now);
                e.put("error_code", "role_refused");
                e.put("field", "roles");
                hub.outbox().send(session, e);
            }
            hub.registry().roles(sender, new ArrayList<>(clean));
        }
        JsonNode wake = frame.get("wake_capability");
        if (wake != null) { // absent keeps the declaration; null, like any non-string, clears it (A7)
            String w = wake.isTextual()
                    ? PythonWhitespace.strip(wake.textValue()).toLowerCase(Locale.ROOT).replace('-', '_') : "";
            switch (w) {
                case "direct":
                case "passive":
                case "pane_bridge":
                    break;
                default:
                    w = "unknown";
            }
            hub.registry().wake(sender, w);
        }
    }

    /**
     * Why {@code role} may not be declared by {@code sender}, or null: a role equal to another
     * agent's bound, leased or pinned name would receive that agent's directed (and private) chats
     * (ours: the contract is silent). The sender's own name and logical owner are its own.
     */
    private String roleRefusal(String sender, String role, double now) {
        if (role.equals(sender) || role.equals(AddressMatcher.logicalName(sender))) {
            return null;
        }
        if (hub.registry().session(role) != null) {
            return "the name of a connected agent";
        }
        if (hub.registry().leaseLive(role, now)) {
            return "a name held by an ownership lease";
        }
        if (hub.actor().committedPin(role).isPresent()) {
            return "a pinned agent name";
        }
        return null;
    }

    private ObjectNode welcome(List<String> online, int connected) {
        ObjectNode f = hub.frames().envelope("self", "welcome", "Welcome to Synapse", hub.clock().nowSeconds());
        f.put("connected_clients", connected);
        HubFrames.putStrings(f, "online_agents", online);
        f.put("protocol_version", SpecConstants.WIRE_PROTOCOL_VERSION);
        return f;
    }

    /**
     * Why every request is answered busy now, or null: more broadcast bytes wait for their
     * sockets than {@code --max-fanout-backlog-mb}, an I/O loop owes its sockets more writes
     * than {@code --max-fanout-writes}, or a broadcast has waited for one of them longer than
     * {@code --max-fanout-delay-ms} (a batch is small in bytes but costs one write per socket,
     * so the bytes alone let a flat-out requester put everyone else's copy seconds behind: the
     * writes bound stops it before the work piles up, the delay bound when a loop is behind for
     * any other reason), or more tasks wait for the outbox thread than its busy threshold. A query's reply
     * is work for the same outbox thread, so queries are refused too, until delivery catches up:
     * an overloaded hub slows its producers instead of queueing without bound.
     */
    private BusyReason busyReason() {
        if (hub.metrics().fanoutBacklogBytes.get() > hub.config().maxFanoutBacklogBytes()) {
            return BusyReason.FANOUT_BACKLOG;
        }
        if (hub.outbox().writesOwed() > hub.config().maxFanoutWrites()) {
            return BusyReason.FANOUT_WRITES;
        }
        if (hub.outbox().fanoutOverdue(hub.config().maxFanoutDelay().toNanos())) {
            return BusyReason.FANOUT_DELAY;
        }
        return hub.outbox().overloaded() ? BusyReason.OUTBOX_QUEUE : null;
    }

    private void busy(Session session, String sender, double now, BusyReason reason) {
        hub.metrics().busyRefused(reason);
        ObjectNode e = hub.frames().error(sender, "The hub is busy; retry shortly.", now);
        e.put("error_code", "busy");
        hub.outbox().send(session, e);
    }

    /**
     * The hub is stopping: every connection is being closed at once, so their leaves are not
     * broadcast (each would list every online agent to every socket still open: quadratic in the
     * fleet, inside the close's budget).
     */
    public void stopping() {
        stopping = true;
    }

    /** False once the fleet is larger than {@code --presence-fanout-limit} (0: never), or the hub is stopping. */
    private boolean presenceFannedOut() {
        if (stopping) {
            return false;
        }
        int limit = hub.config().presenceFanoutLimit();
        return limit == 0 || hub.registry().connectedClients() <= limit;
    }

    private ObjectNode presence(String event, String agent, double now) {
        return presenceFrame(event, agent, hub.registry().online(), now);
    }

    private ObjectNode presenceFrame(String event, String agent, List<String> online, double now) {
        ObjectNode f = hub.frames().envelope("all", "presence_update", "Presence update", now);
        HubFrames.putStrings(f, "online_agents", online);
        f.put("event", event);
        f.put("agent", agent);
        return f;
    }

    private ObjectNode nameConflict(String target, String payload, double now) {
        return hub.frames().envelope(target, "name_conflict", payload, now);
    }

    /**
     * A refusal before binding (§4.3 steps 1, 2, 4). On a bound socket the frame is dropped and
     * the socket kept; on a socket whose first frame this is, nothing got bound, so after the
     * error the socket is closed 4010 (§3.2 row 6).
     */
    /** A frame that is not a heartbeat and carries a string {@code idem_key}: the ledger may answer it. */
    private static boolean keyedRequest(ObjectNode frame) {
        JsonNode key = frame.get("idem_key");
        return key != null && key.isTextual() && !key.textValue().isBlank()
                && !"heartbeat".equals(normalisedType(frame));
    }

    /** True when the socket is bound and the frame's sender (trimmed as below) is its name: no binding step runs. */
    private static boolean boundSender(Session session, ObjectNode frame) {
        JsonNode sender = frame.get("sender");
        return session.name() != null && sender != null && sender.isTextual()
                && session.name().equals(strip(sender.textValue()));
    }

    /** The per-host rate limit's refusal: private, the socket kept (contract §4.3 step 3). */
    private void hostRateLimited(Session session, double now) {
        hub.metrics().hostRateLimited.incrementAndGet();
        hub.metrics().rateLimited.incrementAndGet(); // the contract's count of every rate-limit refusal
        ObjectNode e = hub.frames().error(session.name() == null ? "all" : session.name(),
                "Host rate limit exceeded; slow down.", now);
        e.put("error_code", "rate_limited");
        hub.outbox().send(session, e);
    }

    private void earlyError(Session session, String payload, double now) {
        earlyError(session, hub.frames().error("all", payload, now));
    }

    private void earlyError(Session session, ObjectNode error) {
        if (session.name() == null) {
            hub.outbox().close(session, error, 4010,
                    hub.config().secured() ? "auth required" : "registration required");
        } else {
            hub.outbox().send(session, error);
        }
    }

    /**
     * Trimmed, and lower-cased only when it is ASCII: every verb is, and lower-casing other text
     * would fold look-alikes into verbs (the Kelvin sign U+212A lower-cases to {@code k}, so
     * {@code chec\u212apoint} would run as {@code checkpoint}).
     */
    private static String normalisedType(ObjectNode frame) {
        String type = strip(FieldCoercion.text(frame.get("type")));
        if (type.isEmpty()) {
            return "chat";
        }
        for (int i = 0; i < type.length(); i++) {
            if (type.charAt(i) >= 0x80) {
                return type; // matches no verb: answered "Unknown message type"
            }
        }
        return type.toLowerCase(Locale.ROOT);
    }

    /**
     * A number of seconds as a refusal text (and the dark-seat remedy) says it: a whole number
     * without ".0", as in the contract's lease refusal ({@code 3600s}), else Python's float form.
     */
    static String seconds(double s) {
        return s == Math.rint(s) && Math.abs(s) < 1e15 ? Long.toString((long) s) : PythonFloatFormat.format(s);
    }

    private static String strip(String s) {
        return s == null ? "" : PythonWhitespace.strip(s);
    }
}
