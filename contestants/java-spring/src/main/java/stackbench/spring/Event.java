package stackbench.spring;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.util.HashSet;
import java.util.Set;

/**
 * The event of the dummy and event-log scenarios (docs/scenarios.md), parsed
 * and validated with Jackson's streaming parser (the JSON library under Spring
 * MVC and Vert.x alike), every error naming the field at fault. Binding with
 * either framework's defaults ({@code @RequestBody}, Vert.x's
 * {@code JsonObject}) would keep the last of two equal keys and turn a number
 * into whichever Java type fits it ({@code "1.5"} for a number, {@code 1.5}
 * for a long), so the body is walked token by token.
 *
 * <p>java-spring and java-vertx carry this file as two copies, their package
 * the one difference; crates/cli/tests/contestant_copies.rs keeps them so.
 *
 * @param hasTimestamp false when the body had none (or null): the server stamps it
 */
record Event(String type, String source, double value, long timestampMs, boolean hasTimestamp) {
    static final int MAX_NAME_LEN = 64;
    static final long TIMESTAMP_LIMIT = 1L << 53;
    private static final String NAME_RULE = "a string of 1-64 characters from A-Z a-z 0-9 _ . : -";
    private static final String TIMESTAMP_RULE = "an integer number of milliseconds since the Unix epoch, 0 <= t < 2^53";
    private static final String EXAMPLE = "send an object like {\"type\": \"page_view\"}";
    private static final JsonFactory JSON = new JsonFactory();

    /** Why a body is not a valid event; its message goes into the 400's {"error": ...} as it is. */
    static final class BadEvent extends Exception {
        BadEvent(String message) {
            super(message, null, false, false);
        }
    }

    /** One value of a known key, kept until the whole object has been read. */
    private record Raw(JsonToken token, String text, double number, boolean bigInteger) {}

    /** Parses and validates a request body. */
    static Event parse(byte[] body) throws BadEvent {
        Raw type = null;
        Raw source = null;
        Raw value = null;
        Raw timestamp = null;
        String duplicate = null;
        try (JsonParser p = JSON.createParser(body)) {
            JsonToken t = p.nextToken();
            if (t == null) {
                throw new BadEvent("the body is not valid JSON (it is empty); " + EXAMPLE);
            }
            if (t != JsonToken.START_OBJECT) {
                String kind = kind(t);
                p.skipChildren();
                if (p.nextToken() != null) {
                    throw trailing(p);
                }
                throw new BadEvent("the body must be a JSON object like {\"type\": \"page_view\"}, not " + kind);
            }
            Set<String> seen = new HashSet<>(8);
            while ((t = p.nextToken()) == JsonToken.FIELD_NAME) {
                String key = p.currentName();
                JsonToken v = p.nextToken();
                if (!seen.add(key) && duplicate == null) {
                    duplicate = key;
                }
                Raw raw = null;
                if (key.equals("type") || key.equals("source") || key.equals("value") || key.equals("timestamp")) {
                    boolean isNumber = v == JsonToken.VALUE_NUMBER_INT || v == JsonToken.VALUE_NUMBER_FLOAT;
                    raw = new Raw(v, p.getText(), isNumber ? p.getDoubleValue() : 0,
                            v == JsonToken.VALUE_NUMBER_INT && p.getNumberType() == JsonParser.NumberType.BIG_INTEGER);
                }
                p.skipChildren();
                switch (key) {
                    case "type" -> type = type == null ? raw : type;
                    case "source" -> source = source == null ? raw : source;
                    case "value" -> value = value == null ? raw : value;
                    case "timestamp" -> timestamp = timestamp == null ? raw : timestamp;
                    default -> { }
                }
            }
            if (p.nextToken() != null) {
                throw trailing(p);
            }
        } catch (JsonProcessingException e) {
            // Jackson's message, without its "(start marker at [Source: ...])" aside.
            String why = e.getOriginalMessage().replaceAll("\\s*\\(start marker at \\[Source: [^\\]]*\\]\\)", "");
            throw new BadEvent("the body is not valid JSON (" + why + "); " + EXAMPLE);
        } catch (IOException e) {
            throw new BadEvent("the body could not be read (" + e.getMessage() + "); " + EXAMPLE);
        }
        if (duplicate != null) {
            throw new BadEvent("field `" + duplicate + "` appears more than once; send it once");
        }
        if (type == null) {
            throw new BadEvent("field `type` is required: " + NAME_RULE);
        }
        String typeName = name("type", type);
        String sourceName = isNull(source) ? "unknown" : name("source", source);
        double v = isNull(value) ? 1.0 : number(value);
        if (isNull(timestamp)) {
            return new Event(typeName, sourceName, v, 0, false);
        }
        return new Event(typeName, sourceName, v, millis(timestamp), true);
    }

    private static BadEvent trailing(JsonParser p) {
        return new BadEvent("the body is not valid JSON (data after the object at byte "
                + p.currentTokenLocation().getByteOffset() + "); " + EXAMPLE);
    }

    private static boolean isNull(Raw raw) {
        return raw == null || raw.token == JsonToken.VALUE_NULL;
    }

    /** The JSON type of a value, with an article, for messages. */
    private static String kind(JsonToken t) {
        return switch (t) {
            case START_OBJECT -> "an object";
            case START_ARRAY -> "an array";
            case VALUE_STRING -> "a string";
            case VALUE_NUMBER_INT, VALUE_NUMBER_FLOAT -> "a number";
            case VALUE_TRUE, VALUE_FALSE -> "a boolean";
            default -> "null";
        };
    }

    private static boolean isNameChar(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                || c == '_' || c == '.' || c == ':' || c == '-';
    }

    /** Validates a {@code type} or {@code source}. */
    private static String name(String field, Raw raw) throws BadEvent {
        if (raw.token != JsonToken.VALUE_STRING) {
            throw new BadEvent("field `" + field + "` must be " + NAME_RULE + ", not " + kind(raw.token));
        }
        String s = raw.text;
        for (int i = 0; i < s.length(); i++) {
            if (!isNameChar(s.charAt(i))) {
                throw new BadEvent("field `" + field + "` may only contain A-Z a-z 0-9 _ . : -; found '"
                        + new String(Character.toChars(s.codePointAt(i))) + "' at character " + s.codePointCount(0, i));
            }
        }
        if (s.isEmpty() || s.length() > MAX_NAME_LEN) {
            throw new BadEvent("field `" + field + "` must be 1-64 characters long, got " + s.length());
        }
        return s;
    }

    /** Validates a {@code value}: a finite number. */
    private static double number(Raw raw) throws BadEvent {
        if (raw.token != JsonToken.VALUE_NUMBER_INT && raw.token != JsonToken.VALUE_NUMBER_FLOAT) {
            throw new BadEvent("field `value` must be a finite number, not " + kind(raw.token));
        }
        if (Double.isInfinite(raw.number)) {
            throw new BadEvent("field `value` must be a finite number, got " + raw.text);
        }
        return raw.number;
    }

    /** Validates a {@code timestamp}: an integer in 0 <= t < 2^53. */
    private static long millis(Raw raw) throws BadEvent {
        if (raw.token == JsonToken.VALUE_NUMBER_FLOAT) {
            throw new BadEvent("field `timestamp` must be an integer number of milliseconds, got " + raw.text);
        }
        if (raw.token != JsonToken.VALUE_NUMBER_INT) {
            throw new BadEvent("field `timestamp` must be " + TIMESTAMP_RULE + ", not " + kind(raw.token));
        }
        long t = raw.bigInteger ? -1 : Long.parseLong(raw.text);
        if (raw.bigInteger || t < 0 || t >= TIMESTAMP_LIMIT) {
            throw new BadEvent("field `timestamp` must be in 0 <= t < 2^53 (9007199254740992), got " + raw.text);
        }
        return t;
    }
}
