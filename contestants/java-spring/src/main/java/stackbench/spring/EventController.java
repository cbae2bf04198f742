package stackbench.spring;

import jakarta.servlet.http.HttpServletRequest;
import java.io.IOException;
import java.util.Map;
import java.util.Optional;
import org.springframework.context.annotation.Profile;
import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * The dummy and event-log scenarios (docs/scenarios.md): POST /events and GET
 * /events/count. Without a store (profile {@code dummy}) it validates and
 * answers {"count": 1}; with one it validates, writes, counts and answers the
 * count. Spring MVC answers HEAD for the GET mapping.
 */
@RestController
@Profile({"dummy", "event-log"})
class EventController {
    static final String ROUTES = "POST /events, GET /events/count";
    static final int MAX_BODY = 64 * 1024;
    private static final Map<String, Long> COUNT_ONE = Map.of("count", 1L);

    private final EventStore store; // null: dummy

    EventController(Optional<EventStore> store) {
        this.store = store.orElse(null);
    }

    @PostMapping("/events")
    Map<String, Long> post(HttpServletRequest req) throws IOException {
        // A declared Content-Length over 64 KiB is refused before the body is
        // read, a longer chunked body once it passes 64 KiB: 413 either way.
        if (req.getContentLengthLong() > MAX_BODY) {
            throw tooLarge();
        }
        String ct = req.getContentType();
        if (ct == null) {
            throw new ApiException(HttpStatus.BAD_REQUEST, "the request has no Content-Type; send Content-Type: application/json");
        }
        int semi = ct.indexOf(';');
        if (!(semi < 0 ? ct : ct.substring(0, semi)).trim().equalsIgnoreCase("application/json")) {
            throw new ApiException(HttpStatus.BAD_REQUEST, "Content-Type must be application/json, got \"" + ct + "\"");
        }
        byte[] body = req.getInputStream().readNBytes(MAX_BODY + 1);
        if (body.length > MAX_BODY) {
            throw tooLarge();
        }
        Event event;
        try {
            event = Event.parse(body);
        } catch (Event.BadEvent e) {
            throw new ApiException(HttpStatus.BAD_REQUEST, e.getMessage());
        }
        if (store == null) {
            return COUNT_ONE;
        }
        if (!event.hasTimestamp()) {
            event = new Event(event.type(), event.source(), event.value(), System.currentTimeMillis(), true);
        }
        try {
            return Map.of("count", store.append(event));
        } catch (EventStore.Unstorable e) {
            throw new ApiException(HttpStatus.BAD_REQUEST, e.getMessage());
        } catch (EventStore.Unavailable e) {
            throw new ApiException(HttpStatus.SERVICE_UNAVAILABLE, e.getMessage() + "; retry later");
        }
    }

    @GetMapping("/events/count")
    Map<String, Long> count() {
        if (store == null) {
            return COUNT_ONE;
        }
        try {
            return Map.of("count", store.count());
        } catch (EventStore.Unavailable e) {
            throw new ApiException(HttpStatus.SERVICE_UNAVAILABLE, e.getMessage() + "; retry later");
        }
    }

    private static ApiException tooLarge() {
        return new ApiException(HttpStatus.PAYLOAD_TOO_LARGE,
                "the request body is larger than 65536 bytes (64 KiB); send a smaller body");
    }
}
