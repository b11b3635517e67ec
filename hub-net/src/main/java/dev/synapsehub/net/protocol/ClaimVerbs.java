package dev.synapsehub.net.protocol;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.PythonWhitespace;
import dev.synapsehub.core.claim.Claim;
import dev.synapsehub.core.claim.GitContext;
import dev.synapsehub.core.command.CheckpointCommand;
import dev.synapsehub.core.command.ClaimCommand;
import dev.synapsehub.core.command.HandoffCommand;
import dev.synapsehub.core.command.ReleaseCommand;
import dev.synapsehub.core.command.TaskUpdateCommand;
import dev.synapsehub.core.actor.Outcome;
import dev.synapsehub.core.reply.Refusal;
import dev.synapsehub.net.extension.ClaimService;
import dev.synapsehub.core.reply.Reply;
import dev.synapsehub.net.session.Session;
import dev.synapsehub.net.session.SessionRegistry;
import dev.synapsehub.net.wire.HubFrames;
import dev.synapsehub.net.wire.WireJson;
import dev.synapsehub.net.wire.CanonicalJson;
import dev.synapsehub.net.wire.FieldCoercion;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;

/**
 * The claim family (contract §5.4–5.8): turns frames into commands, submits them to the actor
 * and publishes the outcome from the outbox thread in commit order. Idempotent retries follow
 * §4.6; the stored response is the exact frame first published.
 */
public final class ClaimVerbs {
    private static final Set<Refusal> CLAIM_REASON_CODES = EnumSet.of(Refusal.TASK_ID_REQUIRED,
            Refusal.PATH_IDENTITY_INVALID, Refusal.LEASE_LIVE, Refusal.SCOPE_CONFLICT, Refusal.QUOTA_EXCEEDED);

    private final VerbSupport support;
    private final BoardVerbs board;
    private final SessionRegistry registry;
    private final Outbox outbox;
    private final HubFrames frames;
    private final WireJson json;
    private final HubMetrics metrics;
    private final ClaimFrames claimFrames;
    /** Renders a claim grant, the stored first response of a keyed claim. */
    private final VerbSupport.GrantRenderer claimRenderer = VerbSupport.GrantRenderer.typed(Reply.Granted.class,
            this::renderGrant);

    /**
     * Claim verbs whose release and handoff notes are posted through {@code board} (stored,
     * journaled); {@code registry} holds the presence a handoff weighs and the wait graph a grant
     * or release prunes.
     */
    ClaimVerbs(VerbSupport support, BoardVerbs board, SessionRegistry registry, Outbox outbox,
            HubFrames frames, WireJson json, HubMetrics metrics) {
        this.support = support;
        this.board = board;
        this.registry = registry;
        this.outbox = outbox;
        this.frames = frames;
        this.json = json;
        this.metrics = metrics;
        this.claimFrames = new ClaimFrames(frames);
    }

    /**
     * True for the types whose grants this family renders: its own, and a claim decided for another
     * hub's claimant under its ledger scope ({@code multihub_claim:<hub>}, {@link #claimOnBehalf}),
     * which a mesh node decides for a peer and every node publishes.
     */
    public static boolean renders(String type) {
        return handles(type) || type.startsWith(ON_BEHALF_SCOPE);
    }

    /** The prefix of the ledger scope of claims decided for another hub's claimant. */
    public static final String ON_BEHALF_SCOPE = "multihub_claim:";

    /** True for the verbs handled here. */
    public static boolean handles(String type) {
        switch (type) {
            case "claim":
            case "release":
            case "task_update":
            case "handoff":
            case "checkpoint":
                return true;
            default:
                return false;
        }
    }

    /** Handles one claim-family request (on the connection's event loop). */
    public void handle(Request r) {
        switch (r.type()) {
            case "claim":
                claim(r);
                break;
            case "release":
                release(r);
                break;
            case "task_update":
                taskUpdate(r);
                break;
            case "handoff":
                handoff(r);
                break;
            case "checkpoint":
                checkpoint(r);
                break;
            default:
                throw new IllegalArgumentException(r.type());
        }
    }

    // ------------------------------------------------------------------------------ verbs

    private void claim(Request r) {
        ClaimCommand command = claimCommand(r, r.session().principal());
        if (command == null) {
            return;
        }
        support.submit(r, command, true, claimRenderer, claimPublisher(true));
    }

    /** The claim command of a claim frame charged to {@code principal}; null after a typed error. */
    private ClaimCommand claimCommand(Request r, String principal) {
        String taskId = taskId(r, true);
        if (taskId == null) {
            return null;
        }
        JsonNode pathsNode = r.get("paths");
        List<String> paths = new ArrayList<>();
        if (pathsNode != null && !pathsNode.isNull()) {
            if (!pathsNode.isArray()) {
                malformed(r, "paths", "Field 'paths' must be an array of strings.");
                return null;
            }
            for (JsonNode p : pathsNode) {
                if (!p.isTextual()) {
                    malformed(r, "paths", "Field 'paths' must be an array of strings.");
                    return null;
                }
                paths.add(p.textValue());
            }
        }
        if (rejectNonText(r, "note") || rejectNonText(r, "worktree")) {
            return null;
        }
        GitContext git = null;
        JsonNode g = r.get("git");
        if (g != null && g.isObject()) {
            git = GitContext.fromWire(FieldCoercion.text(g.get("branch")), FieldCoercion.text(g.get("base")),
                    FieldCoercion.text(g.get("auto_release_on")));
        }
        String worktree = FieldCoercion.text(r.get("worktree"));
        PathIdentityWire.Parsed identity = PathIdentityWire.parse(r.get("path_identity"));
        if (identity.invalid()) {
            // refused as the claim path refuses it, from the outbox thread in order; nothing submitted
            Reply.Denied d = new Reply.Denied(strip(taskId), Refusal.PATH_IDENTITY_INVALID,
                    "Task '" + strip(taskId) + "' carries an invalid path identity.");
            support.afterRead(r, "refusing an invalid path identity",
                    java.util.concurrent.CompletableFuture.completedFuture(d),
                    denied -> claimPublisher(true).publish(
                            new CommittedDecision(r, denied, null, List.of(), support.now())));
            return null;
        }
        return new ClaimCommand(r.sender(), principal, taskId,
                FieldCoercion.text(r.get("note")), FieldCoercion.ttl(r.get("ttl_seconds")),
                worktree == null ? "" : worktree, paths, git, identity.identity());
    }

    private ObjectNode renderGrant(Reply.Granted granted, double at) {
        return claimFrames.claimGranted(granted.claim(), granted.message(), at);
    }

    /**
     * Renders the grant of {@code r}, a request of this family (the stored first response of a
     * keyed request, contract §4.6); only a grant is rendered.
     */
    VerbSupport.GrantRenderer renderer(Request r) {
        return VerbSupport.GrantRenderer.typed(Reply.Granted.class, (granted, at) -> grantFrame(r, granted, at));
    }

    /**
     * A claim decided for a claimant on another hub ({@link ClaimService#claimOnBehalf}): the
     * request's {@code type} is replaced by {@code ledgerScope}, so its {@code idem_key} lives in
     * a ledger scope of its own; a grant is published as any grant, every outcome goes to {@code answer}.
     * An unkeyed claim that finds the claimant already holding the task under {@code principal} is
     * answered with the claim as it stands, decided in the same writer turn, and published to no one.
     */
    public void claimOnBehalf(Request r, String principal, String ledgerScope, ClaimService.Answer answer) {
        Request scoped = new Request(r.session(), r.sender(), ledgerScope, r.target(), r.frame());
        if (PathIdentityWire.parse(scoped.get("path_identity")).invalid()) {
            // a verdict to the peer, not the claim path's private refusal: the peer's connection waits for one
            answer.answer(false, null, "Task '" + strip(FieldCoercion.text(scoped.get("task_id")))
                    + "' carries an invalid path identity.");
            return;
        }
        ClaimCommand command = claimCommand(scoped, principal);
        if (command == null) {
            // a shape the owner's check let through: still a verdict, so the peer's next answers are not held up
            answer.answer(false, null, "The forwarded claim is malformed; nothing was applied.");
            return;
        }
        JsonNode key = scoped.get("idem_key");
        if (key == null || key.isNull()) {
            // an unkeyed retry must never renew twice: a keyed one has the ledger for that
            command = command.keepingHeld();
        }
        DecisionPublisher published = claimPublisher(false);
        DecisionPublisher decided = DecisionPublisher.typed(Reply.Granted.class,
                (d, granted) -> {
                    published.publish(d);
                    answer.answer(true, d.storedResponse() != null ? (ObjectNode) json.parse(d.storedResponse())
                            : renderGrant(granted, d.at()), granted.message());
                }, (d, refusal) -> {
                    published.publish(d);
                    answer.answer(false, null, refusal.message());
                });
        support.submit(scoped, command, true, claimRenderer, d -> {
            if (d.reply() instanceof Reply.AlreadyHeld held) {
                // nothing changed and nothing is broadcast: the claim was published when it was granted
                answer.answer(true, claimFrames.claimGranted(held.claim(), held.message(), d.at()), held.message());
            } else {
                decided.publish(d);
            }
        }, (req, settled) -> {
            if (!answerFromLedger(settled, answer) && settled instanceof Outcome.Refused refused) {
                answer.answer(false, null, refused.message());
            }
        });
    }

    /** Answers a ledger outcome (a replay of the first answer, or a key used for another request); false for any other. */
    private boolean answerFromLedger(Outcome settled, ClaimService.Answer answer) {
        if (settled instanceof Outcome.Replayed replayed) {
            metrics.idempotentReplays.incrementAndGet();
            ObjectNode first = (ObjectNode) json.parse(replayed.response());
            answer.answer(true, first, first.path("payload").asText(""));
            return true;
        }
        if (settled instanceof Outcome.IdempotencyConflict) {
            metrics.idempotencyConflicts.incrementAndGet();
            answer.answer(false, null, "idem_key was already used for a different request; nothing was applied.");
            return true;
        }
        return false;
    }

    /** {@link ClaimService#answerIfKeyed}: the ledger's committed first answer, read without the actor. */
    public boolean answerIfKeyed(Request r, String ledgerScope, ClaimService.Answer answer) {
        Request scoped = new Request(r.session(), r.sender(), ledgerScope, r.target(), r.frame());
        // forgotten meanwhile, or never keyed: the claim path decides it, and checks the ledger again
        return support.priorAnswer(scoped, ledgerScope).map(prior -> answerFromLedger(prior, answer)).orElse(false);
    }

    private void release(Request r) {
        String taskId = taskId(r, true);
        FieldCoercion.Guard epoch = guard(r, "epoch");
        if (taskId == null || epoch == null) {
            return;
        }
        ReleaseReceipt receipt = ReleaseReceipt.from(r.frame());
        ReleaseCommand command = new ReleaseCommand(r.sender(), taskId, epoch.boxed(),
                receipt.hasEvidence() ? receipt.assessment() : null);
        support.submit(r, command, true, renderer(r),
                DecisionPublisher.typed(Reply.Granted.class, (d, granted) -> {
                    metrics.releasesGranted.incrementAndGet();
                    broadcastGrant(d, granted);
                }, deniedAs("release_denied")));
    }

    private void taskUpdate(Request r) {
        JsonNode idNode = r.get("task_id");
        if (idNode == null || idNode.isNull() || (idNode.isTextual() && PythonWhitespace.isBlank(idNode.textValue()))) {
            idNode = r.get("id");
        }
        if (FieldCoercion.notText(idNode)) {
            malformed(r, "task_id", "Field 'task_id' must be a string.");
            return;
        }
        String taskId = FieldCoercion.text(idNode);
        FieldCoercion.Guard epoch = guard(r, "epoch");
        FieldCoercion.Guard expected = epoch == null ? null : guard(r, "expected_version");
        if (epoch == null || expected == null) {
            return;
        }
        if (rejectNonText(r, "status") || rejectNonText(r, "note") || rejectNonText(r, "data_ref")) {
            return;
        }
        TaskUpdateCommand command = new TaskUpdateCommand(r.sender(), taskId == null ? "" : taskId,
                FieldCoercion.text(r.get("status")), FieldCoercion.text(r.get("note")),
                FieldCoercion.text(r.get("data_ref")), epoch.boxed(), expected.boxed());
        support.submit(r, command, true, renderer(r),
                DecisionPublisher.typed(Reply.Granted.class, this::broadcastGrant, support::refusePrivately));
    }

    private void handoff(Request r) {
        if (rejectNonText(r, "task_id") || rejectNonText(r, "to_agent") || rejectNonText(r, "note")) {
            return;
        }
        String taskId = strip(FieldCoercion.text(r.get("task_id")));
        String recipient = strip(FieldCoercion.text(r.get("to_agent")));
        if (recipient.isEmpty()) {
            recipient = r.target();
        }
        FieldCoercion.Guard epoch = guard(r, "epoch");
        if (epoch == null) {
            return;
        }
        // Presence is a fact of this moment: the core weighs it only after a keyed retry has
        // been answered from the idempotency ledger (INV-CR-1).
        Session recipientSession = registry.session(recipient);
        HandoffCommand command = new HandoffCommand(r.sender(), taskId, recipient, recipientSession != null,
                recipientSession == null ? null : recipientSession.principal(), FieldCoercion.text(r.get("note")),
                epoch.boxed());
        support.submit(r, command, true, renderer(r),
                DecisionPublisher.typed(Reply.Granted.class, this::broadcastGrant, deniedAs("handoff_denied")));
    }

    private void checkpoint(Request r) {
        if (rejectNonText(r, "task_id") || rejectNonText(r, "checkpoint")) {
            return;
        }
        String taskId = strip(FieldCoercion.text(r.get("task_id")));
        String token = FieldCoercion.text(r.get("checkpoint"));
        if (token == null) {
            token = FieldCoercion.text(r.get("payload"));
        }
        FieldCoercion.Guard epoch = guard(r, "epoch");
        if (epoch == null) {
            return;
        }
        CheckpointCommand command = new CheckpointCommand(r.sender(), taskId, token == null ? "" : token,
                epoch.boxed());
        support.submit(r, command, true, renderer(r),
                DecisionPublisher.typed(Reply.Granted.class, (d, granted) -> outbox.send(d.request().session(),
                        d.storedResponse() != null ? d.storedResponse()
                                : frames.write(grantFrame(d.request(), granted, d.at()))),
                        deniedAs("checkpoint_denied")));
    }

    /** Publishes a claim's outcome; a refusal goes to the requester only when {@code answerDenial}. */
    private DecisionPublisher claimPublisher(boolean answerDenial) {
        return DecisionPublisher.typed(Reply.Granted.class, (d, granted) -> {
            metrics.claimsGranted.incrementAndGet();
            registry.clearWait(d.request().sender(), granted.claim().taskId());
            broadcastGrant(d, granted);
        }, (d, refusal) -> {
            metrics.claimsDenied.incrementAndGet();
            if (!answerDenial) {
                return;
            }
            ObjectNode f = claimFrames.denied("claim_denied", d.request().sender(), refusal.taskId(),
                    refusal.message(), d.at());
            if (refusal.refusal() == Refusal.PARTITIONED) {
                // refused where it was decided (a mesh leader's actor): the ownership refusal of contract
                // §11.3, as the edge's resolver answers it on a single hub, without a reason_code
                f.put("namespace", dev.synapsehub.core.governance.NamespaceGovernance.namespaceOf(d.request().sender()));
                f.put("ownership", "partitioned");
                f.put("owner_hub_id", refusal.holder());
                outbox.send(d.request().session(), f);
                return;
            }
            f.put("reason_code", CLAIM_REASON_CODES.contains(refusal.refusal()) ? refusal.refusal().name()
                    : "CLAIM_DENIED");
            outbox.send(d.request().session(), f);
        });
    }

    /** Another mesh node's decision: a grant, as every connection but the requester's sees it. */
    void publishCommitted(CommittedDecision d) {
        if (d.reply() instanceof Reply.Granted granted) {
            broadcastGrant(d, granted);
        }
    }

    /** A refusal answered privately with the family's own denial frame ({@code release_denied}, ...). */
    private DecisionPublisher.OnRefusal deniedAs(String frameType) {
        return (d, refusal) -> outbox.send(d.request().session(), claimFrames.denied(frameType,
                d.request().sender(), refusal.taskId(), refusal.message(), d.at()));
    }

    /**
     * The frame a granted request of this family is answered and stored with (the stored first
     * response of a keyed request, contract §4.6); all but {@code checkpoint_saved} are broadcast.
     */
    ObjectNode grantFrame(Request r, Reply.Granted g, double at) {
        Claim c = g.claim();
        // a claim decided for another hub's claimant runs under a ledger scope of its own
        String verb = r.type().startsWith(ON_BEHALF_SCOPE) ? "claim" : r.type();
        switch (verb) {
            case "claim":
                return claimFrames.claimGranted(c, g.message(), at);
            case "release":
                return claimFrames.releaseGranted(c, g.message(), at, ReleaseReceipt.from(r.frame()));
            case "task_update":
                return claimFrames.taskUpdated(c, g.message(), at);
            case "handoff":
                return claimFrames.handoffGranted(c, g.previousOwner(), g.message(), at);
            case "checkpoint":
                return claimFrames.checkpointSaved(c, r.sender(), g.message(), at);
            default:
                throw new IllegalArgumentException(r.type());
        }
    }

    /**
     * What every connection but the requester's sees of a grant, in order: the handoff's note
     * before the move (§5.7), the release's assessment after it (§A11 R3). A checkpoint is
     * private. The request's session is null for a request of another mesh node's agent.
     */
    private void broadcastGrant(CommittedDecision d, Reply.Granted g) {
        Request r = d.request();
        if ("checkpoint".equals(r.type())) {
            return;
        }
        String grant = d.storedResponse() != null ? d.storedResponse() : frames.write(grantFrame(r, g, d.at()));
        // claim traffic: loud connections get it as a broadcast, scoped ones as the rules say
        List<String> texts = new ArrayList<>(2);
        boolean release = "release".equals(r.type());
        if (release) {
            registry.pruneWaits(g.claim().taskId());
        } else if ("handoff".equals(r.type())) {
            texts.add(frames.write(board.progressFrame(g.note())));
        }
        texts.add(grant);
        if (release && g.note() != null) {
            texts.add(frames.write(board.assessmentFrame(g.claim().owner(), g.note())));
        }
        outbox.scoped().claimTraffic(texts, r.session(), g.claim(), release,
                "handoff".equals(r.type()) ? g.previousOwner() : null);
    }

    /**
     * SHA-256 hex of the canonical request (§4.6): sender and type normalised, token removed,
     * without timestamp, client_timestamp, auth and signature; sorted keys, ASCII-escaped.
     */
    static String digest(Request r) {
        ObjectNode copy = r.frame().deepCopy();
        copy.put("sender", r.sender());
        copy.put("type", r.type());
        copy.remove(List.of("token", "timestamp", "client_timestamp", "auth", "signature"));
        try {
            byte[] d = MessageDigest.getInstance("SHA-256")
                    .digest(CanonicalJson.write(copy, true).getBytes(StandardCharsets.US_ASCII));
            return HexFormat.of().formatHex(d);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    // ------------------------------------------------------------------------- helpers

    /** The task id (trimmed), falling back to a string payload; null after a typed error. */
    private String taskId(Request r, boolean payloadFallback) {
        JsonNode node = r.get("task_id");
        if (FieldCoercion.notText(node)) {
            malformed(r, "task_id", "Field 'task_id' must be a string.");
            return null;
        }
        String id = strip(FieldCoercion.text(node));
        if (id.isEmpty() && payloadFallback) {
            id = strip(FieldCoercion.text(r.get("payload")));
        }
        return id;
    }

    /** A strict guard, or null after sending the typed error (nothing is submitted). */
    private FieldCoercion.Guard guard(Request r, String field) {
        FieldCoercion.Guard g = FieldCoercion.guard(r.get(field));
        if (!g.valid()) {
            ObjectNode e = frames.error(r.sender(), "Field '" + field + "' must be an integer.", now());
            e.put("error_code", "invalid_guard");
            e.put("field", field);
            outbox.send(r.session(), e);
            return null;
        }
        return g;
    }

    private boolean rejectNonText(Request r, String field) {
        return support.rejectNonText(r, field);
    }

    private void malformed(Request r, String field, String message) {
        support.malformed(r, field, message);
    }

    private double now() {
        return support.now();
    }

    private static String strip(String s) {
        return s == null ? "" : PythonWhitespace.strip(s);
    }
}
