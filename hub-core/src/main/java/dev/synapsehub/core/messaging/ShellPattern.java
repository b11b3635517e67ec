package dev.synapsehub.core.messaging;

import java.util.ArrayList;
import java.util.List;

/**
 * A case-sensitive shell-style pattern, as Python's {@code fnmatchcase}: {@code *} matches any
 * run of characters including {@code /}, {@code ?} one character, {@code [...]} a class (with
 * ranges), {@code [!...]} a negated class; a {@code [} without a closing {@code ]} is literal.
 * Matching is O(pattern × text) without backtracking blow-up.
 */
public final class ShellPattern {
    private sealed interface Token permits Star, One, Literal, CharClass {
    }

    private record Star() implements Token {
    }

    private record One() implements Token {
    }

    private record Literal(int codePoint) implements Token {
    }

    private record CharClass(boolean negated, int[] singles, int[] rangeLows, int[] rangeHighs) implements Token {
        boolean matches(int c) {
            boolean hit = false;
            for (int s : singles) {
                hit |= s == c;
            }
            for (int i = 0; i < rangeLows.length; i++) {
                hit |= rangeLows[i] <= c && c <= rangeHighs[i];
            }
            return hit != negated;
        }
    }

    private final List<Token> tokens;

    private ShellPattern(List<Token> tokens) {
        this.tokens = tokens;
    }

    /** Compiles a pattern; every string is a valid pattern. */
    public static ShellPattern compile(String pattern) {
        int[] p = pattern.codePoints().toArray();
        List<Token> out = new ArrayList<>();
        int i = 0;
        while (i < p.length) {
            int c = p[i];
            if (c == '*') {
                if (out.isEmpty() || !(out.get(out.size() - 1) instanceof Star)) {
                    out.add(new Star());
                }
                i++;
            } else if (c == '?') {
                out.add(new One());
                i++;
            } else if (c == '[') {
                int j = i + 1;
                if (j < p.length && p[j] == '!') {
                    j++;
                }
                if (j < p.length && p[j] == ']') {
                    j++;
                }
                while (j < p.length && p[j] != ']') {
                    j++;
                }
                if (j >= p.length) {
                    out.add(new Literal('['));
                    i++;
                } else {
                    out.add(charClass(p, i + 1, j));
                    i = j + 1;
                }
            } else {
                out.add(new Literal(c));
                i++;
            }
        }
        return new ShellPattern(List.copyOf(out));
    }

    /** The class between {@code [} (exclusive, at {@code from}) and {@code ]} (at {@code to}). */
    private static CharClass charClass(int[] p, int from, int to) {
        boolean negated = from < to && p[from] == '!';
        int k = negated ? from + 1 : from;
        List<Integer> singles = new ArrayList<>();
        List<Integer> lows = new ArrayList<>();
        List<Integer> highs = new ArrayList<>();
        while (k < to) {
            int c = p[k];
            if (k + 2 < to && p[k + 1] == '-') {
                if (c <= p[k + 2]) {
                    lows.add(c);
                    highs.add(p[k + 2]);
                }
                k += 3;
            } else {
                singles.add(c);
                k++;
            }
        }
        return new CharClass(negated, singles.stream().mapToInt(Integer::intValue).toArray(),
                lows.stream().mapToInt(Integer::intValue).toArray(),
                highs.stream().mapToInt(Integer::intValue).toArray());
    }

    /** Whether the whole of {@code text} matches. */
    public boolean matches(String text) {
        int[] s = text.codePoints().toArray();
        int ti = 0;
        int pi = 0;
        int starP = -1;
        int starT = -1;
        while (ti < s.length) {
            if (pi < tokens.size() && !(tokens.get(pi) instanceof Star) && single(tokens.get(pi), s[ti])) {
                pi++;
                ti++;
            } else if (pi < tokens.size() && tokens.get(pi) instanceof Star) {
                starP = pi++;
                starT = ti;
            } else if (starP >= 0) {
                pi = starP + 1;
                ti = ++starT;
            } else {
                return false;
            }
        }
        while (pi < tokens.size() && tokens.get(pi) instanceof Star) {
            pi++;
        }
        return pi == tokens.size();
    }

    private static boolean single(Token token, int c) {
        if (token instanceof One) {
            return true;
        } else if (token instanceof Literal l) {
            return l.codePoint() == c;
        } else if (token instanceof CharClass k) {
            return k.matches(c);
        }
        return false;
    }

    /** Whether {@code pattern} matches the whole of {@code text}. */
    public static boolean matches(String pattern, String text) {
        return compile(pattern).matches(text);
    }
}
