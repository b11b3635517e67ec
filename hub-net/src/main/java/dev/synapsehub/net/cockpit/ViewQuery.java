package dev.synapsehub.net.cockpit;

import io.netty.handler.codec.http.QueryStringDecoder;

import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The filter and page of one cockpit view request, validated: {@code q} (case-insensitive
 * substring, at most 200 characters), {@code offset} (from 0) and {@code limit} (1..500); and
 * {@code status}, one board column to page through (a virtualised column asks for its own rows);
 * {@code online} (1, 0, true or false), presence's "online only". A parameter the view does not
 * take is refused like a bad value.
 *
 * @param q the lower-cased filter, "" for none
 * @param status the board column asked for, or null for every column
 */
record ViewQuery(String q, int offset, int limit, boolean onlineOnly, dev.synapsehub.core.board.BoardStatus status) {
    static final int MAX_LIMIT = 500;
    static final int DEFAULT_LIMIT = 100;
    static final int MAX_FILTER = 200;

    /** A request parameter that cannot be used: answered 400 naming the field. */
    static final class BadParameter extends RuntimeException {
        final String field;

        BadParameter(String field, String message) {
            super(message);
            this.field = field;
        }
    }

    /** The parameters of a list view: filter and page. */
    static final Set<String> PAGE = Set.of("q", "offset", "limit");

    /** The request's parameters, every one of them among {@code accepted} (else 400: a typo never filters silently). */
    static ViewQuery of(QueryStringDecoder query, Set<String> accepted) {
        for (String name : new java.util.TreeSet<>(query.parameters().keySet())) {
            if (!accepted.contains(name)) {
                throw new BadParameter(name, "'" + name + "' is not a parameter of this view"
                        + (accepted.isEmpty() ? "" : "; it takes " + String.join(", ", new java.util.TreeSet<>(accepted))));
            }
        }
        String q = first(query, "q", "");
        if (q.length() > MAX_FILTER) {
            throw new BadParameter("q", "the filter is longer than " + MAX_FILTER + " characters");
        }
        int offset = number(query, "offset", 0, 0, Integer.MAX_VALUE);
        int limit = number(query, "limit", DEFAULT_LIMIT, 1, MAX_LIMIT);
        String online = first(query, "online", "");
        String column = first(query, "status", "");
        dev.synapsehub.core.board.BoardStatus status = null;
        if (!column.isEmpty()) {
            status = dev.synapsehub.core.board.BoardStatus.fromWire(column.strip()).orElseThrow(() ->
                    new BadParameter("status", "'status' must be a board column: open, in_progress, blocked, done or cancelled"));
        }
        boolean onlineOnly = switch (online.strip()) {
            case "1", "true" -> true;
            case "", "0", "false" -> false;
            default -> throw new BadParameter("online", "'online' must be 1, 0, true or false");
        };
        return new ViewQuery(q.strip().toLowerCase(Locale.ROOT), offset, limit, onlineOnly, status);
    }

    /** True when the filter is empty or one of {@code fields} contains it. */
    boolean matches(String... fields) {
        if (q.isEmpty()) {
            return true;
        }
        for (String f : fields) {
            if (f != null && containsIgnoringCase(f)) {
                return true;
            }
        }
        return false;
    }

    /** True when the filter is empty, {@code a} contains it, or one of {@code more} does. */
    boolean matches(String a, List<String> more) {
        if (matches(a)) {
            return true;
        }
        for (String f : more) {
            if (containsIgnoringCase(f)) {
                return true;
            }
        }
        return false;
    }

    /** Without lower-casing a copy of every field of every row: a page scans a whole fleet. */
    private boolean containsIgnoringCase(String field) {
        int n = q.length();
        for (int i = 0, last = field.length() - n; i <= last; i++) {
            if (field.regionMatches(true, i, q, 0, n)) {
                return true;
            }
        }
        return false;
    }

    private static String first(QueryStringDecoder query, String name, String fallback) {
        List<String> values = query.parameters().get(name);
        return values == null || values.isEmpty() ? fallback : values.get(0);
    }

    private static int number(QueryStringDecoder query, String name, int fallback, int min, int max) {
        String raw = first(query, name, null);
        if (raw == null || raw.isEmpty()) {
            return fallback;
        }
        try {
            int v = Integer.parseInt(raw.strip());
            if (v < min || v > max) {
                throw new BadParameter(name, "'" + name + "' must be within " + min + ".." + max);
            }
            return v;
        } catch (NumberFormatException e) {
            throw new BadParameter(name, "'" + name + "' must be a whole number");
        }
    }
}
