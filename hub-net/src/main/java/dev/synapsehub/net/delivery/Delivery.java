package dev.synapsehub.net.delivery;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.scope.PathNormalizer;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Which claim traffic one agent wants (our extension, {@code docs/protocol.md} "Scoped
 * delivery"): every broadcast, or only the traffic of the listed worktrees, task id prefixes and
 * path prefixes (plus what the hub always sends it: its own replies, handoffs it is a party
 * to, changes touching its live claims).
 *
 * @param worktrees exact worktree labels
 * @param taskPrefixes task id prefixes, compared as plain string prefixes
 * @param pathPrefixes normalised paths, matched segment-wise in any worktree
 */
public record Delivery(Mode mode, List<String> worktrees, List<String> taskPrefixes, List<String> pathPrefixes) {
    /** Most entries in each list of a declaration. */
    public static final int MAX_ENTRIES = 64;
    /** Longest entry, in characters. */
    public static final int MAX_ENTRY_LENGTH = 256;

    /** Everything, or scoped. */
    public enum Mode {
        BROADCAST, SCOPED;

        /** The wire name. */
        public String wire() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** Every claim broadcast and presence update: the wire contract's behaviour. */
    public static final Delivery EVERYTHING = new Delivery(Mode.BROADCAST, List.of(), List.of(), List.of());
    /** Scoped, with no subscriptions: only what the hub always sends. */
    public static final Delivery SCOPED_NOTHING_ELSE = new Delivery(Mode.SCOPED, List.of(), List.of(), List.of());

    public Delivery {
        worktrees = List.copyOf(worktrees);
        taskPrefixes = List.copyOf(taskPrefixes);
        pathPrefixes = List.copyOf(pathPrefixes);
    }

    /** True for {@link Mode#SCOPED}. */
    public boolean scoped() {
        return mode == Mode.SCOPED;
    }

    /** The default of a hub flag value ({@code broadcast} or {@code scoped}); null for anything else. */
    public static Delivery ofDefault(String flag) {
        if (flag == null) {
            return null;
        }
        switch (flag.strip().toLowerCase(Locale.ROOT)) {
            case "broadcast":
                return EVERYTHING;
            case "scoped":
                return SCOPED_NOTHING_ELSE;
            default:
                return null;
        }
    }

    /** The declaration as the hub echoes it ({@code delivery_set}, {@code delivery} of {@code welcome}). */
    public ObjectNode toJson() {
        ObjectNode o = JsonNodeFactory.instance.objectNode();
        o.put("mode", mode.wire());
        if (scoped()) {
            worktrees.forEach(o.putArray("worktrees")::add);
            taskPrefixes.forEach(o.putArray("task_prefixes")::add);
            pathPrefixes.forEach(o.putArray("path_prefixes")::add);
        }
        return o;
    }

    /**
     * The outcome of reading a declaration: a delivery, or the offending field and why.
     *
     * @param field the member named in the typed error, e.g. {@code delivery.path_prefixes}
     */
    public record Parsed(Delivery delivery, String field, String problem) {
        public boolean ok() {
            return delivery != null;
        }

        static Parsed refused(String field, String problem) {
            return new Parsed(null, field, problem);
        }
    }

    /**
     * Reads a declaration: {@code "broadcast"}, {@code "scoped"}, or an object with {@code mode}
     * and, for {@code scoped}, any of {@code worktrees}, {@code task_prefixes},
     * {@code path_prefixes} (arrays of non-blank strings). Anything else is refused whole.
     */
    public static Parsed parse(JsonNode node) {
        String field = "delivery";
        if (node == null || node.isNull()) {
            return Parsed.refused(field, "'delivery' is required: \"broadcast\", \"scoped\" or an object with 'mode'.");
        }
        if (node.isTextual()) {
            Delivery d = ofMode(node.textValue());
            return d == null ? Parsed.refused(field, "'delivery' must be \"broadcast\" or \"scoped\".")
                    : new Parsed(d, null, null);
        }
        if (!node.isObject()) {
            return Parsed.refused(field, "'delivery' must be \"broadcast\", \"scoped\" or an object.");
        }
        for (Iterator<String> names = node.fieldNames(); names.hasNext(); ) {
            String name = names.next();
            if (!Set.of("mode", "worktrees", "task_prefixes", "path_prefixes").contains(name)) {
                return Parsed.refused(field + "." + name, "Unknown member '" + name
                        + "' of 'delivery' (known: mode, worktrees, task_prefixes, path_prefixes).");
            }
        }
        JsonNode modeNode = node.get("mode");
        Delivery mode = modeNode != null && modeNode.isTextual() ? ofMode(modeNode.textValue()) : null;
        if (mode == null) {
            return Parsed.refused(field + ".mode", "'delivery.mode' must be \"broadcast\" or \"scoped\".");
        }
        List<List<String>> lists = new ArrayList<>(3);
        for (String member : List.of("worktrees", "task_prefixes", "path_prefixes")) {
            JsonNode list = node.get(member);
            if (list == null || list.isNull()) {
                lists.add(List.of());
                continue;
            }
            if (!mode.scoped()) {
                return Parsed.refused(field + "." + member, "'delivery." + member
                        + "' only goes with mode \"scoped\" (\"broadcast\" already sends everything).");
            }
            if (!list.isArray() || list.size() > MAX_ENTRIES) {
                return Parsed.refused(field + "." + member, "'delivery." + member
                        + "' must be an array of at most " + MAX_ENTRIES + " non-blank strings.");
            }
            Set<String> kept = new LinkedHashSet<>();
            for (JsonNode entry : list) {
                String problem = entryProblem(entry);
                if (problem != null) {
                    return Parsed.refused(field + "." + member, "'delivery." + member + "': " + problem);
                }
                String value = entry.textValue().strip();
                if (member.equals("path_prefixes")) {
                    value = PathNormalizer.normalize(value);
                    if (value.isEmpty()) {
                        return Parsed.refused(field + "." + member, "'delivery.path_prefixes': '"
                                + entry.textValue() + "' names no path under the worktree root (subscribe to"
                                + " the worktree instead).");
                    }
                }
                kept.add(value);
            }
            lists.add(List.copyOf(kept));
        }
        return new Parsed(new Delivery(mode.mode(), lists.get(0), lists.get(1), lists.get(2)), null, null);
    }

    private static Delivery ofMode(String text) {
        if ("broadcast".equals(text)) {
            return EVERYTHING;
        }
        return "scoped".equals(text) ? SCOPED_NOTHING_ELSE : null;
    }

    private static String entryProblem(JsonNode entry) {
        if (!entry.isTextual() || entry.textValue().isBlank()) {
            return "every entry must be a non-blank string.";
        }
        String s = entry.textValue();
        if (s.length() > MAX_ENTRY_LENGTH) {
            return "an entry is longer than " + MAX_ENTRY_LENGTH + " characters.";
        }
        if (!PathNormalizer.isPrintable(s)) {
            return "an entry holds a control or invisible character.";
        }
        return null;
    }
}
