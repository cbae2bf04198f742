package stackbench.spring;

/**
 * The ids of a db-read request, from its raw query string ({@code a=1&b=2},
 * not percent-decoded: an id is decimal digits only). Absent parameters
 * default to 1 and 2, other parameters are ignored, one given twice is refused.
 */
record Ids(int a, int b) {
    /** The data set's ids: 1..=ROWS (docs/scenarios.md). */
    static final int ROWS = 10_000;

    static final class BadIds extends Exception {
        BadIds(String message) {
            super(message, null, false, false);
        }
    }

    int lo() {
        return Math.min(a, b);
    }

    int hi() {
        return Math.max(a, b);
    }

    static Ids parse(String query) throws BadIds {
        int a = 1;
        int b = 2;
        boolean seenA = false;
        boolean seenB = false;
        if (query != null) {
            for (String pair : query.split("&", -1)) {
                if (pair.isEmpty()) {
                    continue;
                }
                int eq = pair.indexOf('=');
                String key = eq < 0 ? pair : pair.substring(0, eq);
                String value = eq < 0 ? "" : pair.substring(eq + 1);
                boolean isA = key.equals("a");
                if (!isA && !key.equals("b")) {
                    continue;
                }
                if (isA ? seenA : seenB) {
                    throw new BadIds("query parameter `" + key + "` appears more than once; send it once");
                }
                int id = id(value);
                if (id < 1) {
                    throw new BadIds("query parameter `" + key + "` must be an integer in 1..=2147483647, got \""
                            + value + "\"");
                }
                if (isA) {
                    a = id;
                    seenA = true;
                } else {
                    b = id;
                    seenB = true;
                }
            }
        }
        return new Ids(a, b);
    }

    /** Decimal digits in 1..=2^31-1, or -1. */
    private static int id(String s) {
        if (s.isEmpty() || s.length() > 12) {
            return -1;
        }
        long n = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < '0' || c > '9') {
                return -1;
            }
            n = n * 10 + (c - '0');
        }
        return n >= 1 && n <= Integer.MAX_VALUE ? (int) n : -1;
    }
}
