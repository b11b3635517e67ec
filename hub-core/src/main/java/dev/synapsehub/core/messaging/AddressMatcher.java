package dev.synapsehub.core.messaging;

import dev.synapsehub.core.PythonWhitespace;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * Address matching of wire contract §8.1, as pure functions. A target is split on commas; each
 * non-empty part, trimmed as Python trims (U+00A0, U+2007, U+202F, U+0085 included), is a {@link ShellPattern}. A name is addressed by a part that matches
 * the name, its project prefix (the text before the first {@code /}), or one of its roles.
 */
public final class AddressMatcher {
    private AddressMatcher() {
    }

    /** The trimmed non-empty comma-separated parts of a target; empty for null. */
    public static List<String> parts(String target) {
        List<String> parts = new ArrayList<>();
        if (target == null) {
            return parts;
        }
        for (String raw : target.split(",", -1)) {
            String part = PythonWhitespace.strip(raw);
            if (!part.isEmpty()) {
                parts.add(part);
            }
        }
        return parts;
    }

    /** Whether the target addresses everyone: null, blank, or {@code all}. */
    public static boolean isBroadcast(String target) {
        return target == null || PythonWhitespace.isBlank(target) || PythonWhitespace.strip(target).equals("all");
    }

    /**
     * Whether the target is directed: non-empty, not {@code all}, containing no {@code *}. Only
     * directed chats dead-letter, replay from the mailbox, or defer receipts.
     */
    public static boolean isDirected(String target) {
        return !isBroadcast(target) && target.indexOf('*') < 0 && !parts(target).isEmpty();
    }

    /** The project prefix of a name: the text before the first {@code /}, or empty if there is none. */
    public static String projectPrefix(String name) {
        int slash = name.indexOf('/');
        return slash < 0 ? "" : name.substring(0, slash);
    }

    /** Whether {@code target} addresses the agent {@code name} holding {@code roles}. */
    public static boolean addresses(String target, String name, Collection<String> roles) {
        if (isBroadcast(target)) {
            return true;
        }
        String project = projectPrefix(name);
        for (String part : parts(target)) {
            ShellPattern pattern = ShellPattern.compile(part);
            if (pattern.matches(name) || (!project.isEmpty() && pattern.matches(project))) {
                return true;
            }
            for (String role : roles) {
                if (role != null && !role.isEmpty() && pattern.matches(role)) {
                    return true;
                }
            }
        }
        return false;
    }

    /** The logical owner of a sidecar name ({@code X-rx}, {@code X-pane-rx} stand for {@code X}); else the name. */
    public static String logicalName(String name) {
        if (name.endsWith("-pane-rx") && name.length() > "-pane-rx".length()) {
            return name.substring(0, name.length() - "-pane-rx".length());
        }
        if (name.endsWith("-rx") && name.length() > "-rx".length()) {
            return name.substring(0, name.length() - "-rx".length());
        }
        return name;
    }

    /** Whether a target part is a literal name (no pattern metacharacters). */
    public static boolean isLiteral(String part) {
        return part.indexOf('*') < 0 && part.indexOf('?') < 0 && part.indexOf('[') < 0;
    }
}
