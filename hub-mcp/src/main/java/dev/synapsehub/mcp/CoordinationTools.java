package dev.synapsehub.mcp;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.board.BoardStatus;
import dev.synapsehub.core.board.NoteKind;
import dev.synapsehub.core.claim.ClaimStatus;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Predicate;

/**
 * The coordination verbs as MCP tools: each tool checks its arguments against its
 * {@link ToolSchema}, sends one wire request through the {@link HubLink} (renew reads the
 * state first) and returns the hub's answer; a refusal becomes a {@link ToolFailure} typed
 * with the refusal frame. Tools that change state send an {@code idem_key} (the caller's, or a
 * fresh one returned with the result), so a call the MCP client or the link repeats is applied
 * at most once.
 */
final class CoordinationTools {
    /** One tool: its name, what a model reads about it, its input, and what it does. */
    record Tool(String name, String title, String description, ToolSchema input, boolean readOnly, Handler handler) {
    }

    /** A tool's body: typed arguments in, a JSON-ready result out. */
    @FunctionalInterface
    interface Handler {
        Map<String, Object> call(Map<String, Object> args) throws ToolFailure;
    }

    /** Members copied into a release frame as closeout evidence (§5.5). */
    static final List<String> EVIDENCE_LISTS = List.of("evidence", "artifacts", "known_failures", "changed_files",
            "generated_artifacts", "approvals");

    private static final String IDEM = "Retry key: a repeated call with the same key is answered from the hub's record "
            + "of the first one instead of being applied again. Optional; one is generated and returned when absent.";
    private static final String EPOCH = "Fence: refuse unless the claim still has this epoch (from claim or renew).";

    private final HubLink hub;
    private final Inbox inbox;
    private final List<Tool> tools;

    CoordinationTools(HubLink hub, Inbox inbox) {
        this.hub = hub;
        this.inbox = inbox;
        this.tools = List.of(claim(), renew(), release(), handoff(), checkpoint(), taskUpdate(), ledgerTask(),
                ledgerTaskUpdate(), ledgerProgress(), send(), inboxTool(), read("state", "state_request",
                        "state_snapshot", "Live claims (owner, scope, epoch, version, lease expiry, checkpoint), resource "
                                + "offers, agents last seen and dead letters, as the hub sees them now."),
                read("who", "who_request", "who_snapshot",
                        "Agents online now, their roles and liveness, and per-identity mailbox backlogs."),
                read("board", "board_request", "board_snapshot",
                        "The task board: declared tasks with status and dependencies, the ids ready to start, and "
                                + "recent progress notes."));
    }

    /** Every tool, in a stable order. */
    List<Tool> all() {
        return tools;
    }

    /** Runs {@code tool} on raw MCP arguments. */
    static Map<String, Object> run(Tool tool, Map<String, Object> arguments) throws ToolFailure {
        return tool.handler().call(tool.input().check(arguments));
    }

    // ------------------------------------------------------------------------------ claims

    private Tool claim() {
        ToolSchema in = new ToolSchema()
                .string("task_id", true, "Task to claim (any string; conventionally the board task id).")
                .strings("paths", false, "Files or directories you will change, relative to the worktree root. "
                        + "Omit or [] to claim the whole worktree. Claims by other agents on overlapping paths in the "
                        + "same worktree are refused with reason_code SCOPE_CONFLICT.")
                .string("worktree", false, "Worktree label the paths belong to (default \"\", the main checkout). "
                        + "Different labels never conflict.")
                .number("ttl_seconds", false, 30.0, 2_592_000.0, "Lease length in seconds (default 3600, clamped to "
                        + "[30, 2592000]). Renew before it lapses, or the task becomes free for others.")
                .string("note", false, "Short note stored on the claim (what you are doing).")
                .string("idem_key", false, IDEM);
        return new Tool("claim", "Claim a task", "Take a task with a lease so no other agent works on it or on "
                + "its files. Granted: you own it; the answer has its epoch (a fencing token for later calls), "
                + "version, lease_expires_at and any checkpoint a previous owner left. Refused: a claim_denied error "
                + "with reason_code LEASE_LIVE (someone holds it), SCOPE_CONFLICT (paths overlap another live claim), "
                + "QUOTA_EXCEEDED or TASK_ID_REQUIRED. Claiming a task you already hold renews it.", in, false, a -> {
                    ObjectNode f = request("claim");
                    String task = putText(f, a, "task_id");
                    f.put("worktree", (String) a.getOrDefault("worktree", ""));
                    putList(f, "paths", strings(a, "paths"));
                    putIfPresent(f, a, "ttl_seconds", "note");
                    return claimCall(f, a, task);
                });
    }

    private Map<String, Object> claimCall(ObjectNode f, Map<String, Object> a, String task) throws ToolFailure {
        String id = task.strip();
        return keyedCall(f, a, "claim_granted", r -> (is(r, "claim_granted") && id.equals(r.path("task_id").asText())
                && me(r, "owner")) || (is(r, "claim_denied") && id.equals(r.path("task_id").asText())));
    }

    private Tool renew() {
        ToolSchema in = new ToolSchema()
                .string("task_id", true, "A task you hold now.")
                .number("ttl_seconds", false, 30.0, 2_592_000.0, "New lease length in seconds (default 3600).")
                .string("note", false, "Replacement note (default: keep the current one).")
                .string("idem_key", false, IDEM);
        return new Tool("renew", "Renew a claim", "Extend the lease on a task you hold, keeping its worktree, "
                + "paths and checkpoint. It is a re-claim: the task gets a new epoch and version 0, and its status "
                + "returns to 'claimed'. Fails with not_held when the task is not yours (or your lease already "
                + "lapsed: claim it again).", in, false, a -> {
                    String id = ((String) a.get("task_id")).strip();
                    JsonNode held = heldClaim(id);
                    ObjectNode f = request("claim");
                    f.put("task_id", id);
                    f.put("worktree", held.path("worktree").asText(""));
                    f.set("paths", held.path("paths").isArray() ? held.get("paths").deepCopy()
                            : Frames.MAPPER.createArrayNode());
                    f.put("note", a.containsKey("note") ? (String) a.get("note") : held.path("note").asText(""));
                    if (held.path("git").isObject()) {
                        f.set("git", held.get("git").deepCopy());
                    }
                    putIfPresent(f, a, "ttl_seconds");
                    return claimCall(f, a, id);
                });
    }

    /** This agent's live claim on {@code id} from a fresh state snapshot, or a {@code not_held} failure. */
    private JsonNode heldClaim(String id) throws ToolFailure {
        ObjectNode state = hub.request(request("state_request"), r -> is(r, "state_snapshot"));
        if (isError(state)) {
            throw ToolFailure.refused(state);
        }
        for (JsonNode c : state.path("snapshot").path("active_claims")) {
            if (id.equals(c.path("task_id").asText())) {
                if (me(c, "owner")) {
                    return c;
                }
                throw ToolFailure.local("not_held", "task '" + id + "' is held by " + c.path("owner").asText()
                        + ", not by " + hub.name(), Map.of("task_id", id, "holder", c.path("owner").asText()));
            }
        }
        throw ToolFailure.local("not_held", "task '" + id + "' has no live claim (never claimed, released, or the "
                + "lease lapsed); claim it again", Map.of("task_id", id));
    }

    private Tool release() {
        ToolSchema in = new ToolSchema()
                .string("task_id", true, "A task you hold.")
                .integer("epoch", false, 0L, null, EPOCH);
        for (String list : EVIDENCE_LISTS) {
            in.strings(list, false, "Closeout evidence: " + list.replace('_', ' ') + " (at most 50 items of "
                    + "500 characters are kept).");
        }
        in.string("confidence", false, "How sure you are that the work is right, in words.")
                .number("freshness_seconds", false, 0.0, null, "Age in seconds of the evidence (e.g. since the tests ran).")
                .string("idem_key", false, IDEM);
        return new Tool("release", "Release a task", "Give up a task you hold, optionally with closeout evidence "
                + "(tests run, files changed, known failures). The answer has the hub's release receipt with its "
                + "epistemic_status grade. The task's checkpoint is discarded. Refused with release_denied when the "
                + "task is not yours or the epoch is stale.", in, false, a -> {
                    ObjectNode f = request("release");
                    String id = putText(f, a, "task_id").strip();
                    putIfPresent(f, a, "epoch", "confidence", "freshness_seconds");
                    for (String list : EVIDENCE_LISTS) {
                        if (a.containsKey(list)) {
                            putList(f, list, strings(a, list));
                        }
                    }
                    return keyedCall(f, a, "release_granted", r -> (is(r, "release_granted")
                            && id.equals(r.path("task_id").asText()) && me(r, "owner"))
                            || (is(r, "release_denied") && id.equals(r.path("task_id").asText())));
                });
    }

    private Tool handoff() {
        ToolSchema in = new ToolSchema()
                .string("task_id", true, "A task you hold.")
                .string("to_agent", true, "The agent to hand it to; it must be online now.")
                .string("note", false, "Replacement note for the recipient (default: keep the current one).")
                .integer("epoch", false, 0L, null, EPOCH)
                .string("idem_key", false, IDEM);
        return new Tool("handoff", "Hand a task over", "Move a task you hold to another online agent in one step: "
                + "it keeps the scope, status and checkpoint, gets a new epoch and a fresh lease. Refused with "
                + "handoff_denied (recipient offline, not your task, stale epoch, recipient at its claim cap, or the "
                + "scope conflicts with the recipient's other claims).", in, false, a -> {
                    ObjectNode f = request("handoff");
                    String id = putText(f, a, "task_id").strip();
                    putText(f, a, "to_agent");
                    putIfPresent(f, a, "note", "epoch");
                    return keyedCall(f, a, "handoff_granted", r -> (is(r, "handoff_granted")
                            && id.equals(r.path("task_id").asText()) && me(r, "previous_owner"))
                            || (is(r, "handoff_denied") && id.equals(r.path("task_id").asText())));
                });
    }

    private Tool checkpoint() {
        ToolSchema in = new ToolSchema()
                .string("task_id", true, "A task you hold.")
                .string("checkpoint", true, "Opaque resume token: where you are, enough for you or a successor to "
                        + "continue (a commit id, a plan step). It survives lease expiry and is handed to the next "
                        + "claimant.")
                .integer("epoch", false, 0L, null, EPOCH)
                .string("idem_key", false, IDEM);
        return new Tool("checkpoint", "Save a checkpoint", "Store a resume point on a task you hold; the claim's "
                + "version goes up by one. Refused with checkpoint_denied when the task is not yours or the epoch "
                + "is stale.", in, false, a -> {
                    ObjectNode f = request("checkpoint");
                    String id = putText(f, a, "task_id").strip();
                    putText(f, a, "checkpoint");
                    putIfPresent(f, a, "epoch");
                    return keyedCall(f, a, "checkpoint_saved", r -> (is(r, "checkpoint_saved")
                            || is(r, "checkpoint_denied")) && id.equals(r.path("task_id").asText()));
                });
    }

    private Tool taskUpdate() {
        List<String> statuses = Arrays.stream(ClaimStatus.values()).map(ClaimStatus::wire).toList();
        ToolSchema in = new ToolSchema()
                .string("task_id", true, "A task you hold.")
                .oneOf("status", false, statuses, "New status. Moves allowed: claimed -> working | done | failed; "
                        + "working -> input_required | done | failed; input_required -> working | done | failed.")
                .string("note", false, "Replacement note.")
                .string("data_ref", false, "Reference to an artefact (a branch, a URL, a path).")
                .integer("epoch", false, 0L, null, EPOCH)
                .integer("expected_version", false, 0L, null, "Compare-and-set: refuse unless the claim is at this "
                        + "version.")
                .string("idem_key", false, IDEM);
        return new Tool("task_update", "Update a claimed task", "Change the status, note or artefact reference of "
                + "a task you hold; the version goes up by one. Refused with an error (not your task, stale epoch, "
                + "version mismatch, illegal status move).", in, false, a -> {
                    ObjectNode f = request("task_update");
                    String id = putText(f, a, "task_id").strip();
                    putIfPresent(f, a, "status", "note", "data_ref", "epoch", "expected_version");
                    return keyedCall(f, a, "task_updated", r -> is(r, "task_updated")
                            && id.equals(r.path("task_id").asText()) && me(r, "owner"));
                });
    }

    // ------------------------------------------------------------------------------- board

    private Tool ledgerTask() {
        ToolSchema in = new ToolSchema()
                .string("task_id", true, "Board task id.")
                .string("title", true, "One-line title.")
                .string("description", false, "What is to be done.")
                .strings("depends_on", false, "Ids of tasks that must be done (or cancelled) first.")
                .string("suggested_owner", false, "Agent expected to take it (advisory).")
                .string("project", false, "Project namespace of the task.")
                .integer("expected_version", false, 0L, null, "Compare-and-set on the board task's version (0 for a "
                        + "task that must not exist yet).")
                .string("idem_key", false, IDEM);
        return new Tool("ledger_task", "Declare a board task", "Declare a task on the shared board, or re-declare "
                + "it (title, description, dependencies, suggested owner); its status is kept. New tasks start "
                + "'open'. Refused with an error on a dependency cycle, a version conflict or a project "
                + "conflict.", in, false, a -> {
                    ObjectNode f = request("ledger_task");
                    String id = putText(f, a, "task_id").strip();
                    putText(f, a, "title");
                    putIfPresent(f, a, "description", "suggested_owner", "project", "expected_version");
                    if (a.containsKey("depends_on")) {
                        putList(f, "depends_on", strings(a, "depends_on"));
                    }
                    return keyedCall(f, a, "ledger_task_posted", r -> is(r, "ledger_task_posted")
                            && id.equals(r.path("task").path("task_id").asText()));
                });
    }

    private Tool ledgerTaskUpdate() {
        List<String> statuses = Arrays.stream(BoardStatus.values()).map(BoardStatus::wire).toList();
        ToolSchema in = new ToolSchema()
                .string("task_id", true, "A task on the board.")
                .oneOf("status", false, statuses, "New board status.")
                .string("suggested_owner", false, "Replace the suggested owner (\"\" clears it).")
                .string("project", false, "Replace the project (\"\" clears it).")
                .integer("expected_version", false, 0L, null, "Compare-and-set on the board task's version.")
                .string("idem_key", false, IDEM);
        return new Tool("ledger_task_update", "Update a board task", "Change a board task's status (open, "
                + "in_progress, blocked, done, cancelled), suggested owner or project; its version goes up by one. "
                + "Refused with an error for an unknown task or a version conflict.", in, false, a -> {
                    ObjectNode f = request("ledger_task_update");
                    String id = putText(f, a, "task_id").strip();
                    putIfPresent(f, a, "status", "suggested_owner", "project", "expected_version");
                    return keyedCall(f, a, "ledger_task_updated", r -> is(r, "ledger_task_updated")
                            && id.equals(r.path("task").path("task_id").asText()));
                });
    }

    private Tool ledgerProgress() {
        List<String> kinds = Arrays.stream(NoteKind.values()).map(NoteKind::wire).toList();
        ToolSchema in = new ToolSchema()
                .string("text", true, "The note.")
                .string("task_id", false, "Task the note is about (default \"\": a board-wide note).")
                .oneOf("kind", false, kinds, "Kind of note (default note).")
                .string("idem_key", false, IDEM);
        return new Tool("ledger_progress", "Post a progress note", "Post a progress note on the board for "
                + "everyone to read (what you found, what blocks you, what you approved).", in, false, a -> {
                    ObjectNode f = request("ledger_progress");
                    String id = ((String) a.getOrDefault("task_id", "")).strip();
                    f.put("task_id", id);
                    String text = putText(f, a, "text");
                    putIfPresent(f, a, "kind");
                    return keyedCall(f, a, "ledger_progress_posted", r -> is(r, "ledger_progress_posted")
                            && me(r.path("note"), "author") && id.equals(r.path("note").path("task_id").asText())
                            && text.equals(r.path("note").path("text").asText()));
                });
    }

    // ---------------------------------------------------------------------------- messages

    private Tool send() {
        ToolSchema in = new ToolSchema()
                .string("to", true, "\"all\" for everyone, or one or more agent names separated by commas "
                        + "(NS/agent); a project name or role addresses every agent in it.")
                .string("text", true, "The message.")
                .bool("receipt", false, "Ask for a delivery receipt (default false): the answer then says whether a "
                        + "live recipient got it; a message to an agent that is away waits in its mailbox.")
                .string("client_msg_id", false, "Your id for the message (receivers deduplicate on it); one is "
                        + "generated when absent.");
        return new Tool("send", "Send a message", "Send a chat message to other agents (or to all). Directed "
                + "messages are kept in the recipients' mailboxes on a hub with a journal and replayed when they "
                + "reconnect.", in, false, a -> {
                    String to = (String) a.get("to");
                    if (to.strip().isEmpty()) {
                        // the hub reads an empty target as everyone: a slip must not become a broadcast
                        throw ToolFailure.invalidArguments("to", "to is empty; name the recipients (agent names, a "
                                + "project or a role, comma-separated), or \"all\" for everyone");
                    }
                    ObjectNode f = request("chat");
                    f.put("target", to);
                    f.put("payload", (String) a.get("text"));
                    String id = (String) a.getOrDefault("client_msg_id", "mcp-" + UUID.randomUUID());
                    f.put("client_msg_id", id);
                    boolean receipt = Boolean.TRUE.equals(a.get("receipt"));
                    if (receipt) {
                        f.put("receipt_requested", true);
                    }
                    Predicate<ObjectNode> answer = receipt
                            ? r -> is(r, "delivery_receipt") && id.equals(r.path("client_msg_id").asText())
                            : r -> is(r, "chat") && me(r, "sender") && id.equals(r.path("client_msg_id").asText());
                    ObjectNode reply;
                    try {
                        reply = hub.request(f, answer);
                    } catch (ToolFailure failure) { // a no_answer may have been delivered: resend with the same id
                        throw failure.messageId(id);
                    }
                    if (isError(reply)) {
                        throw ToolFailure.refused(reply).messageId(id);
                    }
                    Map<String, Object> out = new LinkedHashMap<>();
                    out.put("ok", true);
                    out.put("client_msg_id", id);
                    out.put("msg_id", reply.path(receipt ? "message_id" : "msg_id").asLong());
                    JsonNode seq = reply.get(receipt ? "message_seq" : "seq");
                    if (seq != null && seq.isIntegralNumber()) {
                        out.put("seq", seq.asLong());
                    }
                    if (receipt) {
                        out.put("receipt", Frames.plain(reply));
                    }
                    return out;
                });
    }

    private Tool inboxTool() {
        ToolSchema in = new ToolSchema()
                .integer("max", false, 1L, 500L, "Most items to return (default 50); the rest stay for the next call.")
                .number("wait_seconds", false, 0.0, 60.0, "When the inbox is empty, wait up to this long for "
                        + "something to arrive (default 0: answer at once).")
                .bool("ack", false, "Acknowledge the directed messages returned to the hub (default true), so its "
                        + "mailbox counts them as read and a sender waiting for a receipt learns they arrived. With false they "
                        + "stay unread there and a later session gets them again, until a later call with ack true "
                        + "acknowledges a newer directed message (the hub's acks are cumulative). Because they are "
                        + "cumulative, the ack of a message is sent only once every older directed message received "
                        + "has been read and not held by ack false: 'acked' lists the acks the hub took in this call.");
        return new Tool("inbox", "Read messages", "Messages and notices received since the last call, oldest first: "
                + "kind 'chat' (sender, target, payload, msg_id, seq; replayed: true when it waited in the mailbox "
                + "while you were away), 'delivery_receipt' for messages you sent, 'handoff_granted' when a task was "
                + "handed to you, 'dark_seat_alert' about you, 'recipient_liveness_warning', unsolicited "
                + "'error' frames, and 'claim_granted'/'claim_denied' answers that came after their claim call "
                + "had given up (a grant listed here is held). 'dropped' counts items lost because the inbox was full.", in, false, a -> {
                    int max = ((Long) a.getOrDefault("max", 50L)).intValue();
                    long waitMillis = (long) (((Double) a.getOrDefault("wait_seconds", 0.0)) * 1000);
                    boolean ack = !Boolean.FALSE.equals(a.get("ack"));
                    Inbox.Batch batch;
                    try {
                        batch = inbox.take(max, waitMillis, ack);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw ToolFailure.noAnswer("interrupted");
                    } catch (IOException e) {
                        throw ToolFailure.local("cursor_not_saved", "the inbox cursor file could not be written ("
                                + e.getMessage() + "); nothing was taken, the items stay queued for the next call",
                                Map.of());
                    }
                    List<Object> items = new ArrayList<>();
                    for (ObjectNode item : batch.items()) {
                        items.add(Frames.plain(item));
                    }
                    // the inbox decides which: an ack above a lower directed chat still unread or held is owed.
                    // One that is not taken (disconnected, refused) is not kept: the next registration's
                    // since_seq moves the hub's watermark just as far; only its deferred receipt is lost
                    // (docs/mcp.md)
                    List<Long> acked = hub.ack(batch.acks());
                    Map<String, Object> out = new LinkedHashMap<>();
                    out.put("items", items);
                    out.put("dropped", batch.dropped());
                    out.put("remaining", batch.remaining());
                    out.put("acked", acked);
                    return out;
                });
    }

    // ------------------------------------------------------------------------------- reads

    private Tool read(String name, String verb, String answer, String description) {
        return new Tool(name, "Read the hub's " + name, description + " Read-only.", new ToolSchema(), true,
                a -> Frames.plainObject(snapshot(verb, answer)));
    }

    /** A read verb's answer frame. */
    ObjectNode snapshot(String verb, String answer) throws ToolFailure {
        ObjectNode reply = hub.request(request(verb), r -> is(r, answer));
        if (isError(reply)) {
            throw ToolFailure.refused(reply);
        }
        return reply;
    }

    // ----------------------------------------------------------------------------- helpers

    private ObjectNode request(String type) {
        return Frames.request(hub.name(), type);
    }

    private boolean me(JsonNode frame, String member) {
        return hub.name().equals(frame.path(member).asText());
    }

    private static boolean is(JsonNode frame, String type) {
        return type.equals(Frames.type(frame));
    }

    private static boolean isError(JsonNode frame) {
        return is(frame, "error");
    }

    /**
     * Sends a state-changing request with an {@code idem_key} and returns the success shape; the
     * answer is the first frame {@code answers} accepts, or an {@code error} ({@link HubLink#request}).
     */
    private Map<String, Object> keyedCall(ObjectNode f, Map<String, Object> a, String success,
            Predicate<ObjectNode> answers) throws ToolFailure {
        String key = keyed(f, a);
        try {
            return granted(hub.request(f, answers), success, key);
        } catch (ToolFailure failure) {
            // a no_answer may still have been applied: the agent needs the key to retry safely
            throw failure.keyed(key);
        }
    }

    /** The success shape, or the refusal as a {@link ToolFailure}. */
    private static Map<String, Object> granted(ObjectNode reply, String success, String idemKey) throws ToolFailure {
        if (!is(reply, success)) {
            throw ToolFailure.refused(reply);
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("ok", true);
        out.put("idem_key", idemKey);
        out.put("reply", Frames.plain(reply));
        return out;
    }

    /** Puts the caller's {@code idem_key}, or a fresh one, on the frame; returns it. */
    private static String keyed(ObjectNode f, Map<String, Object> a) {
        String key = (String) a.get("idem_key");
        if (key == null || key.isBlank()) {
            key = "mcp-" + UUID.randomUUID();
        }
        f.put("idem_key", key);
        return key;
    }

    private static String putText(ObjectNode f, Map<String, Object> a, String name) {
        String v = (String) a.get(name);
        f.put(name, v);
        return v;
    }

    @SuppressWarnings("unchecked")
    private static List<String> strings(Map<String, Object> a, String name) {
        Object v = a.get(name);
        return v == null ? List.of() : (List<String>) v;
    }

    private static void putList(ObjectNode f, String name, List<String> values) {
        ArrayNode arr = f.putArray(name);
        values.forEach(arr::add);
    }

    /** Copies each present argument as its JSON type (strings, integers as longs, numbers as doubles). */
    private static void putIfPresent(ObjectNode f, Map<String, Object> a, String... names) {
        for (String name : names) {
            Object v = a.get(name);
            if (v instanceof String s) {
                f.put(name, s);
            } else if (v instanceof Long l) {
                f.put(name, l);
            } else if (v instanceof Double d) {
                f.put(name, d);
            } else if (v instanceof Boolean b) {
                f.put(name, b);
            }
        }
    }
}
