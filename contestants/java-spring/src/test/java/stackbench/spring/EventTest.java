package stackbench.spring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class EventTest {
    private static Event parse(String body) throws Event.BadEvent {
        return Event.parse(body.getBytes(StandardCharsets.UTF_8));
    }

    /** The message of the refusal, which must name {@code field}. */
    private static void refused(String body, String field) {
        Event.BadEvent e = assertThrows(Event.BadEvent.class, () -> parse(body), body);
        assertTrue(e.getMessage().contains(field), () -> body + ": " + e.getMessage());
    }

    @Test
    void takesGoodEventsWithTheirDefaults() throws Exception {
        Event full = parse("{\"type\":\"page_view\",\"source\":\"web\",\"value\":1.5,\"timestamp\":1764460800000}");
        assertEquals(new Event("page_view", "web", 1.5, 1764460800000L, true), full);
        Event nulls = parse("{\"type\":\"click\",\"source\":null,\"value\":null,\"timestamp\":null}");
        assertEquals(new Event("click", "unknown", 1.0, 0, false), nulls);
        Event extra = parse("{\"type\":\"a.b:c-d_e\",\"extra\":{\"nested\":[1,2]},\"value\":-2e3}");
        assertEquals(-2000.0, extra.value());
        assertEquals(0, parse("{\"type\":\"t\",\"timestamp\":-0}").timestampMs());
        assertEquals(9007199254740991L, parse("{\"type\":\"t\",\"timestamp\":9007199254740991}").timestampMs());
        assertEquals("x".repeat(64), parse("{\"type\":\"" + "x".repeat(64) + "\"}").type());
        assertFalse(parse(" {\"type\":\"t\"} \n").hasTimestamp());
    }

    @Test
    void refusesBadBodies() {
        refused("", "not valid JSON");
        refused("{\"type\": \"page_view\"", "not valid JSON");
        refused("{\"type\":\"click\"} {}", "data after the object");
        refused("{\"type\":\"click\"} x", "not valid JSON");
        refused("[1,2]", "not an array");
        refused("\"x\"", "not a string");
        refused("{\"type\":\"click\",\"type\":\"view\"}", "`type` appears more than once");
        refused("{\"type\":\"click\",\"x\":1,\"x\":2}", "`x` appears more than once");
    }

    @Test
    void refusesBadFieldsNamingThem() {
        refused("{\"source\":\"web\"}", "`type` is required");
        refused("{\"type\":\"\"}", "`type`");
        refused("{\"type\":\"" + "a".repeat(65) + "\"}", "`type`");
        refused("{\"type\":\"page view!\"}", "`type`");
        refused("{\"type\":\"é\"}", "`type`");
        refused("{\"type\":null}", "`type`");
        refused("{\"type\":\"click\",\"source\":\"a/b\"}", "`source`");
        refused("{\"type\":\"click\",\"value\":\"1.5\"}", "`value`");
        refused("{\"type\":\"click\",\"value\":true}", "`value`");
        refused("{\"type\":\"click\",\"value\":1e400}", "`value`");
        refused("{\"type\":\"click\",\"timestamp\":-1}", "`timestamp`");
        refused("{\"type\":\"click\",\"timestamp\":9007199254740992}", "`timestamp`");
        refused("{\"type\":\"click\",\"timestamp\":99999999999999999999999}", "`timestamp`");
        refused("{\"type\":\"click\",\"timestamp\":1.5}", "`timestamp`");
        refused("{\"type\":\"click\",\"timestamp\":1e3}", "`timestamp`");
        refused("{\"type\":\"click\",\"timestamp\":\"1764460800000\"}", "`timestamp`");
    }
}
